// Git over SSH (issue 5 item 4): the built-in server, driven by the real `ssh` and `git` clients
// with `ssh-keygen` keys: user keys and deploy keys, the same access rules as smart HTTP,
// GIT_PROTOCOL (v2), archives, and everything else refused.
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { hostKey, parseGitCommand } from "../src/ssh/Server.ts"
import { basic, createUser, freePort, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { gitSshCommand, keygen as sshKeygen, sshArgs as sshOptions } from "./support/ssh.ts"

let hearth: Hearth
let port: number
const dir = mkdtempSync(join(tmpdir(), "hearth-git-ssh-"))

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command without blocking the event loop (the server answers in this same process). */
const sh = (
  command: string,
  args: ReadonlyArray<string>,
  options: { cwd?: string | undefined; env?: Record<string, string>; input?: string } = {}
) =>
  new Promise<Ran>((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? dir, env: { ...process.env, ...options.env } })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
    // git or ssh may exit before reading its input.
    child.stdin.on("error", () => {})
    child.stdin.end(options.input ?? "")
  })

let n = 0
const keygen = () => sshKeygen(dir)
const sshArgs = (key: string) => sshOptions(key, port)
const gitWith = (key: string, args: ReadonlyArray<string>, cwd?: string, env: Record<string, string> = {}) =>
  sh("git", [...args], {
    cwd,
    env: {
      GIT_SSH_COMMAND: gitSshCommand(key, port),
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_AUTHOR_NAME: "T",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "T",
      GIT_COMMITTER_EMAIL: "t@example.com",
      ...env
    }
  })
const url = (path: string, user = "git") => `ssh://${user}@127.0.0.1:${port}/${path}`

/** Clones, commits a file and pushes; returns the push's result. */
const commitAndPush = async (key: string, repo: string, file: string) => {
  const work = mkdtempSync(join(dir, "work-"))
  const cloned = await gitWith(key, ["clone", url(`${repo}.git`), work])
  if (cloned.code !== 0) return cloned
  writeFileSync(join(work, file), `${file}\n`)
  await gitWith(key, ["add", file], work)
  await gitWith(key, ["commit", "-m", `add ${file}`], work)
  return gitWith(key, ["push", "origin", "HEAD:main"], work)
}

const addKey = async (user: string, pub: string) =>
  expect((await request(hearth, "POST", "/user/keys", basic(user), { title: `k${++n}`, key: pub })).status).toBe(201)

type Key = { readonly file: string; readonly pub: string }
let alice: Key
let bob: Key
let carol: Key

beforeAll(async () => {
  port = await freePort()
  hearth = await startHearth({
    server: {
      START_SSH_SERVER: "true",
      SSH_LISTEN_HOST: "127.0.0.1",
      SSH_LISTEN_PORT: String(port),
      SSH_PORT: String(port),
      DOMAIN: "127.0.0.1"
    }
  })
  for (const username of ["alice", "bob", "carol"]) await createUser(hearth, { username })
  for (const [name, extra] of [
    ["demo", { auto_init: true }],
    ["fresh", {}],
    ["secret", { auto_init: true, private: true }],
    ["arch", { auto_init: true }],
    ["other", { auto_init: true }]
  ] as const) {
    expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name, ...extra })).status).toBe(201)
  }
  expect((await request(hearth, "PATCH", "/repos/alice/arch", basic("alice"), { archived: true })).status).toBe(200)
  alice = await keygen()
  bob = await keygen()
  carol = await keygen()
  await addKey("alice", alice.pub)
  await addKey("bob", bob.pub)
  await addKey("carol", carol.pub)
  // bob reads alice/secret; carol is a stranger to it.
  expect(
    (await request(hearth, "PUT", "/repos/alice/secret/collaborators/bob", basic("alice"), { permission: "read" }))
      .status
  ).toBe(204)
}, 60_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("host key and addresses", () => {
  it("generates the ed25519 host key into APP_DATA_PATH on first start and reuses it", () => {
    const file = join(hearth.settings.server.APP_DATA_PATH, "ssh", "hearth_host_ed25519_key")
    expect(existsSync(file)).toBe(true)
    const first = readFileSync(file, "utf8")
    expect(first).toContain("OPENSSH PRIVATE KEY")
    expect(hostKey(hearth.settings.server.APP_DATA_PATH)).toBe(first)
  })

  it("ssh_url in Repository JSON is the address the server answers on", async () => {
    const repo = await json(await request(hearth, "GET", "/repos/alice/demo", basic("alice")))
    expect(repo.ssh_url).toBe(url("alice/demo.git"))
  })

  it("reads the command forms git sends", () => {
    expect(parseGitCommand("git-upload-pack '/alice/demo.git'")).toEqual({
      service: "upload-pack",
      owner: "alice",
      repo: "demo"
    })
    expect(parseGitCommand("git-receive-pack 'alice/demo.git'")).toEqual({
      service: "receive-pack",
      owner: "alice",
      repo: "demo"
    })
    expect(parseGitCommand("git upload-archive alice/demo")).toEqual({
      service: "upload-archive",
      owner: "alice",
      repo: "demo"
    })
    expect(parseGitCommand("git-upload-pack '/alice/../x.git'")).toBeUndefined()
    expect(parseGitCommand("git-upload-pack '/a/b/c.git'")).toBeUndefined()
    expect(parseGitCommand("ls -la")).toBeUndefined()
  })
})

