// Reading files and git objects over the API (issue 3 item 6, read side): contents, raw, media,
// git blobs, trees and refs, on a repository filled with the real git client over HTTP.
import { execFile } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitEnv } from "../src/git/Git.ts"
import { recordGitProcesses } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let work: string
let first = ""
let second = ""
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489", "hex")
const BINARY = Buffer.from([0, 1, 2, 3, 255, 254, 0, 7])

const git = (args: ReadonlyArray<string>, cwd = work) =>
  new Promise<string>((done, fail) => {
    const env = gitEnv({
      GIT_AUTHOR_NAME: "A",
      GIT_AUTHOR_EMAIL: "a@example.com",
      GIT_COMMITTER_NAME: "A",
      GIT_COMMITTER_EMAIL: "a@example.com"
    })
    execFile("git", args as Array<string>, { cwd, env, timeout: 60_000 }, (error, stdout, stderr) =>
      error === null ? done(stdout.trim()) : fail(new Error(`git ${args.join(" ")}: ${stderr}`))
    )
  })

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-contents-"))
  await Promise.all(["alice", "bob"].map((username) => createUser(hearth, { username })))
  for (const [name, priv] of [
    ["files", false],
    ["secret", true]
  ] as const) {
    expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name, private: priv })).status).toBe(201)
  }
  const local = join(work, "files")
  const remote = new URL(`${hearth.base}/alice/files.git`)
  remote.username = "alice"
  remote.password = "password123"
  await git(["clone", remote.toString(), local])
  mkdirSync(join(local, "docs"))
  writeFileSync(join(local, "README.md"), "# hello\n")
  writeFileSync(join(local, "docs", "guide.txt"), "first version\n")
  writeFileSync(join(local, "run.sh"), "#!/bin/sh\necho hi\n")
  chmodSync(join(local, "run.sh"), 0o755)
  writeFileSync(join(local, "data.bin"), BINARY)
  writeFileSync(join(local, "logo.png"), PNG)
  symlinkSync("README.md", join(local, "link"))
  await git(["add", "."], local)
  await git(["commit", "-m", "first"], local)
  first = await git(["rev-parse", "HEAD"], local)
  writeFileSync(join(local, "docs", "guide.txt"), "second version\n")
  await git(["commit", "-am", "second"], local)
  second = await git(["rev-parse", "HEAD"], local)
  await git(["tag", "v1", first], local)
  await git(["push", "origin", "HEAD:refs/heads/main", "refs/tags/v1"], local)
  await git(["push", "origin", `${first}:refs/heads/old`], local)
})
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

const get = (path: string, user?: string) => request(hearth, "GET", `/repos/alice/files${path}`, user && basic(user))

/** Forgejo encodes unset *string fields as null; the schema check reads them as plain strings. */
const withoutNulls = (value: any): any =>
  Array.isArray(value)
    ? value.map(withoutNulls)
    : Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null))

