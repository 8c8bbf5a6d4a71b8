// A `.gitmodules` written through the API is checked as git checks it on push (issue 15 item 5,
// its last gap): the rules of git's fsck (src/git/Gitmodules.ts) over a table, every row also put
// to `git fsck` itself so the table cannot drift from git; then through the contents API, where a
// bad `.gitmodules` (under any name fsck reads as one, in any directory) is a 422 naming the
// problem and the path and changes nothing, while a good one goes in; and each case pushed to
// Hearth's receive-pack, which must judge it the same way.
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitEnv } from "../src/git/Git.ts"
import {
  entryFindings,
  type FsckId,
  findings,
  isAllowedSubmoduleName,
  isAllowedSubmoduleUrl,
  parseConfigList,
  problem,
  refusedOnPush
} from "../src/git/Gitmodules.ts"
import { isGitmodulesName } from "../src/git/Paths.ts"
import { gitIn, gitRun, TEST_IDENTITY } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let work: string
let scratch: string

/** `git <args>` with `input` on standard input; resolves with stdout, stderr and the exit code. */
const gitWithInput = (args: ReadonlyArray<string>, input: string | Buffer, env: Record<string, string> = {}) =>
  new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((done, fail) => {
    const child = spawn("git", args as Array<string>, { env: gitEnv({ ...TEST_IDENTITY, ...env }) })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("error", fail)
    child.on("close", (code) => done({ code, stdout: stdout.trim(), stderr }))
    child.stdin.on("error", () => {})
    child.stdin.end(input)
  })

