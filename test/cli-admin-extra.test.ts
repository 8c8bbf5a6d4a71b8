// `hearth admin user must-change-password|generate-access-token|reset-mfa` (Forgejo's CLI commands
// of the same names), run as real child processes on one data directory (embedded database) or a
// fresh PostgreSQL database when TEST_DATABASE_URL is set; a server started on the same data
// afterwards shows what they did. One spawn per command (the CLI opens the database itself).
import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Secret, TOTP } from "otpauth"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type CliResult, type CliWorkspace, cliWorkspace, expectOneLineError } from "./support/cli.ts"
import { basic, type Hearth, json, startHearth } from "./support/hearth.ts"

let cli: CliWorkspace
const hearth = (...args: ReadonlyArray<string>): Promise<CliResult> => cli.run(...args)
const succeeds = async (...args: ReadonlyArray<string>) => {
  const result = await hearth(...args)
  expect(result.code, result.stderr).toBe(0)
  return result.stdout.trim()
}
/** A server on the CLI's data for the time of `check` (the embedded database allows one process). */
const withServer = async (check: (server: Hearth) => Promise<void>) => {
  const server = await startHearth({ server: { APP_DATA_PATH: cli.dataDir }, database: cli.database })
  try {
    await check(server)
  } finally {
    await server.close()
  }
}

beforeAll(async () => {
  cli = await cliWorkspace("hearth-cli-extra-", ["data"], { timeoutMs: 240_000, migrated: true })
  for (const name of ["root", "alice", "bob"]) {
    await succeeds(
      "admin",
      "user",
      "create",
      "--username",
      name,
      "--password",
      `${name}-password`,
      "--email",
      `${name}@example.com`,
      "--must-change-password=false",
      ...(name === "root" ? ["--admin"] : [])
    )
  }
}, 900_000)
afterAll(() => cli?.close())

describe("hearth admin user (Forgejo's other user commands)", () => {
  it("explains every new command in --help", async () => {
    const commands = ["must-change-password", "generate-access-token", "reset-mfa"]
    const results = await Promise.all(commands.map((command) => hearth("admin", "user", command, "--help")))
    results.forEach((result, i) => {
      expect(result.code, commands[i]).toBe(0)
      expect(result.stdout).toContain(`USAGE\n  hearth admin user ${commands[i]}`)
    })
    expect(results[0]!.stdout).toContain("--exclude")
    expect(results[1]!.stdout).toContain("--scopes")
    expect(results[1]!.stdout).toContain("--raw")
  }, 300_000)

  it("must-change-password sets or unsets the requirement for named accounts or all but the excluded", async () => {
    expect(await succeeds("admin", "user", "must-change-password", "--all", "--exclude", "root")).toBe(
      "Updated 2 users setting MustChangePassword to true"
    )
    expect(await succeeds("admin", "user", "must-change-password", "--unset", "bob")).toBe(
      "Updated 1 users setting MustChangePassword to false"
    )
    // Nothing changes when one name is unknown.
    expectOneLineError(
      await hearth("admin", "user", "must-change-password", "--unset", "alice", "nobody"),
      "user does not exist"
    )
    expectOneLineError(await hearth("admin", "user", "must-change-password"), "name the accounts, or give --all")
    await withServer(async (server) => {
      const as = (name: string) =>
        fetch(server.api("/user"), { headers: { authorization: basic(name, `${name}-password`) } })
      expect((await as("root")).status).toBe(200)
      const alice = await as("alice")
      expect(alice.status).toBe(403)
      expect((await json(alice)).message).toContain("You must change your password")
      expect((await as("bob")).status).toBe(200)
    })
    expect(await succeeds("admin", "user", "must-change-password", "--unset", "alice")).toBe(
      "Updated 1 users setting MustChangePassword to false"
    )
  }, 900_000)

  it("generate-access-token prints a working token with the scopes asked for (alone with --raw)", async () => {
    const full = await succeeds(
      "admin",
      "user",
      "generate-access-token",
      "-u",
      "alice",
      "-t",
      "ci",
      "--scopes",
      "read:user"
    )
    expect(full).toMatch(/^Access token was successfully created: [0-9a-f]{40}$/)
    const token = full.split(": ")[1]!
    const raw = await succeeds("admin", "user", "generate-access-token", "--username", "alice", "--raw")
    expect(raw).toMatch(/^[0-9a-f]{40}$/)
    expectOneLineError(
      await hearth("admin", "user", "generate-access-token", "-u", "alice", "-t", "ci"),
      "access token name has been used already"
    )
    expectOneLineError(await hearth("admin", "user", "generate-access-token", "-u", "nobody"), "user does not exist")
    await withServer(async (server) => {
      const me = await fetch(server.api("/user"), { headers: { authorization: `token ${token}` } })
      expect(me.status).toBe(200)
      expect((await json(me)).login).toBe("alice")
      // read:user only: writing a repository is refused.
      const write = await fetch(server.api("/user/repos"), {
        method: "POST",
        headers: { authorization: `token ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "nope" })
      })
      expect(write.status).toBe(403)
      const all = await fetch(server.api("/user/repos"), {
        method: "POST",
        headers: { authorization: `token ${raw}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "yes" })
      })
      expect(all.status).toBe(201)
    })
  }, 900_000)

  it("reset-mfa removes an account's second factor", async () => {
    await withServer(async (server) => {
      const auth = { authorization: basic("bob", "bob-password"), "content-type": "application/json" }
      const enrolled = await fetch(server.api("/user/twofa"), { method: "POST", headers: auth })
      expect(enrolled.status).toBe(201)
      const { secret } = (await json(enrolled)) as { secret: string }
      const passcode = new TOTP({ secret: Secret.fromBase32(secret) }).generate()
      const verified = await fetch(server.api("/user/twofa/verify"), {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ passcode })
      })
      expect(verified.status, await verified.clone().text()).toBeLessThan(300)
    })
    const twoFactorOf = async (name: string) => {
      const rows = (await succeeds("admin", "user", "list")).split("\n").map((line) => line.trim().split(/\s+/))
      return rows.find((row) => row[1] === name)![5]
    }
    expect(await twoFactorOf("bob")).toBe("true")
    expect(await succeeds("admin", "user", "reset-mfa", "--username", "bob")).toBe(
      "bob's two factor authentication settings have been removed!"
    )
    expect(await twoFactorOf("bob")).toBe("false")
    expectOneLineError(await hearth("admin", "user", "reset-mfa", "-u", "nobody"), "user does not exist")
  }, 900_000)
})

describe("one-off commands", () => {
  it("leave the blob store's sweep to the server: a crashed upload's leftover stays until a server starts", async () => {
    const tmp = join(cli.dataDir, "storage", "tmp")
    mkdirSync(tmp, { recursive: true })
    const leftover = join(tmp, "upload-of-a-crashed-server")
    writeFileSync(leftover, "leftover")
    const longAgo = new Date(Date.now() - 2 * 60 * 60 * 1000)
    utimesSync(leftover, longAgo, longAgo)
    await succeeds("admin", "user", "list")
    expect(existsSync(leftover)).toBe(true)
    // The server's sweep does remove it (src/main.ts `announce`, test/storage.test.ts).
    await withServer(async () => {
      await expect.poll(() => existsSync(leftover), { timeout: 20_000 }).toBe(false)
    })
  }, 300_000)
})