describe("git over SSH", () => {
  it("clones and pushes with a registered key; the push is recorded as over HTTP", async () => {
    const pushed = await commitAndPush(alice.file, "alice/fresh", "README.md")
    expect(pushed.code, pushed.stderr).toBe(0)
    const repo = await json(await request(hearth, "GET", "/repos/alice/fresh", basic("alice")))
    expect(repo.empty).toBe(false)
    const branches = await json(await request(hearth, "GET", "/repos/alice/fresh/branches", basic("alice")))
    expect(branches.map((b: any) => b.name)).toEqual(["main"])
  })

  it("honours GIT_PROTOCOL: protocol v2 with git's own ssh command, and scp-like addresses", async () => {
    const v2 = await gitWith(alice.file, ["-c", "protocol.version=2", "ls-remote", url("alice/demo.git")], undefined, {
      GIT_TRACE_PACKET: "1"
    })
    expect(v2.code, v2.stderr).toBe(0)
    expect(v2.stdout).toContain("refs/heads/main")
    expect(v2.stderr).toContain("version 2")
    const v0 = await gitWith(alice.file, ["-c", "protocol.version=0", "ls-remote", url("alice/demo.git")], undefined, {
      GIT_TRACE_PACKET: "1"
    })
    expect(v0.code, v0.stderr).toBe(0)
    expect(v0.stderr).not.toContain("version 2")
    // `git@host:alice/demo.git` sends the path without a leading slash.
    const scp = await sh("ssh", [...sshArgs(alice.file), "git@127.0.0.1", "git-upload-pack alice/demo"], {
      input: "0000"
    })
    expect(scp.stdout).toContain("refs/heads/main")
  })

  it("serves git-upload-archive", async () => {
    const archive = await gitWith(alice.file, [
      "archive",
      `--remote=${url("alice/demo.git")}`,
      "--format=tar",
      "HEAD",
      "README.md"
    ])
    expect(archive.code, archive.stderr).toBe(0)
    expect(archive.stdout).toContain("README.md")
  })

  it("refuses an unregistered key and a user name other than BUILTIN_SSH_SERVER_USER", async () => {
    const stranger = await keygen()
    const refused = await gitWith(stranger.file, ["ls-remote", url("alice/demo.git")])
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("Permission denied (publickey)")
    const wrongUser = await gitWith(alice.file, ["ls-remote", url("alice/demo.git", "alice")])
    expect(wrongUser.code).not.toBe(0)
    expect(wrongUser.stderr).toContain("Permission denied (publickey)")
  })

  it("applies the repository's access rules: readers cannot push, strangers see nothing", async () => {
    const read = await gitWith(bob.file, ["ls-remote", url("alice/secret.git")])
    expect(read.code, read.stderr).toBe(0)
    const push = await commitAndPush(bob.file, "alice/secret", "bob.txt")
    expect(push.code).not.toBe(0)
    // A reader reaches git, whose pre-receive hook refuses the branch (AGit's refs/for/… would pass).
    expect(push.stderr).toContain("User 'bob' is not allowed to push to branch")
    const hidden = await gitWith(carol.file, ["ls-remote", url("alice/secret.git")])
    expect(hidden.code).not.toBe(0)
    expect(hidden.stderr).toContain("does not exist, or you do not have access to it")
    const missing = await gitWith(alice.file, ["ls-remote", url("alice/nothing.git")])
    expect(missing.code).not.toBe(0)
    expect(missing.stderr).toContain("does not exist")
    // Public repositories are readable by any registered key, not writable.
    expect((await gitWith(carol.file, ["ls-remote", url("alice/demo.git")])).code).toBe(0)
    expect((await commitAndPush(carol.file, "alice/demo", "carol.txt")).code).not.toBe(0)
  })

  it("refuses pushes to an archived repository", async () => {
    const push = await commitAndPush(alice.file, "alice/arch", "late.txt")
    expect(push.code).not.toBe(0)
    expect(push.stderr).toContain("archived")
  })

  it("stops refusing once a key is deleted… i.e. a deleted key no longer authenticates", async () => {
    const temp = await keygen()
    const created = await json(
      await request(hearth, "POST", "/user/keys", basic("carol"), { title: "temp", key: temp.pub })
    )
    expect((await gitWith(temp.file, ["ls-remote", url("alice/demo.git")])).code).toBe(0)
    expect((await request(hearth, "DELETE", `/user/keys/${created.id}`, basic("carol"))).status).toBe(204)
    const after = await gitWith(temp.file, ["ls-remote", url("alice/demo.git")])
    expect(after.stderr).toContain("Permission denied (publickey)")
  })
})