const object = async (gitDir: string, args: ReadonlyArray<string>, input: string) => {
  const result = await gitWithInput(["--git-dir", gitDir, ...args], input)
  if (result.code !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`)
  return result.stdout
}

// ---------------------------------------------------------------------------------------------
// The table

/** A config value written so git reads it back exactly (quoted: `#` and `;` would start a comment). */
const quoted = (value: string) =>
  `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\t/g, "\\t")}"`

interface Row {
  readonly label: string
  readonly content: string
  /** What fsck reports, in its order; empty: nothing. */
  readonly ids: ReadonlyArray<FsckId>
  /** For the rows about one URL or name: the value, to check the rule function on its own. */
  readonly url?: string
  readonly name?: string
}

let rowCount = 0
const url = (value: string, ids: ReadonlyArray<FsckId> = []): Row => ({
  label: `url ${JSON.stringify(value)}`,
  // A comment per row: no two rows share a blob in the fsck cross-check.
  content: `# ${++rowCount}\n[submodule "s"]\n\tpath = s\n\turl = ${quoted(value)}\n`,
  ids,
  url: value
})
const named = (name: string, ids: ReadonlyArray<FsckId> = []): Row => ({
  label: `name ${JSON.stringify(name)}`,
  content: `# ${++rowCount}\n[submodule ${quoted(name)}]\n\turl = https://example.com/s.git\n`,
  ids,
  name
})
const setting = (key: string, value: string, ids: ReadonlyArray<FsckId> = []): Row => ({
  label: `${key} ${JSON.stringify(value)}`,
  content: `# ${++rowCount}\n[submodule "s"]\n\turl = https://example.com/s.git\n\t${key} = ${quoted(value)}\n`,
  ids
})
const file = (label: string, content: string, ids: ReadonlyArray<FsckId> = []): Row => ({
  label,
  content: `# ${++rowCount}\n${content}`,
  ids
})

const ROWS: ReadonlyArray<Row> = [
  // URLs git clones submodules from.
  url("https://example.com/other.git"),
  url("../other.git"),
  url("./sub"),
  url("../../group/other.git"),
  url("git@example.com:group/other.git"),
  url("ssh://git@example.com:2222/group/other.git"),
  url("git://example.com/other.git"),
  url("file:///srv/git/other.git"),
  url("https://user:secret@example.com:8443/other.git?x=1#top"),
  url("http::https://example.com/other.git"),
  url("/srv/git/other.git"),
  // Options (CVE-2018-17456).
  url("--upload-pack=touch /tmp/pwned", ["gitmodulesUrl"]),
  url("-u./payload", ["gitmodulesUrl"]),
  // Line breaks, raw or %-encoded, that a relative URL or git:// URL would carry into an http one.
  url("./%0ahost=evil.example", ["gitmodulesUrl"]),
  url("../x%0Ay", ["gitmodulesUrl"]),
  url("git://example.com/%0a", ["gitmodulesUrl"]),
  url("./a\nb", ["gitmodulesUrl"]),
  // git decodes only after the first ':' (the scheme is kept as it is): this one passes in git too.
  url("./%0a:x"),
  // '../' climbing to the host (CVE-2020-11008).
  url("../:evil.example/x.git", ["gitmodulesUrl"]),
  url(".././/evil.example/x.git", ["gitmodulesUrl"]),
  url("..\\/evil.example", ["gitmodulesUrl"]),
  url("./:x"),
  // http(s) and ftp(s) URLs as a credential helper would read them: a host, no line breaks.
  url("https:///example.com/x.git", ["gitmodulesUrl"]),
  url("https://user@/x.git", ["gitmodulesUrl"]),
  url("http::example.com/x.git", ["gitmodulesUrl"]),
  url("https://ex%0aample.com/x.git", ["gitmodulesUrl"]),
  url("https://us%0Aer@example.com/x.git", ["gitmodulesUrl"]),
  url("https://user:pa%0ass@example.com/x.git", ["gitmodulesUrl"]),
  url("ftp://example.com/x%0a.git", ["gitmodulesUrl"]),
  url("https://example.com?%0a", ["gitmodulesUrl"]),
  url("https://example.com/x.git\n", ["gitmodulesUrl"]),
  // git's own decoding rules, followed to the letter: the part of a host before a ':' is not decoded…
  url("https://ex%0aample.com:443/x.git"),
  // …the transports git-remote-curl does not serve are not checked, and scheme names are case-sensitive.
  url("HTTPS://ex%0aample.com/x.git"),
  url("ssh://ex%0aample.com/x.git"),
  // Names (CVE-2018-11235): not empty, no '..' component, '/' and '\' both separators.
  named("valid"),
  named("valid/with/paths"),
  named("a.b"),
  named("..."),
  named("..a"),
  named("a..b"),
  named("foo/..bar"),
  named("", ["gitmodulesName"]),
  named("..", ["gitmodulesName"]),
  named("../foo", ["gitmodulesName"]),
  named("/../foo", ["gitmodulesName"]),
  named("..\\foo", ["gitmodulesName"]),
  named("\\..\\foo", ["gitmodulesName"]),
  named("foo/..", ["gitmodulesName"]),
  named("foo/../", ["gitmodulesName"]),
  named("foo\\..", ["gitmodulesName"]),
  named("foo/../bar", ["gitmodulesName"]),
  named("../../modules/evil", ["gitmodulesName"]),
  // Paths (CVE-2018-17456) and update commands (CVE-2019-19604).
  setting("path", "sub"),
  setting("path", "a/-b"),
  setting("path", "-x", ["gitmodulesPath"]),
  setting("path", "--", ["gitmodulesPath"]),
  setting("update", "checkout"),
  setting("update", "rebase"),
  setting("update", "merge"),
  setting("update", "none"),
  setting("update", " !quoted-space"),
  setting("update", "!touch /tmp/pwned", ["gitmodulesUpdate"]),
  setting("update", "!", ["gitmodulesUpdate"]),
  setting("branch", "-x"),
  // What git's parser makes of the file.
  file("section and key in any case", '[SubModule "s"]\n\tURL = --x\n\tPath = -p\n', [
    "gitmodulesUrl",
    "gitmodulesPath"
  ]),
  file("old-style section", "[submodule.evil]\n\turl = --x\n", ["gitmodulesUrl"]),
  file("keys without a value", '[submodule "../x"]\n\tactive\n\turl\n', ["gitmodulesName", "gitmodulesName"]),
  file("an empty value", '[submodule "s"]\n\turl =\n\tpath =\n'),
  file("not about submodules", '[core]\n\thooksPath = /tmp\n[remote "-x"]\n\turl = --x\n'),
  file("a submodule key without a name", "[submodule]\n\turl = --x\n"),
  file("includes are not followed", "[include]\n\tpath = /etc/passwd\n"),
  file("a NUL ends the value, as C reads it", '[submodule "s"]\n\tpath = s\0-x\n'),
  file("everything at once", '[submodule ".."]\n\tpath = -p\n\turl = -u\n\tupdate = !x\n', [
    // fsck checks the name with every entry, then the entry itself.
    "gitmodulesName",
    "gitmodulesPath",
    "gitmodulesName",
    "gitmodulesUrl",
    "gitmodulesName",
    "gitmodulesUpdate"
  ]),
  file("empty", ""),
  // A file git cannot parse: fsck says so (only "info" by default); the entries before are checked.
  file("unparsable", '[submodule "s"\n\tpath = s\n', ["gitmodulesParse"]),
  file("unterminated quote", '[submodule "s"]\n\tpath = "s\n', ["gitmodulesParse"]),
  file("a bad entry, then an unparsable line", '[submodule "s"]\n\turl = --x\n[[oops\n\tpath = -p\n', [
    "gitmodulesUrl",
    "gitmodulesParse"
  ])
]

const findingsOf = (content: string) => Effect.runPromise(findings(join(scratch, "repo.git"), Buffer.from(content)))

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "hearth-gitmodules-"))
  await gitIn(scratch, ["init", "--bare", "--quiet", join(scratch, "repo.git")])
})
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe("the rules (src/git/Gitmodules.ts)", () => {
  it.each(ROWS.map((row) => [row.label, row] as const))("%s", async (_, row) => {
    expect((await findingsOf(row.content)).map((f) => f.id)).toEqual(row.ids)
    if (row.url !== undefined) expect(isAllowedSubmoduleUrl(row.url)).toBe(!row.ids.includes("gitmodulesUrl"))
    if (row.name !== undefined) expect(isAllowedSubmoduleName(row.name)).toBe(row.ids.length === 0)
  })

  it("reports in git's words", async () => {
    expect(
      await findingsOf('[submodule "../x"]\n\turl = --upload-pack=touch /tmp/pwned\n\tpath = -x\n\tupdate = !cmd\n')
    ).toEqual([
      { id: "gitmodulesName", message: 'disallowed submodule name: "../x"' },
      { id: "gitmodulesUrl", message: 'disallowed submodule url: "--upload-pack=touch /tmp/pwned"' },
      { id: "gitmodulesName", message: 'disallowed submodule name: "../x"' },
      { id: "gitmodulesPath", message: 'disallowed submodule path: "-x"' },
      { id: "gitmodulesName", message: 'disallowed submodule name: "../x"' },
      { id: "gitmodulesUpdate", message: 'disallowed submodule update setting: "!cmd"' }
    ])
    expect(await findingsOf("[oops\n")).toEqual([
      { id: "gitmodulesParse", message: "could not parse gitmodules blob (bad config line 1)" }
    ])
    expect(entryFindings({ key: "submodule.s.url", value: "./a\nb" })).toEqual([
      { id: "gitmodulesUrl", message: 'disallowed submodule url: "./a\\u000Ab"' }
    ])
  })

  it("explains a refusal once per problem, with why git refuses it and the path", async () => {
    const content = '[submodule "../x"]\n\tpath = x\n\turl = https://example.com/x.git\n'
    expect(await Effect.runPromise(problem(join(scratch, "repo.git"), "sub/.gitmodules", Buffer.from(content)))).toBe(
      'gitmodulesName: disallowed submodule name: "../x" (git refuses such a .gitmodules on push, as older git versions act on it ' +
        "in a clone with --recurse-submodules: a submodule name must not be empty nor have a '..' component, which would put the " +
        "submodule's repository outside .git/modules) [path: sub/.gitmodules]"
    )
    expect(
      await Effect.runPromise(problem(join(scratch, "repo.git"), ".gitmodules", Buffer.from(GOOD)))
    ).toBeUndefined()
    expect(
      await Effect.runPromise(problem(join(scratch, "repo.git"), ".gitmodules", Buffer.from(UNPARSABLE)))
    ).toBeUndefined()
  })

  it("reads `git config --null --list` output, telling a bare key from an empty value", () => {
    expect(parseConfigList(Buffer.from("submodule.a.url\nx\ny\0submodule.a.active\0submodule.a.path\n\0"))).toEqual([
      { key: "submodule.a.url", value: "x\ny" },
      { key: "submodule.a.active", value: null },
      { key: "submodule.a.path", value: "" }
    ])
    expect(parseConfigList(Buffer.alloc(0))).toEqual([])
  })

  it("refuses on push what receive-pack refuses by default: everything but gitmodulesParse", () => {
    for (const id of ["gitmodulesName", "gitmodulesUrl", "gitmodulesPath", "gitmodulesUpdate"] as const)
      expect(refusedOnPush(id)).toBe(true)
    expect(refusedOnPush("gitmodulesParse")).toBe(false)
  })
})