describe("contents", () => {
  it("returns a file with base64 content, its blob sha and the last commit touching it", async () => {
    const res = await get("/contents/docs/guide.txt")
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(withoutNulls(body), "ContentsResponse")
    expect(body).toMatchObject({
      name: "guide.txt",
      path: "docs/guide.txt",
      type: "file",
      encoding: "base64",
      size: 15,
      last_commit_sha: second,
      url: `${hearth.api("/repos/alice/files/contents/docs/guide.txt")}?ref=main`,
      html_url: `${hearth.base}/alice/files/src/branch/main/docs/guide.txt`,
      download_url: `${hearth.base}/alice/files/raw/branch/main/docs/guide.txt`
    })
    expect(Buffer.from(body.content, "base64").toString()).toBe("second version\n")
    expect(body.git_url).toBe(hearth.api(`/repos/alice/files/git/blobs/${body.sha}`))
    expect(body._links).toEqual({ self: body.url, git: body.git_url, html: body.html_url })
    // README was last changed by the first commit, not the tip.
    expect((await json(await get("/contents/README.md"))).last_commit_sha).toBe(first)
  })

  it("reads at a branch, a tag or a sha given as ref", async () => {
    for (const ref of ["old", "v1", first, first.slice(0, 10)]) {
      const body = await json(await get(`/contents/docs/guide.txt?ref=${ref}`))
      expect(Buffer.from(body.content, "base64").toString(), ref).toBe("first version\n")
      expect(body.last_commit_sha).toBe(first)
    }
    expect((await json(await get("/contents/docs/guide.txt?ref=v1"))).html_url).toContain("/src/tag/v1/")
    expect((await json(await get(`/contents/docs/guide.txt?ref=${first}`))).html_url).toContain(`/src/commit/${first}/`)
  })

  it("lists a directory (and the root) without content", async () => {
    const root = await json(await get("/contents"))
    expectSwagger(withoutNulls(root), "ContentsResponse[]")
    const byName = Object.fromEntries(root.map((e: any) => [e.name, e]))
    expect(Object.keys(byName).sort()).toEqual(["README.md", "data.bin", "docs", "link", "logo.png", "run.sh"])
    expect(byName.docs).toMatchObject({
      type: "dir",
      path: "docs",
      content: null,
      download_url: null,
      last_commit_sha: second
    })
    expect(byName.link).toMatchObject({ type: "symlink", target: "README.md" })
    expect(byName["README.md"]).toMatchObject({ type: "file", content: null, last_commit_sha: first })
    const docs = await json(await get("/contents/docs"))
    expect(docs.map((e: any) => e.path)).toEqual(["docs/guide.txt"])
    expect((await json(await get("/contents/docs/"))).length).toBe(1)
  })

  it("returns executable files, binaries and symlinks", async () => {
    const script = await json(await get("/contents/run.sh"))
    expect(script.type).toBe("file")
    expect(Buffer.from(script.content, "base64").toString()).toBe("#!/bin/sh\necho hi\n")
    const bin = await json(await get("/contents/data.bin"))
    expect(Buffer.from(bin.content, "base64")).toEqual(BINARY)
    const link = await json(await get("/contents/link"))
    expect(link).toMatchObject({ type: "symlink", target: "README.md", content: null })
  })

  it("answers 404 for a missing path, ref or repository, and hides private repositories", async () => {
    expect((await get("/contents/nope.txt")).status).toBe(404)
    expect((await get("/contents/README.md?ref=no-such-branch")).status).toBe(404)
    expect((await get("/contents/README.md?ref=0123456789012345678901234567890123456789")).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/nothing/contents")).status).toBe(404)
    // An empty repository has nothing to list.
    expect((await request(hearth, "GET", "/repos/alice/secret/contents", basic("alice"))).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/secret/contents", basic("bob"))).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/secret/raw/x")).status).toBe(404)
  })

  it("refuses paths that climb out or are absolute, and odd refs", async () => {
    for (const path of [
      "docs/..%2F..%2Fetc",
      "..%2FREADME.md",
      "%2Fetc%2Fpasswd",
      "docs%00x",
      "docs%2F%2Fguide.txt",
      "docs%2F.%2Fguide.txt"
    ]) {
      const res = await get(`/contents/${path}`)
      expect(res.status, path).toBe(422)
      expect((await json(res)).message, path).toMatch(/path/)
    }
    expect((await get("/raw/..%2FREADME.md")).status).toBe(422)
    expect((await get("/contents/README.md?ref=--output=x")).status).toBe(404)
    expect((await get("/contents/README.md?ref=main..old")).status).toBe(404)
  })
})

describe("raw and media", () => {
  it("serves the bytes with a fitting Content-Type and X-Service-Object-Type: blob", async () => {
    for (const kind of ["raw", "media"]) {
      const text = await get(`/${kind}/docs/guide.txt`)
      expect(text.status).toBe(200)
      expect(text.headers.get("content-type")).toBe("text/plain; charset=utf-8")
      expect(text.headers.get("x-service-object-type")).toBe("blob")
      expect(await text.text()).toBe("second version\n")
      const png = await get(`/${kind}/logo.png`)
      expect(png.headers.get("content-type")).toBe("image/png")
      expect(Buffer.from(await png.arrayBuffer())).toEqual(PNG)
      const bin = await get(`/${kind}/data.bin`)
      expect(bin.headers.get("content-type")).toBe("application/octet-stream")
      expect(Buffer.from(await bin.arrayBuffer())).toEqual(BINARY)
    }
    expect(await (await get("/raw/docs/guide.txt?ref=v1")).text()).toBe("first version\n")
  })

  it("answers 404 for directories and missing files", async () => {
    expect((await get("/raw/docs")).status).toBe(404)
    expect((await get("/raw/missing")).status).toBe(404)
    expect((await get("/media/README.md?ref=nope")).status).toBe(404)
  })
})

