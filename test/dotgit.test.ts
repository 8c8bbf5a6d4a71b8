// No `.git` look-alikes in hosted repositories (issue 15 item 5): the contents API refuses every
// path git would refuse (src/git/Paths.ts) with 422 and changes nothing, a symlink is not renamed
// to .gitmodules, a repository that already holds such a path can be repaired by deleting or
// renaming it; and pushes are checked by git itself (receive.fsckObjects, src/git/Git.ts): a push
// of such a tree is refused with git's message over HTTP and SSH, the refs do not move, and
// ordinary pushes — old histories with harmless flaws included — still go through.
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitEnv } from "../src/git/Git.ts"
import { gitIn, gitRun, TEST_IDENTITY } from "./support/git.ts"
import { basic, createUser, freePort, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let work: string
let sshPort: number
let sshKey: string

const alice = () => basic("alice")
const b64 = (text: string) => Buffer.from(text).toString("base64")
const bareOf = (repo: string) => join(hearth.settings.repository.ROOT, "alice", `${repo}.git`)
/** git on the bare repository Hearth keeps for alice/{repo}. */
const bare = (repo: string, args: ReadonlyArray<string>, input?: string) =>
  input === undefined ? gitIn(work, ["--git-dir", bareOf(repo), ...args]) : gitWithInput(bareOf(repo), args, input)
const headOf = (repo: string) => bare(repo, ["rev-parse", "refs/heads/main"])
const refsOf = (repo: string) => bare(repo, ["for-each-ref", "--format=%(refname) %(objectname)"])

/** `git <args>` on `gitDir` reading `input` (hash-object, mktree); resolves with its output. */
const gitWithInput = (gitDir: string, args: ReadonlyArray<string>, input: string | Buffer) =>
  new Promise<string>((done, fail) => {
    const child = spawn("git", ["--git-dir", gitDir, ...args], { env: gitEnv(TEST_IDENTITY) })
    let out = ""
    let err = ""
    child.stdout.on("data", (d) => (out += d))
    child.stderr.on("data", (d) => (err += d))
    child.on("close", (code) => (code === 0 ? done(out.trim()) : fail(new Error(`git ${args.join(" ")}: ${err}`))))
    child.stdin.end(input)
  })

/**
 * A commit on top of `parent` whose tree adds `.GIT/config` (or another name) next to the parent's
 * entries: built with plumbing, as `git add` refuses such a path.
 */
const badCommit = async (
  gitDir: string,
  parent: string,
  entries: ReadonlyArray<{ readonly mode: string; readonly name: string; readonly content: string }>
) => {
  const listed = await gitIn(work, ["--git-dir", gitDir, "ls-tree", `${parent}^{tree}`])
  const lines = listed === "" ? [] : listed.split("\n")
  for (const entry of entries) {
    const blob = await gitWithInput(gitDir, ["hash-object", "-w", "--stdin"], entry.content)
    const [dir, file] = entry.name.includes("/") ? (entry.name.split("/") as [string, string]) : [undefined, entry.name]
    if (dir === undefined) {
      lines.push(`${entry.mode} blob ${blob}\t${file}`)
    } else {
      const sub = await gitWithInput(gitDir, ["mktree"], `${entry.mode} blob ${blob}\t${file}\n`)
      lines.push(`040000 tree ${sub}\t${dir}`)
    }
  }
  const tree = await gitWithInput(gitDir, ["mktree"], `${lines.join("\n")}\n`)
  return gitIn(work, ["--git-dir", gitDir, "commit-tree", "-p", parent, "-m", "sneak a path in", tree])
}

const contents = (repo: string, method: string, path: string, body: unknown) =>
  request(
    hearth,
    method,
    `/repos/alice/${repo}/contents${path === "" ? "" : `/${path.split("/").map(encodeURIComponent).join("/")}`}`,
    alice(),
    body
  )

const httpUrl = (repo: string) => {
  const url = new URL(`${hearth.base}/alice/${repo}.git`)
  url.username = "alice"
  url.password = "password123"
  return url.toString()
}
const sshUrl = (repo: string) => `ssh://git@127.0.0.1:${sshPort}/alice/${repo}.git`
const sshEnv = () => ({
  GIT_SSH_COMMAND: [
    "ssh",
    "-i",
    sshKey,
    "-p",
    String(sshPort),
    "-o",
    "StrictHostKeyChecking=no",
    "-o",
    "UserKnownHostsFile=/dev/null",
    "-o",
    "IdentitiesOnly=yes",
    "-o",
    "BatchMode=yes",
    "-o",
    "LogLevel=ERROR"
  ].join(" ")
})

let unique = 0
const cloneOf = async (repo: string) => {
  const dir = join(work, `clone-${++unique}`)
  await gitIn(work, ["clone", "--quiet", httpUrl(repo), dir])
  return dir
}

beforeAll(async () => {
  sshPort = await freePort()
  hearth = await startHearth({
    server: {
      START_SSH_SERVER: "true",
      SSH_LISTEN_HOST: "127.0.0.1",
      SSH_LISTEN_PORT: String(sshPort),
      SSH_PORT: String(sshPort),
      DOMAIN: "127.0.0.1"
    }
  })
  work = mkdtempSync(join(tmpdir(), "hearth-dotgit-"))
  await createUser(hearth, { username: "alice" })
  for (const name of ["guarded", "pushed", "repair"]) {
    expect((await request(hearth, "POST", "/user/repos", alice(), { name, auto_init: true })).status).toBe(201)
  }
  sshKey = join(work, "key")
  expect(spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "dotgit", "-f", sshKey]).status).toBe(0)
  const key = readFileSync(`${sshKey}.pub`, "utf8").trim()
  expect((await request(hearth, "POST", "/user/keys", alice(), { title: "laptop", key })).status).toBe(201)
  // A symlink, pushed the ordinary way (symlinks are fine; only their names are checked).
  const local = await cloneOf("guarded")
  symlinkSync("README.md", join(local, "link"))
  await gitIn(local, ["add", "link"])
  await gitIn(local, ["commit", "-q", "-m", "a symlink"])
  const pushed = await gitRun(local, ["push", "origin", "HEAD:refs/heads/main"])
  expect(pushed.code, pushed.stderr).toBe(0)
}, 60_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