// Names fsck reads as .gitmodules (fsck_tree: is_hfs_dotgitmodules, is_ntfs_dotgitmodules, and
// what follows each backslash), and names it does not.
const NAMES: ReadonlyArray<readonly [name: string, checked: boolean]> = [
  [".gitmodules", true],
  [".GITMODULES", true],
  [".GitModules", true],
  [".gitmodules.", true],
  [".gitmodules ..", true],
  [".gitmodules:$DATA", true],
  ["gitmod~1", true],
  ["GITMOD~4", true],
  ["gi7eba~1", true],
  ["gi7eb~12", true],
  ["~1234567", true],
  [".git\u200cmodules", true],
  [".gitmodules\ufeff", true],
  ["a\\.gitmodules", true],
  ["a\\b\\GITMOD~1", true],
  [".gitmodules.txt", false],
  ["gitmodules", false],
  [".gitmodulesx", false],
  ["gitmod~5", false],
  ["gitmod~10", false],
  [".gitmodules\\x", false],
  ["a\\.gitmodules\\x", false],
  [".g\u200bitmodules", false]
]

describe("which files are .gitmodules (Paths.isGitmodulesName)", () => {
  it("matches the table", () => {
    expect(NAMES.filter(([name, checked]) => isGitmodulesName(name) !== checked)).toEqual([])
  })
})