describe("git objects", () => {
  it("returns a blob by sha, and 400/404 for bad or unknown shas", async () => {
    const sha = (await json(await get("/contents/data.bin"))).sha
    const res = await get(`/git/blobs/${sha}`)
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(body, "GitBlob")
    expect(body).toMatchObject({
      sha,
      size: BINARY.length,
      encoding: "base64",
      url: hearth.api(`/repos/alice/files/git/blobs/${sha}`)
    })
    expect(Buffer.from(body.content, "base64")).toEqual(BINARY)
    const bad = await get("/git/blobs/not-a-sha")
    expect(bad.status).toBe(400)
    expect((await json(bad)).message).toMatch(/sha/)
    expect((await get("/git/blobs/0123456789012345678901234567890123456789")).status).toBe(404)
    // A commit is not a blob.
    expect((await get(`/git/blobs/${second}`)).status).toBe(404)
  })

  it("returns trees, recursively and by page", async () => {
    const top = await json(await get(`/git/trees/${second}`))
    expectSwagger(top, "GitTreeResponse")
    expect(top.tree.map((e: any) => e.path)).toEqual(["README.md", "data.bin", "docs", "link", "logo.png", "run.sh"])
    expect(top).toMatchObject({ truncated: false, page: 1, total_count: 6 })
    const modes = Object.fromEntries(top.tree.map((e: any) => [e.path, `${e.mode} ${e.type}`]))
    expect(modes).toMatchObject({
      "run.sh": "100755 blob",
      link: "120000 blob",
      docs: "040000 tree",
      "README.md": "100644 blob"
    })
    const docs = top.tree.find((e: any) => e.path === "docs")
    expect(docs.url).toBe(hearth.api(`/repos/alice/files/git/trees/${docs.sha}`))
    const all = await json(await get(`/git/trees/main?recursive=true`))
    expect(all.tree.map((e: any) => e.path)).toContain("docs/guide.txt")
    expect(all.total_count).toBe(7)
    const page = await json(await get(`/git/trees/${second}?per_page=2&page=2`))
    expect(page).toMatchObject({ page: 2, truncated: true, total_count: 6 })
    expect(page.tree.map((e: any) => e.path)).toEqual(["docs", "link"])
    expect((await get("/git/trees/0123456789012345678901234567890123456789")).status).toBe(404)
    expect((await get("/git/trees/a..b")).status).toBe(400)
  })

  it("lists refs, and filters them by prefix", async () => {
    const all = await json(await get("/git/refs"))
    expectSwagger(all, "Reference[]")
    expect(all.map((r: any) => r.ref)).toEqual(["refs/heads/main", "refs/heads/old", "refs/tags/v1"])
    expect(all[0]).toEqual({
      ref: "refs/heads/main",
      url: hearth.api("/repos/alice/files/git/refs/heads/main"),
      object: { type: "commit", sha: second, url: hearth.api(`/repos/alice/files/git/commits/${second}`) }
    })
    expect((await json(await get("/git/refs/heads"))).map((r: any) => r.ref)).toEqual([
      "refs/heads/main",
      "refs/heads/old"
    ])
    expect((await json(await get("/git/refs/tags/v1")))[0].object.sha).toBe(first)
    expect((await get("/git/refs/heads/nope")).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/secret/git/refs", basic("bob"))).status).toBe(404)
  })
})

describe("long-lived object readers", () => {
  it("answer many concurrent reads in order", async () => {
    const names = ["README.md", "docs/guide.txt", "run.sh", "data.bin", "logo.png"]
    const bodies = await Promise.all(Array.from({ length: 40 }, (_, i) => get(`/raw/${names[i % names.length]}`)))
    const sizes = await Promise.all(bodies.map(async (res) => (await res.arrayBuffer()).byteLength))
    expect(sizes).toEqual(Array.from({ length: 40 }, (_, i) => [8, 15, 18, BINARY.length, PNG.length][i % 5]))
  })

  it("see a repository deleted and created again under the same name", async () => {
    const push = async (content: string) => {
      const local = join(work, `again-${content.length}`)
      const remote = new URL(`${hearth.base}/alice/again.git`)
      remote.username = "alice"
      remote.password = "password123"
      await git(["clone", remote.toString(), local])
      writeFileSync(join(local, "f.txt"), content)
      await git(["add", "."], local)
      await git(["commit", "-m", "c"], local)
      await git(["push", "origin", "HEAD:refs/heads/main"], local)
    }
    expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "again" })).status).toBe(201)
    await push("one\n")
    expect(await (await request(hearth, "GET", "/repos/alice/again/raw/f.txt")).text()).toBe("one\n")
    expect((await request(hearth, "DELETE", "/repos/alice/again", basic("alice"))).status).toBe(204)
    expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "again" })).status).toBe(201)
    await push("two, longer\n")
    expect(await (await request(hearth, "GET", "/repos/alice/again/raw/f.txt")).text()).toBe("two, longer\n")
  })
})

