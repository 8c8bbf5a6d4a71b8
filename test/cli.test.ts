// The `hearth` command, run as a real child process: `admin user create|change-password|list|
// delete` on a data directory that does not exist yet (embedded database), or on a fresh
// PostgreSQL database when TEST_DATABASE_URL is set; then a server started on the same data, where
// the accounts made by the CLI sign in.

import { existsSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Settings from "../src/config/Settings.ts"
import * as Database from "../src/db/Database.ts"
import {
  CLI,
  type CliWorkspace,
  cliWorkspace,
  expectOneLineError,
  NODE,
  type CliResult as Result,
  runProcess as spawn
} from "./support/cli.ts"
import { basic, freshPostgresDatabase, type Hearth, json, startHearth } from "./support/hearth.ts"

const testDatabaseUrl = process.env.TEST_DATABASE_URL ?? ""
const onPostgres = testDatabaseUrl !== ""
// For the further databases the migrate tests make (the workspace has its own).
const scope = Effect.runSync(Scope.make())
let cli: CliWorkspace
let tmp: string
let dataDir: string
let env: NodeJS.ProcessEnv
let database: Record<string, string>

beforeAll(async () => {
  cli = await cliWorkspace("hearth-cli-", ["not", "yet", "data"])
  ;({ tmp, dataDir, env, database } = cli)
})
afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await cli?.close()
})

const hearth = (...args: ReadonlyArray<string>) => cli.run(...args)

/**
 * Runs commands that change nothing (refused ones): at once on PostgreSQL; one after the other on
 * the embedded database, whose data directory one process holds at a time.
 */
const refusals = (commands: ReadonlyArray<() => Promise<Result>>): Promise<Array<Result>> =>
  onPostgres
    ? Promise.all(commands.map((command) => command()))
    : commands.reduce(async (done, command) => [...(await done), await command()], Promise.resolve([] as Array<Result>))

/** The last `admin user list` output, for the tests after it (ids, names). */
let listed = ""

describe("hearth --help", () => {
  it("is available on every command", async () => {
    const commands = [
      [],
      ["admin"],
      ["admin", "user"],
      ["admin", "user", "create"],
      ["admin", "user", "change-password"],
      ["admin", "user", "list"],
      ["admin", "user", "delete"]
    ]
    const results = await Promise.all(commands.map((command) => hearth(...command, "--help")))
    results.forEach((result, i) => {
      const path = ["hearth", ...commands[i]!].join(" ")
      expect(result.code, path).toBe(0)
      expect(result.stdout, path).toContain(`USAGE\n  ${path}`)
    })
    expect(results[3]!.stdout).toContain("--must-change-password")
    expect(results[6]!.stdout).toContain("--purge")
    expect(existsSync(dataDir)).toBe(false) // help touches nothing
  }, 60_000)

  it("works as `npx hearth` in the checkout", async () => {
    const result = await spawn("npx", ["hearth", "--help"], env)
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("SUBCOMMANDS")
    expect(result.stdout).toMatch(/^\s+admin\s/m)
  }, 60_000)

  it("answers a command line that does not parse with one line and exit code 1", async () => {
    // Refused while parsing, before any database is opened: both at once.
    const [missing, unknown] = await Promise.all([
      hearth("admin", "user", "create", "--username", "x"),
      hearth("admin", "user", "list", "--bogus")
    ])
    expectOneLineError(missing!, "Missing required flag")
    expectOneLineError(unknown!, "--bogus")
  }, 60_000)
})