// ---------------------------------------------------------------------------------------------
// The same tables put to git's own fsck

/** `git fsck` on a fresh repository holding one tree per entry: the fsck ids it reports, by blob. */
const fsckIds = async (entries: ReadonlyArray<{ readonly name: string; readonly content: string }>) => {
  const gitDir = join(scratch, `fsck-${Math.random().toString(36).slice(2, 8)}.git`)
  await gitIn(scratch, ["init", "--bare", "--quiet", gitDir])
  const blobs: Array<string> = []
  for (const entry of entries) {
    const blob = await object(gitDir, ["hash-object", "-w", "--stdin"], entry.content)
    await object(gitDir, ["mktree"], `100644 blob ${blob}\t${entry.name}\n`)
    blobs.push(blob)
  }
  const fsck = await gitRun(scratch, ["--git-dir", gitDir, "fsck", "--no-dangling", "--no-progress"])
  const found = new Map<string, Array<string>>()
  for (const match of `${fsck.stdout}\n${fsck.stderr}`.matchAll(/^(?:error|warning) in blob ([0-9a-f]+): (\w+): /gm)) {
    found.set(match[1]!, [...(found.get(match[1]!) ?? []), match[2]!])
  }
  return blobs.map((blob) => found.get(blob) ?? [])
}