// Paths git refuses, each with the component the message must name.
const BAD_PATHS: ReadonlyArray<readonly [path: string, named: string]> = [
  [".GIT/config", '".GIT" is git\'s own directory'],
  [".git/hooks/post-checkout", '".git" is git\'s own directory'],
  ["docs/.Git/config", '".Git" is git\'s own directory'],
  [".git./x", '".git." is .git on Windows, which drops trailing dots and spaces'],
  [".git /x", '".git " is .git on Windows'],
  [".GiT../x", '".GiT.." is .git on Windows'],
  ["git~1/config", '"git~1" is the Windows short name of .git'],
  ["GIT~1/config", '"GIT~1" is the Windows short name of .git'],
  [".git::$INDEX_ALLOCATION/config", '".git::$INDEX_ALLOCATION" names a stream of .git on Windows'],
  [".g\u200cit/config", '".g\\u200Cit" is .git on macOS'],
  [".git\ufeff/config", '".git\\uFEFF" is .git on macOS'],
  ["a\\.git\\config", '"a\\.git\\config" reaches .git on Windows']
]

describe("the contents API refuses paths git refuses", () => {
  it("creating one file (POST /contents/{path}): 422 naming the path, nothing changes", async () => {
    const before = await refsOf("guarded")
    for (const [path, named] of BAD_PATHS) {
      const res = await contents("guarded", "POST", path, { content: b64("[core]\n\thooksPath = /tmp\n") })
      expect(res.status, path).toBe(422)
      const body = await json(res)
      expect(body.message).toContain(named)
      expect(body.message).toContain(`[path: ${path}]`)
      expect(body.url).toEqual(expect.any(String))
    }
    expect(await refsOf("guarded")).toBe(before)
  })

  it("several files at once (POST /contents): the whole change is refused", async () => {
    const before = await refsOf("guarded")
    for (const [path, named] of BAD_PATHS) {
      const res = await contents("guarded", "POST", "", {
        files: [
          { operation: "create", path: "fine.txt", content: b64("fine\n") },
          { operation: "create", path, content: b64("x") }
        ]
      })
      expect(res.status, path).toBe(422)
      expect((await json(res)).message).toContain(named)
    }
    expect(await refsOf("guarded")).toBe(before)
    expect((await contents("guarded", "GET", "fine.txt", undefined)).status).toBe(404)
  })

  it("updating or renaming onto such a path (PUT /contents/{path}, from_path, and in POST /contents)", async () => {
    const before = await refsOf("guarded")
    const readme = await json(await contents("guarded", "GET", "README.md", undefined))
    for (const [path, named] of BAD_PATHS) {
      const single = await contents("guarded", "PUT", path, {
        content: b64("moved\n"),
        sha: readme.sha,
        from_path: "README.md"
      })
      expect(single.status, path).toBe(422)
      expect((await json(single)).message).toContain(named)
      const batch = await contents("guarded", "POST", "", {
        files: [{ operation: "update", path, from_path: "README.md", sha: readme.sha, content: b64("moved\n") }]
      })
      expect(batch.status, path).toBe(422)
      expect((await json(batch)).message).toContain(named)
    }
    expect(await refsOf("guarded")).toBe(before)
  })

  it("keeps refusing empty, '.' and '..' components", async () => {
    const before = await refsOf("guarded")
    for (const path of ["a//b", "a/./b", "a/../b", "..", "/abs"]) {
      const res = await contents("guarded", "POST", "", { files: [{ operation: "create", path, content: b64("x") }] })
      expect(res.status, path).toBe(422)
      expect((await json(res)).message).toContain(`[path: ${path}]`)
    }
    expect(await refsOf("guarded")).toBe(before)
  })

  it("does not rename a symlink to .gitmodules (or .gitattributes, .gitignore, .mailmap, or a look-alike)", async () => {
    // The contents API writes no new symlinks, but an update keeps the mode of the file it
    // changes, so renaming a symlink would make one.
    const before = await refsOf("guarded")
    const link = await json(await contents("guarded", "GET", "link", undefined))
    expect(link.type).toBe("symlink")
    for (const [path, name] of [
      [".gitmodules", "gitmodules"],
      ["sub/.GitModules", "gitmodules"],
      ["gitmod~1", "gitmodules"],
      [".gitattributes", "gitattributes"],
      [".gitignore", "gitignore"],
      [".mailmap", "mailmap"]
    ] as const) {
      const res = await contents("guarded", "PUT", path, {
        content: b64("README.md"),
        sha: link.sha,
        from_path: "link"
      })
      expect(res.status, path).toBe(422)
      expect((await json(res)).message).toContain(
        `is .${name} (or a name Windows or macOS reads as it), which must not be a symbolic link: git refuses it [path: ${path}]`
      )
    }
    expect(await refsOf("guarded")).toBe(before)
    // A plain file may be called .gitmodules; a symlink may be renamed to an ordinary name.
    expect((await contents("guarded", "POST", ".gitmodules", { content: b64("") })).status).toBe(201)
    const moved = await contents("guarded", "PUT", "docs/link", {
      content: b64("../README.md"),
      sha: link.sha,
      from_path: "link"
    })
    expect(moved.status).toBe(200)
    expect((await json(moved)).content.type).toBe("symlink")
  })

  it("lets a repository that already holds such a path be repaired: delete it, or rename it away", async () => {
    // Written straight into the repository, as a push made before these checks could have.
    const parent = await headOf("repair")
    const sneaked = await badCommit(bareOf("repair"), parent, [
      { mode: "100644", name: ".git/config", content: "[core]\n" },
      { mode: "100644", name: "git~1/hooks", content: "#!/bin/sh\n" }
    ])
    await bare("repair", ["update-ref", "refs/heads/main", sneaked, parent])
    const config = await json(await contents("repair", "GET", ".git/config", undefined))
    const deleted = await contents("repair", "DELETE", ".git/config", { sha: config.sha })
    expect(deleted.status).toBe(200)
    const hooks = await json(await contents("repair", "GET", "git~1/hooks", undefined))
    const renamed = await contents("repair", "PUT", "hooks.sh", {
      content: b64("#!/bin/sh\n"),
      sha: hooks.sha,
      from_path: "git~1/hooks"
    })
    expect(renamed.status).toBe(200)
    const tree = await bare("repair", ["ls-tree", "-r", "--name-only", "refs/heads/main"])
    expect(tree.split("\n").sort()).toEqual(["README.md", "hooks.sh"])
    // The branch checks out again.
    const cloned = await gitRun(work, ["clone", "--quiet", httpUrl("repair"), join(work, "repaired")])
    expect(cloned.code, cloned.stderr).toBe(0)
  })
})