// ---------------------------------------------------------------------------------------------
// Reads go through long-lived `cat-file --batch` readers and a last-commit cache (issue 3, (c)):
// nothing is spawned for a warm request, yet every change to the refs is seen at once.

/** Runs git with `input` on stdin (fast-import). */
const gitInput = (args: ReadonlyArray<string>, cwd: string, input: string) =>
  new Promise<string>((done, fail) => {
    const child = execFile(
      "git",
      args as Array<string>,
      { cwd, env: gitEnv(), timeout: 60_000, maxBuffer: 64 << 20 },
      (error, stdout, stderr) =>
        error === null ? done(stdout.trim()) : fail(new Error(`git ${args.join(" ")}: ${stderr}`))
    )
    child.stdin!.end(input)
  })

/** The commands (`cwd|args`) of the git processes Hearth starts while `f` runs (here or in its spawner). */
const spawnedDuring = async (f: () => Promise<unknown>) => {
  const recorder = recordGitProcesses(join(work, "recorded"))
  try {
    await f()
    return recorder.since(0)
  } finally {
    recorder.stop()
  }
}

/** A repository of alice's, filled from a fresh local clone; returns the clone's directory. */
const cloneOf = async (name: string) => {
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name })).status).toBe(201)
  const local = join(work, `clone-${name}`)
  const remote = new URL(`${hearth.base}/alice/${name}.git`)
  remote.username = "alice"
  remote.password = "password123"
  await git(["clone", remote.toString(), local])
  return local
}

const repoDir = (name: string) => join(hearth.settings.repository.ROOT, "alice", `${name}.git`)