describe("git agrees", () => {
  it("git fsck reports exactly the table's findings for every row", async () => {
    const reported = await fsckIds(ROWS.map((row) => ({ name: ".gitmodules", content: row.content })))
    const disagreements = ROWS.flatMap((row, i) =>
      JSON.stringify(reported[i]) === JSON.stringify(row.ids)
        ? []
        : [{ row: row.label, git: reported[i], table: row.ids }]
    )
    expect(disagreements).toEqual([])
  })

  it("git fsck checks the content of exactly the names the table says", async () => {
    const reported = await fsckIds(
      NAMES.map(([name], i) => ({ name, content: `# ${i}\n[submodule "s"]\n\turl = --x\n` }))
    )
    expect(NAMES.flatMap(([name, checked], i) => (reported[i]!.length > 0 === checked ? [] : [name]))).toEqual([])
  })
})

// ---------------------------------------------------------------------------------------------
// Through the API, and pushed

let hearth: Hearth

const alice = () => basic("alice")
const b64 = (text: string) => Buffer.from(text).toString("base64")
const bareOf = (repo: string) => join(hearth.settings.repository.ROOT, "alice", `${repo}.git`)
const refsOf = (repo: string) =>
  gitIn(work, ["--git-dir", bareOf(repo), "for-each-ref", "--format=%(refname) %(objectname)"])
const objectsOf = (repo: string) => gitIn(work, ["--git-dir", bareOf(repo), "count-objects", "-v"])
const contents = (repo: string, method: string, path: string, body: unknown) =>
  request(
    hearth,
    method,
    `/repos/alice/${repo}/contents${path === "" ? "" : `/${path.split("/").map(encodeURIComponent).join("/")}`}`,
    alice(),
    body
  )
const httpUrl = (repo: string) => {
  const address = new URL(`${hearth.base}/alice/${repo}.git`)
  address.username = "alice"
  address.password = "password123"
  return address.toString()
}

const GOOD =
  '[submodule "lib"]\n\tpath = lib\n\turl = https://example.com/group/lib.git\n' +
  '[submodule "docs"]\n\tpath = docs\n\turl = ../other.git\n\tbranch = main\n\tupdate = rebase\n'

// The brief's cases, each with the fsck id the refusal must name.
const BAD: ReadonlyArray<readonly [id: FsckId, content: string]> = [
  ["gitmodulesUrl", '[submodule "evil"]\n\tpath = evil\n\turl = --upload-pack=touch /tmp/pwned\n'],
  ["gitmodulesUrl", '[submodule "evil"]\n\tpath = evil\n\turl = ../%0ahost=evil.example\n'],
  ["gitmodulesPath", '[submodule "evil"]\n\tpath = -x\n\turl = https://example.com/evil.git\n'],
  ["gitmodulesName", '[submodule "../../modules/evil"]\n\tpath = evil\n\turl = https://example.com/evil.git\n'],
  [
    "gitmodulesUpdate",
    '[submodule "evil"]\n\tpath = evil\n\turl = https://example.com/evil.git\n\tupdate = !touch /tmp/pwned\n'
  ],
  ["gitmodulesUrl", '[submodule "evil"]\n\turl = --upload-pack=touch /tmp/pwned\n[oops\n']
]
/** Parsed by no git: fsck's gitmodulesParse is a warning on receive, so the push and the API both take it. */
const UNPARSABLE = '[submodule "broken"\n\tpath = broken\n'

let unique = 0
/**
 * A commit on the clone's HEAD whose tree adds `name` (or `dir/name`) holding `content`: built with
 * plumbing, so that git's porcelain has no say in what goes in.
 */
const commitWith = async (local: string, name: string, content: string) => {
  const gitDir = join(local, ".git")
  const head = await gitIn(local, ["rev-parse", "HEAD"])
  const listed = await gitIn(local, ["ls-tree", "HEAD"])
  const blob = await object(gitDir, ["hash-object", "-w", "--stdin"], `${content}# ${++unique}\n`)
  const slash = name.lastIndexOf("/")
  const entry =
    slash === -1
      ? `100644 blob ${blob}\t${name}`
      : `040000 tree ${await object(gitDir, ["mktree"], `100644 blob ${blob}\t${name.slice(slash + 1)}\n`)}\t${name.slice(0, slash)}`
  const tree = await object(gitDir, ["mktree"], `${[...listed.split("\n"), entry].join("\n")}\n`)
  return gitIn(local, ["commit-tree", "-p", head, "-m", `add ${name}`, tree])
}