describe("pushes are checked by git (receive.fsckObjects)", () => {
  it("refuses a pushed tree with .GIT/config over HTTP with git's message; the refs do not move", async () => {
    const local = await cloneOf("pushed")
    const head = await gitIn(local, ["rev-parse", "HEAD"])
    const sneaked = await badCommit(join(local, ".git"), head, [
      { mode: "100644", name: ".GIT/config", content: "[core]\n\tfsmonitor = touch /tmp/pwned\n" }
    ])
    const before = await refsOf("pushed")
    const refused = await gitRun(local, ["push", "origin", `${sneaked}:refs/heads/main`])
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("remote: error: object")
    expect(refused.stderr).toContain("hasDotgit: contains '.git'")
    expect(refused.stderr).toMatch(/\[remote rejected\] .* -> main \(unpacker error\)/)
    expect(await refsOf("pushed")).toBe(before)
    // The quarantined objects were dropped with the push.
    const kept = await gitRun(work, ["--git-dir", bareOf("pushed"), "cat-file", "-e", sneaked])
    expect(kept.code).not.toBe(0)
    // A new branch is refused the same way.
    const branch = await gitRun(local, ["push", "origin", `${sneaked}:refs/heads/topic`])
    expect(branch.code).not.toBe(0)
    expect(await refsOf("pushed")).toBe(before)
  })

  it("refuses the look-alikes and a symlinked .gitmodules too", async () => {
    const local = await cloneOf("pushed")
    const head = await gitIn(local, ["rev-parse", "HEAD"])
    const before = await refsOf("pushed")
    for (const [entry, message] of [
      [{ mode: "100644", name: "git~1/config", content: "x" }, "hasDotgit"],
      [{ mode: "100644", name: ".g\u200cit/config", content: "x" }, "hasDotgit"],
      [{ mode: "100644", name: ".git./config", content: "x" }, "hasDotgit"],
      [{ mode: "120000", name: ".gitmodules", content: "/etc/passwd" }, "gitmodulesSymlink"]
    ] as const) {
      const sneaked = await badCommit(join(local, ".git"), head, [entry])
      const refused = await gitRun(local, ["push", "origin", `${sneaked}:refs/heads/main`])
      expect(refused.code, entry.name).not.toBe(0)
      expect(refused.stderr).toContain(message)
    }
    expect(await refsOf("pushed")).toBe(before)
  })

  it("refuses it over SSH as well", async () => {
    const local = await cloneOf("pushed")
    const head = await gitIn(local, ["rev-parse", "HEAD"])
    const sneaked = await badCommit(join(local, ".git"), head, [
      { mode: "100644", name: ".GIT/config", content: "[core]\n" }
    ])
    const before = await refsOf("pushed")
    const refused = await gitRun(local, ["push", sshUrl("pushed"), `${sneaked}:refs/heads/main`], sshEnv())
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("hasDotgit: contains '.git'")
    expect(await refsOf("pushed")).toBe(before)
  })

  it("still takes ordinary pushes, over HTTP and SSH", async () => {
    const local = await cloneOf("pushed")
    writeFileSync(join(local, "notes.md"), "# notes\n")
    await gitIn(local, ["add", "notes.md"])
    await gitIn(local, ["commit", "-q", "-m", "notes"])
    const overHttp = await gitRun(local, ["push", "origin", "HEAD:refs/heads/main"])
    expect(overHttp.code, overHttp.stderr).toBe(0)
    writeFileSync(join(local, ".gitmodules"), "")
    await gitIn(local, ["add", ".gitmodules"])
    await gitIn(local, ["commit", "-q", "-m", "an empty .gitmodules"])
    const overSsh = await gitRun(local, ["push", sshUrl("pushed"), "HEAD:refs/heads/main"], sshEnv())
    expect(overSsh.code, overSsh.stderr).toBe(0)
    expect(await headOf("pushed")).toBe(await gitIn(local, ["rev-parse", "HEAD"]))
  })

  it("still takes old histories with harmless flaws (bad time zone, no space before the date, zero-padded modes)", async () => {
    const local = await cloneOf("pushed")
    const gitDir = join(local, ".git")
    const head = await gitIn(local, ["rev-parse", "HEAD"])
    // A tree whose subdirectory mode is written "040000", as some old tools did.
    const blob = await gitWithInput(gitDir, ["hash-object", "-w", "--stdin"], "old\n")
    const sub = await gitWithInput(gitDir, ["mktree"], `100644 blob ${blob}\told.txt\n`)
    const raw = Buffer.concat([
      Buffer.from("040000 legacy\0"),
      Buffer.from(sub, "hex"),
      Buffer.from("100644 old.txt\0"),
      Buffer.from(blob, "hex")
    ])
    const tree = await gitWithInput(gitDir, ["hash-object", "-t", "tree", "--literally", "-w", "--stdin"], raw)
    const commit = await gitWithInput(
      gitDir,
      ["hash-object", "-t", "commit", "--literally", "-w", "--stdin"],
      `tree ${tree}\nparent ${head}\nauthor Old <old@example.com> 1100000000 +05\ncommitter Old <old@example.com>1100000000 +0000\n\nfrom an old tool\n`
    )
    const pushed = await gitRun(local, ["push", "origin", `${commit}:refs/heads/legacy`])
    expect(pushed.code, pushed.stderr).toBe(0)
    expect(await bare("pushed", ["rev-parse", "refs/heads/legacy"])).toBe(commit)
  })
})