describe("reading through long-lived readers", () => {
  it("spawns no process for a warm contents, raw or media request at a branch, a tag or a sha", async () => {
    const urls = ["main", "v1", first].flatMap((ref) =>
      [
        "/contents/docs/guide.txt",
        "/contents",
        "/contents/docs",
        "/contents/link",
        "/raw/README.md",
        "/media/logo.png"
      ].map((path) => `${path}?ref=${ref}`)
    )
    for (const url of urls) expect((await get(url)).status, url).toBe(200) // fills the last-commit cache
    const spawned = await spawnedDuring(async () => {
      for (const url of urls) {
        const res = await get(url)
        expect(res.status, url).toBe(200)
        await res.arrayBuffer()
      }
    })
    expect(spawned).toEqual([])
  })

  it("sees a push moving a branch, a new tag and a deleted branch on the very next request", async () => {
    const local = await cloneOf("moving")
    const read = (path: string) => request(hearth, "GET", `/repos/alice/moving${path}`)
    const commit = async (content: string) => {
      writeFileSync(join(local, "f.txt"), content)
      await git(["add", "."], local)
      await git(["commit", "-m", content], local)
      return git(["rev-parse", "HEAD"], local)
    }
    const a = await commit("a\n")
    await git(["push", "origin", "HEAD:refs/heads/main"], local)
    expect(await json(await read("/contents/f.txt"))).toMatchObject({
      last_commit_sha: a,
      content: Buffer.from("a\n").toString("base64")
    })

    const b = await commit("b\n")
    await git(["push", "origin", "HEAD:refs/heads/main"], local)
    expect(await json(await read("/contents/f.txt"))).toMatchObject({
      last_commit_sha: b,
      content: Buffer.from("b\n").toString("base64")
    })
    expect(await (await read("/raw/f.txt")).text()).toBe("b\n")

    // A new tag (annotated: peeled to its commit).
    expect((await read("/contents/f.txt?ref=t1")).status).toBe(404)
    await git(["tag", "-a", "-m", "t1", "t1", a], local)
    await git(["push", "origin", "refs/tags/t1"], local)
    const tagged = await json(await read("/contents/f.txt?ref=t1"))
    expect(tagged).toMatchObject({ last_commit_sha: a, content: Buffer.from("a\n").toString("base64") })
    expect(tagged.html_url).toContain("/src/tag/t1/")

    // A branch, then packed (refs in packed-refs are read again when that file changes), then deleted.
    await git(["push", "origin", `${a}:refs/heads/gone`], local)
    expect(await (await read("/raw/f.txt?ref=gone")).text()).toBe("a\n")
    await git(["pack-refs", "--all"], repoDir("moving"))
    expect(await (await read("/raw/f.txt?ref=gone")).text()).toBe("a\n")
    await git(["push", "origin", ":refs/heads/gone"], local)
    expect((await read("/raw/f.txt?ref=gone")).status).toBe(404)
    expect((await read("/contents/f.txt?ref=gone")).status).toBe(404)

    // main is packed now too: a push writes a loose ref over it, a forced one moves it back.
    const c = await commit("c\n")
    await git(["push", "origin", "HEAD:refs/heads/main"], local)
    expect((await json(await read("/contents/f.txt"))).last_commit_sha).toBe(c)
    await git(["push", "--force", "origin", `${a}:refs/heads/main`], local)
    expect(await json(await read("/contents/f.txt"))).toMatchObject({
      last_commit_sha: a,
      content: Buffer.from("a\n").toString("base64")
    })
    expect((await json(await read("/contents"))).map((e: any) => [e.name, e.last_commit_sha])).toEqual([["f.txt", a]])
  })

  it("reports the last commit of a file untouched since deep in history, at each ref", async () => {
    const local = await cloneOf("deep")
    // 1,500 commits: the first adds deep.txt and d/counter.txt, every later one changes counter.txt.
    const COMMITS = 1500
    let stream = ""
    for (let i = 1; i <= COMMITS; i++) {
      const msg = `c${i}\n`
      stream += `commit refs/heads/main\nmark :${i}\ncommitter A <a@example.com> ${1_700_000_000 + i * 60} +0000\ndata ${msg.length}\n${msg}`
      if (i > 1) stream += `from :${i - 1}\n`
      if (i === 1) stream += `M 100644 inline deep.txt\ndata 5\ndeep\n`
      const counter = `${i}\n`
      stream += `M 100644 inline d/counter.txt\ndata ${counter.length}\n${counter}\n`
    }
    await gitInput(["fast-import", "--quiet"], local, stream)
    const shas = (await git(["rev-list", "--reverse", "main"], local)).split("\n")
    expect(shas.length).toBe(COMMITS)
    await git(["push", "origin", "main"], local)
    const read = async (path: string) => json(await request(hearth, "GET", `/repos/alice/deep${path}`))
    expect((await read("/contents/deep.txt")).last_commit_sha).toBe(shas[0])
    expect((await read("/contents/d/counter.txt")).last_commit_sha).toBe(shas[COMMITS - 1])
    // At an older commit, the counter's last change is that commit; deep.txt's is still the first.
    const mid = shas[699]!
    expect((await read(`/contents/d/counter.txt?ref=${mid}`)).last_commit_sha).toBe(mid)
    expect((await read(`/contents/deep.txt?ref=${mid}`)).last_commit_sha).toBe(shas[0])
    const root = await read("/contents")
    expect(root.map((e: any) => [e.path, e.type, e.last_commit_sha])).toEqual([
      ["d", "dir", shas[COMMITS - 1]],
      ["deep.txt", "file", shas[0]]
    ])
    expect(root[1].last_commit_when).toBe(`${new Date((1_700_000_000 + 60) * 1000).toISOString().slice(0, 19)}+00:00`)
  })

  it("answers 50 parallel requests across 3 refs as it answers them one by one", async () => {
    const local = join(work, "clone-deep")
    const shas = (await git(["rev-list", "--reverse", "main"], local)).split("\n")
    // Refs nothing has read yet, so the parallel requests meet cold caches.
    await git(["push", "origin", `${shas[999]}:refs/heads/later`, `${shas[9]}:refs/tags/early`], local)
    const refs = ["later", "early", "main"]
    const paths = [
      "/contents/deep.txt",
      "/contents/d/counter.txt",
      "/contents",
      "/contents/d",
      "/raw/d/counter.txt",
      "/contents/nope"
    ]
    const urls = Array.from(
      { length: 50 },
      (_, i) => `/repos/alice/deep${paths[i % paths.length]}?ref=${refs[Math.floor(i / paths.length) % refs.length]}`
    )
    const answer = async (url: string) => {
      const res = await request(hearth, "GET", url)
      return `${res.status} ${await res.text()}`
    }
    const parallel = await Promise.all(urls.map(answer))
    const sequential: Array<string> = []
    for (const url of urls) sequential.push(await answer(url))
    expect(parallel).toEqual(sequential)
    expect(parallel.filter((a) => a.startsWith("200 ")).length).toBe(urls.filter((u) => !u.includes("/nope")).length)
    // Spot checks: the right commit for each ref.
    const counter = (ref: string) =>
      JSON.parse(parallel[urls.indexOf(`/repos/alice/deep/contents/d/counter.txt?ref=${ref}`)]!.slice(4))
    expect(counter("later").last_commit_sha).toBe(shas[999])
    expect(counter("early").last_commit_sha).toBe(shas[9])
    expect(counter("main").last_commit_sha).toBe(shas[shas.length - 1])
  })
})