const cloneOf = async (repo: string) => {
  const dir = join(work, `clone-${++unique}`)
  await gitIn(work, ["clone", "--quiet", httpUrl(repo), dir])
  return dir
}

let pushClone: string | undefined
/** Pushes a commit adding `name` with `content` to a new branch of alice/pushes. */
const push = async (name: string, content: string) => {
  const local = (pushClone ??= await cloneOf("pushes"))
  const commit = await commitWith(local, name, content)
  return gitRun(local, ["push", "origin", `${commit}:refs/heads/topic-${++unique}`])
}

describe("the contents API and pushes", () => {
  beforeAll(async () => {
    hearth = await startHearth()
    work = mkdtempSync(join(tmpdir(), "hearth-gitmodules-api-"))
    await createUser(hearth, { username: "alice" })
    for (const name of ["subs", "pushes", "names"]) {
      expect((await request(hearth, "POST", "/user/repos", alice(), { name, auto_init: true })).status).toBe(201)
    }
  }, 60_000)
  afterAll(async () => {
    await hearth?.close()
    rmSync(work, { recursive: true, force: true })
  })

  it("refuses each bad .gitmodules created with POST /contents/.gitmodules: 422 naming the problem and the path, nothing written", async () => {
    const refs = await refsOf("subs")
    const objects = await objectsOf("subs")
    for (const [id, content] of BAD) {
      const res = await contents("subs", "POST", ".gitmodules", { content: b64(content), message: "add submodules" })
      expect(res.status, content).toBe(422)
      const body = await json(res)
      expect(body.message).toContain(`${id}: disallowed submodule`)
      expect(body.message).toContain("[path: .gitmodules]")
      expect(body.url).toEqual(expect.any(String))
    }
    expect(await refsOf("subs")).toBe(refs)
    // Checked before anything is written: not even a loose object is left behind.
    expect(await objectsOf("subs")).toBe(objects)
  })

  it("refuses them in POST /contents, with other files, and leaves the branch alone", async () => {
    const refs = await refsOf("subs")
    for (const [id, content] of BAD) {
      const res = await contents("subs", "POST", "", {
        files: [
          { operation: "create", path: "lib/README.md", content: b64("lib\n") },
          { operation: "create", path: ".gitmodules", content: b64(content) }
        ]
      })
      expect(res.status, content).toBe(422)
      expect((await json(res)).message).toContain(`${id}: `)
    }
    expect(await refsOf("subs")).toBe(refs)
    expect((await contents("subs", "GET", "lib/README.md", undefined)).status).toBe(404)
  })

  it("takes a good .gitmodules (an https URL and a relative ../other.git) and refuses bad updates to it (PUT, and update in POST /contents)", async () => {
    const created = await contents("subs", "POST", ".gitmodules", { content: b64(GOOD) })
    expect(created.status).toBe(201)
    const sha = (await json(created)).content.sha
    const refs = await refsOf("subs")
    for (const [id, content] of BAD) {
      const single = await contents("subs", "PUT", ".gitmodules", { content: b64(content), sha })
      expect(single.status, content).toBe(422)
      expect((await json(single)).message).toContain(`${id}: `)
      const batch = await contents("subs", "POST", "", {
        files: [{ operation: "update", path: ".gitmodules", sha, content: b64(content) }]
      })
      expect(batch.status, content).toBe(422)
      expect((await json(batch)).message).toContain(`${id}: `)
    }
    expect(await refsOf("subs")).toBe(refs)
    // A good change goes in, by PUT and by POST /contents.
    const updated = await contents("subs", "PUT", ".gitmodules", { content: b64(`${GOOD}\tshallow = true\n`), sha })
    expect(updated.status).toBe(200)
    const batch = await contents("subs", "POST", "", {
      files: [{ operation: "update", path: ".gitmodules", sha: (await json(updated)).content.sha, content: b64(GOOD) }]
    })
    expect(batch.status).toBe(201)
    expect(await gitIn(work, ["--git-dir", bareOf("subs"), "show", "refs/heads/main:.gitmodules"])).toBe(GOOD.trimEnd())
  })

  it("refuses a file renamed onto .gitmodules with bad content (PUT with from_path)", async () => {
    const readme = await json(await contents("subs", "GET", "README.md", undefined))
    const refs = await refsOf("subs")
    const res = await contents("subs", "PUT", "docs/.gitmodules", {
      content: b64(BAD[0]![1]),
      sha: readme.sha,
      from_path: "README.md"
    })
    expect(res.status).toBe(422)
    expect((await json(res)).message).toContain(
      'gitmodulesUrl: disallowed submodule url: "--upload-pack=touch /tmp/pwned"'
    )
    expect(await refsOf("subs")).toBe(refs)
  })

  it("checks every name fsck reads as .gitmodules, in any directory, and only those", async () => {
    const bad = '[submodule "evil"]\n\tpath = evil\n\turl = --upload-pack=touch /tmp/pwned\n'
    const refs = await refsOf("names")
    for (const [name, checked] of NAMES) {
      for (const path of [name, `deep/er/${name}`]) {
        const res = await contents("names", "POST", "", { files: [{ operation: "create", path, content: b64(bad) }] })
        if (checked) {
          expect(res.status, path).toBe(422)
          expect((await json(res)).message).toContain(
            `gitmodulesUrl: disallowed submodule url: "--upload-pack=touch /tmp/pwned"`
          )
        } else {
          expect(res.status, path).toBe(201)
        }
      }
    }
    const written = (
      await gitIn(work, ["--git-dir", bareOf("names"), "ls-tree", "-r", "-z", "--name-only", "refs/heads/main"])
    ).split("\0")
    expect(written.filter((path) => path !== "" && path !== "README.md").sort()).toEqual(
      NAMES.filter(([, checked]) => !checked)
        .flatMap(([name]) => [name, `deep/er/${name}`])
        .sort()
    )
    expect(refs).not.toBe(await refsOf("names"))
  })

  it("takes a .gitmodules git cannot parse, as receive-pack does (gitmodulesParse is only a warning there)", async () => {
    const res = await contents("subs", "POST", "broken/.gitmodules", { content: b64(UNPARSABLE) })
    expect(res.status).toBe(201)
  })

  it("git push agrees: Hearth's receive-pack refuses each bad case with the same fsck id, and no ref moves", async () => {
    const refs = await refsOf("pushes")
    for (const [id, content] of BAD) {
      const refused = await push(".gitmodules", content)
      expect(refused.code, content).not.toBe(0)
      expect(refused.stderr).toContain(`${id}: disallowed submodule`)
      expect(refused.stderr).toMatch(/\[remote rejected\] .* \(unpacker error\)/)
    }
    for (const name of NAMES.filter(([, checked]) => checked)
      .map(([name]) => name)
      .slice(0, 6)) {
      const refused = await push(`deep/${name}`, BAD[0]![1])
      expect(refused.code, name).not.toBe(0)
      expect(refused.stderr).toContain("gitmodulesUrl: disallowed submodule url: --upload-pack=touch /tmp/pwned")
    }
    expect(await refsOf("pushes")).toBe(refs)
  })

  it("git push agrees on what goes in: a good .gitmodules, a name fsck does not read, and an unparsable file (with git's warning)", async () => {
    const good = await push(".gitmodules", GOOD)
    expect(good.code, good.stderr).toBe(0)
    const other = await push(".gitmodules.txt", BAD[0]![1])
    expect(other.code, other.stderr).toBe(0)
    const unparsable = await push(".gitmodules", UNPARSABLE)
    expect(unparsable.code, unparsable.stderr).toBe(0)
    expect(unparsable.stderr).toContain("gitmodulesParse: could not parse gitmodules blob")
  })
})