describe("hearth admin user", () => {
  let server: Hearth | undefined
  afterAll(() => server?.close())

  it("creates the first admin before the first start, creating the data directory and database", async () => {
    const result = await hearth(
      "admin",
      "user",
      "create",
      "--username",
      "Root",
      "--password",
      "first-password",
      "--email",
      "root@example.com",
      "--admin"
    )
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    expect(result.stdout.trim()).toBe("New user 'Root' has been successfully created!")
    expect(existsSync(dataDir)).toBe(true)
  }, 60_000)

  it("creates more accounts, with and without the must-change-password default", async () => {
    const bob = await hearth(
      "admin",
      "user",
      "create",
      "-u",
      "bob",
      "-p",
      "bob-password",
      "-e",
      "bob@example.com",
      "--full-name",
      "Bob B",
      "--restricted"
    )
    expect(bob.code, bob.stderr).toBe(0)
    const carol = await hearth(
      "admin",
      "user",
      "create",
      "--username",
      "carol",
      "--password",
      "carol-password",
      "--email",
      "carol@example.com",
      "--must-change-password=false"
    )
    expect(carol.code, carol.stderr).toBe(0)
  }, 60_000)

  it("refuses invalid, reserved and duplicate accounts with one line and exit code 1", async () => {
    const create =
      (name: string, email: string, password = "long-enough") =>
      () =>
        hearth("admin", "user", "create", "--username", name, "--password", password, "--email", email)
    const results = await refusals([
      create("root", "other@example.com"),
      create("bad name", "bad@example.com"),
      create("admin", "admin@example.com"),
      create("dave", "not-an-email"),
      create("dave", "BOB@example.com"),
      create("dave", "dave@example.com", "short")
    ])
    expectOneLineError(results[0]!, "user already exists [name: root]")
    expectOneLineError(results[1]!, "[UserName]: must be valid")
    expectOneLineError(results[2]!, "name is reserved")
    expectOneLineError(results[3]!, "[Email]: e-mail invalid")
    expectOneLineError(results[4]!, "e-mail already in use")
    expectOneLineError(results[5]!, "password must be at least 8 characters")
  }, 120_000)

  it("lists the accounts as a table, or the admins only", async () => {
    const all = await hearth("admin", "user", "list")
    expect(all.code, all.stderr).toBe(0)
    listed = all.stdout
    const rows = all.stdout
      .trim()
      .split("\n")
      .map((line) => line.trim().split(/\s+/))
    expect(rows[0]).toEqual(["ID", "Username", "Email", "IsActive", "IsAdmin", "2FA"])
    expect(rows.slice(1).map((r) => [r[1], r[2], r[3], r[4], r[5]])).toEqual([
      ["Root", "root@example.com", "true", "true", "false"],
      ["bob", "bob@example.com", "true", "false", "false"],
      ["carol", "carol@example.com", "true", "false", "false"]
    ])
    const admins = await hearth("admin", "user", "list", "--admin")
    expect(
      admins.stdout
        .trim()
        .split("\n")
        .map((line) => line.trim().split(/\s+/).slice(1))
    ).toEqual([
      ["Username", "Email", "IsActive"],
      ["Root", "root@example.com", "true"]
    ])
  }, 60_000)

  it("changes a password", async () => {
    const result = await hearth(
      "admin",
      "user",
      "change-password",
      "--username",
      "root",
      "--password",
      "second-password"
    )
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout.trim()).toBe("Root's password has been successfully updated!")
    expectOneLineError(
      await hearth("admin", "user", "change-password", "--username", "nobody", "--password", "second-password"),
      "user does not exist [name: nobody]"
    )
  }, 60_000)

  it("keeps stdout for the answer: what the services log goes to stderr, at [log] LEVEL", async () => {
    const result = await spawn(NODE, [CLI, "admin", "user", "list"], { ...env, HEARTH__log__LEVEL: "Debug" })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout.trim().split("\n")[0]!.trim().split(/\s+/)).toEqual([
      "ID",
      "Username",
      "Email",
      "IsActive",
      "IsAdmin",
      "2FA"
    ])
    expect(result.stdout).not.toContain("DEBUG")
    // The job runner's start-up is logged at Debug, and heard there.
    expect(result.stderr).toContain("DEBUG")
  }, 60_000)

  it("runs WebAssembly by Liftoff only, as serve does, without serve's heap settings", async () => {
    // V8's optimizing compiler took a short command to a 700–760 MB peak (≈ 300 MB without) for
    // the embedded database's WASM (src/cli.ts).
    const file = join(tmp, "exec-argv.jsonl")
    const hook = resolve(import.meta.dirname, "support/exec-argv.ts")
    const result = await spawn(NODE, [CLI, "admin", "user", "list"], {
      ...env,
      NODE_OPTIONS: `--import=${hook}`,
      EXEC_ARGV_FILE: file
    })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain("root@example.com")
    const runs = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Array<string>)
    // One process (re-executed in place: execve keeps the pid and runs no exit handler of the first).
    expect(runs).toHaveLength(1)
    expect(runs[0]).toContain("--liftoff-only")
    expect(runs[0]).not.toContain("--max-semi-space-size=8")
    // Help opens no database: printed by the first process, not worth a second start.
    const help = await spawn(NODE, [CLI, "admin", "user", "list", "--help"], {
      ...env,
      NODE_OPTIONS: `--import=${hook}`,
      EXEC_ARGV_FILE: file
    })
    expect(help.code, help.stderr).toBe(0)
    expect(readFileSync(file, "utf8").trim().split("\n").at(-1)).toBe("[]")
  }, 60_000)

  it("leaves the server's durable jobs alone: a command writes nothing to the job runner's tables", async () => {
    // After the commands above (create, list, change-password), none of them run by a server.
    const messages = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const context = yield* Layer.build(
            Database.clientLayer.pipe(
              Layer.provide(
                Settings.layerValue(Settings.resolveSettings({ server: { APP_DATA_PATH: dataDir }, database }))
              )
            )
          )
          const sql = Context.get(context, SqlClient)
          const table = yield* sql<{ name: string | null }>`SELECT to_regclass('cluster_messages')::text AS name`
          if (table[0]?.name === null) return 0
          const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM cluster_messages`
          return rows[0]!.n
        })
      )
    )
    // A command that read and wrote the server's job tables could start (and then abandon) a due
    // mirror sync or an unfinished fork, and left a timer of its own there.
    expect(messages).toBe(0)
  }, 60_000)

  it("deletes by name or id, and refuses to delete the last admin", async () => {
    const carolId = /^(\d+)\s+carol\s/m.exec(listed)![1]!
    const refused = await refusals([
      () => hearth("admin", "user", "delete"),
      () => hearth("admin", "user", "delete", "--username", "nobody"),
      () => hearth("admin", "user", "delete", "--id", carolId, "--username", "bob"),
      () => hearth("admin", "user", "delete", "--email", "bob@example.com", "--username", "carol")
    ])
    expectOneLineError(refused[0]!, "--username, --id or --email")
    expectOneLineError(refused[1]!, "user does not exist")
    expectOneLineError(refused[2]!, `the user with name: bob has id`)
    expectOneLineError(refused[3]!, "the user with email: bob@example.com is bob, not carol")
    const deleted = await hearth("admin", "user", "delete", "--id", carolId)
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(deleted.stdout.trim()).toBe("User 'carol' has been deleted.")
    expectOneLineError(
      await hearth("admin", "user", "delete", "--username", "Root"),
      "can not delete the last admin user"
    )
  }, 120_000)

  it("leaves accounts that sign in on a server started on the same data", async () => {
    server = await startHearth({ server: { APP_DATA_PATH: dataDir }, database })
    const me = await fetch(server.api("/user"), { headers: { authorization: basic("root", "second-password") } })
    expect(me.status).toBe(200)
    expect(await json(me)).toMatchObject({ login: "Root", is_admin: true, email: "root@example.com" })
    expect(
      (await fetch(server.api("/user"), { headers: { authorization: basic("root", "first-password") } })).status
    ).toBe(401)
    // Not the first account, no flag: it must change its password first (Forgejo's default).
    const bob = await fetch(server.api("/user"), { headers: { authorization: basic("bob", "bob-password") } })
    expect(bob.status).toBe(403)
    expect((await json(bob)).message).toContain("You must change your password")
    const asRoot = await fetch(server.api("/users/bob"), {
      headers: { authorization: basic("root", "second-password") }
    })
    expect(await json(asRoot)).toMatchObject({ full_name: "Bob B", restricted: true, is_admin: false })
    expect((await fetch(server.api("/users/carol"))).status).toBe(404)
  }, 120_000)

  it.skipIf(onPostgres)(
    "refuses to open an embedded data directory a running server holds",
    async () => {
      expect(server).toBeDefined()
      expectOneLineError(await hearth("admin", "user", "list"), "is in use by another Hearth process")
    },
    60_000
  )
})

describe("hearth migrate", () => {
  it("brings a fresh database up to date, then finds nothing to do", async () => {
    const dir = join(tmp, "migrate-only")
    const own: NodeJS.ProcessEnv = { ...env, HEARTH__server__APP_DATA_PATH: dir }
    if (onPostgres)
      own.DATABASE_URL = await Effect.runPromise(Scope.provide(freshPostgresDatabase(testDatabaseUrl), scope))
    const first = await spawn(NODE, [CLI, "migrate"], own)
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toMatch(/^Applied \d+ migration\(s\): 1 foundation/)
    const again = await spawn(NODE, [CLI, "migrate"], own)
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout.trim()).toBe("The database schema is up to date.")
  }, 120_000)

  it.skipIf(!onPostgres)(
    "creates a missing PostgreSQL database (serve only says how), when the role may",
    async () => {
      const url = await Effect.runPromise(
        Scope.provide(freshPostgresDatabase(testDatabaseUrl, { create: false }), scope)
      )
      const own: NodeJS.ProcessEnv = { ...env, HEARTH__server__APP_DATA_PATH: join(tmp, "missing"), DATABASE_URL: url }
      const name = new URL(url).pathname.slice(1)
      expectOneLineError(await spawn(NODE, [CLI, "serve"], own), `database "${name}" does not exist; create it`)
      const first = await spawn(NODE, [CLI, "migrate"], own)
      expect(first.code, first.stderr).toBe(0)
      expect(first.stdout).toMatch(new RegExp(`^Created the database ${name}\\.\nApplied \\d+ migration`))
      const again = await spawn(NODE, [CLI, "migrate"], own)
      expect(again.stdout.trim()).toBe("The database schema is up to date.")
    },
    120_000
  )

  it("reports an invalid setting in one line", async () => {
    expectOneLineError(
      await spawn(NODE, [CLI, "migrate"], { ...env, HEARTH__database__DB_TYPE: "mysql" }),
      "[database] DB_TYPE"
    )
  }, 60_000)
})