describe("accounts and moved repositories", () => {
  it("refuses the key of an account that may not sign in", async () => {
    await createUser(hearth, { username: "root", isAdmin: true })
    await createUser(hearth, { username: "dora" })
    const key = await keygen()
    await addKey("dora", key.pub)
    expect((await gitWith(key.file, ["ls-remote", url("alice/demo.git")])).code).toBe(0)
    expect(
      (
        await request(hearth, "PATCH", "/admin/users/dora", basic("root"), {
          login_name: "dora",
          source_id: 0,
          prohibit_login: true
        })
      ).status
    ).toBe(200)
    const refused = await gitWith(key.file, ["ls-remote", url("alice/demo.git")])
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("prohibited from signing in")
  })

  it("answers a renamed repository at its old name", async () => {
    expect(
      (await request(hearth, "POST", "/user/repos", basic("alice"), { name: "before", auto_init: true })).status
    ).toBe(201)
    expect((await request(hearth, "PATCH", "/repos/alice/before", basic("alice"), { name: "after" })).status).toBe(200)
    const old = await gitWith(alice.file, ["ls-remote", url("alice/before.git")])
    expect(old.code, old.stderr).toBe(0)
    expect(old.stdout).toContain("refs/heads/main")
  })
})

describe("deploy keys over SSH", () => {
  it("a read-only deploy key clones its repository, cannot push, and reaches no other", async () => {
    const key = await keygen()
    expect(
      (
        await request(hearth, "POST", "/repos/alice/secret/keys", basic("alice"), {
          title: "ro",
          key: key.pub,
          read_only: true
        })
      ).status
    ).toBe(201)
    expect((await gitWith(key.file, ["ls-remote", url("alice/secret.git")])).code).toBe(0)
    const push = await commitAndPush(key.file, "alice/secret", "ro.txt")
    expect(push.code).not.toBe(0)
    expect(push.stderr).toContain("read-only")
    const other = await gitWith(key.file, ["ls-remote", url("alice/other.git")])
    expect(other.code).not.toBe(0)
    expect(other.stderr).toContain("does not exist")
    // Not even a public repository of the same owner.
    expect((await gitWith(key.file, ["ls-remote", url("alice/demo.git")])).code).not.toBe(0)
  })

  it("a read-write deploy key pushes to its repository", async () => {
    const key = await keygen()
    expect(
      (await request(hearth, "POST", "/repos/alice/other/keys", basic("alice"), { title: "rw", key: key.pub })).status
    ).toBe(201)
    const push = await commitAndPush(key.file, "alice/other", "deploy.txt")
    expect(push.code, push.stderr).toBe(0)
    const branch = await json(await request(hearth, "GET", "/repos/alice/other/branches/main", basic("alice")))
    expect(branch.commit.message).toContain("add deploy.txt")
  })
})

describe("load and start-up", () => {
  it("serves concurrent clones (bounded: 6 at once)", async () => {
    const started = Date.now()
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        gitWith(alice.file, ["clone", "-q", url("alice/demo.git"), join(dir, `parallel-${i}`)])
      )
    )
    for (const r of results) expect(r.code, r.stderr).toBe(0)
    // A measurement for the report, not a limit.
    console.log(`6 concurrent SSH clones took ${Date.now() - started} ms`)
  })

  it("says which setting to change when the SSH port is taken", async () => {
    await expect(
      startHearth({
        server: { START_SSH_SERVER: "true", SSH_LISTEN_HOST: "127.0.0.1", SSH_LISTEN_PORT: String(port) }
      })
    ).rejects.toThrow(/cannot listen for SSH on 127\.0\.0\.1:\d+.*SSH_LISTEN_PORT/)
  })
})

describe("anything but git", () => {
  it("refuses a shell with a message on stderr and exit 1", async () => {
    const shell = await sh("ssh", [...sshArgs(alice.file), "-T", "git@127.0.0.1"])
    expect(shell.code).toBe(1)
    expect(shell.stderr).toContain("does not provide shell access")
  })

  it("refuses any other command with a message and exit 1", async () => {
    const other = await sh("ssh", [...sshArgs(alice.file), "git@127.0.0.1", "cat /etc/passwd"])
    expect(other.code).toBe(1)
    expect(other.stderr).toContain("is not a git command this server runs")
    expect(other.stdout).toBe("")
  })
})
