// Git data and code helpers (issue 23 item 5): blob batches, refs, annotated tags, notes, a
// commit's raw diff and patch, diffpatch, EditorConfig, git hooks and the signing-key routes
// without [repository.signing], on objects made by the real git client and pushed over HTTP.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let work: string
let local: string
let gnupg: string
let first = ""
let second = ""
let annotated = ""
let signedTag = ""
let notesCommit = ""

const alice = () => basic("alice")
const get = (path: string, auth?: string) => request(hearth, "GET", `/repos/alice/pub${path}`, auth)

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-gitdata-"))
  await Promise.all(["alice", "bob", "carol"].map((username) => createUser(hearth, { username })))
  for (const [name, priv] of [
    ["pub", false],
    ["priv", true],
    ["empty", false]
  ] as const) {
    expect((await request(hearth, "POST", "/user/repos", alice(), { name, private: priv })).status).toBe(201)
  }
  for (const repo of ["pub", "priv"]) {
    const res = await request(hearth, "PUT", `/repos/alice/${repo}/collaborators/bob`, alice(), { permission: "read" })
    expect(res.status).toBe(204)
  }
  // A key of the test's own for the signed tag.
  gnupg = join(work, "gnupg")
  mkdirSync(gnupg, { mode: 0o700 })
  const env = { GNUPGHOME: gnupg }
  await gitIn(work, ["version"])
  const { execFileSync } = await import("node:child_process")
  execFileSync(
    "gpg",
    ["--batch", "--passphrase", "", "--quick-gen-key", "T <t@example.com>", "ed25519", "sign", "never"],
    {
      env: { ...process.env, GNUPGHOME: gnupg }
    }
  )
  local = join(work, "pub")
  const remote = new URL(`${hearth.base}/alice/pub.git`)
  remote.username = "alice"
  remote.password = "password123"
  await gitIn(work, ["clone", remote.toString(), local])
  mkdirSync(join(local, "docs"))
  writeFileSync(
    join(local, ".editorconfig"),
    "root = true\n[*]\nindent_style = space\nindent_size = 2\n[*.go]\nindent_style = tab\n[docs/**.md]\nx_wrap = off\n"
  )
  writeFileSync(join(local, "a.txt"), "one\ntwo\nthree\n")
  writeFileSync(join(local, "docs", "guide.md"), "# guide\n")
  await gitIn(local, ["add", "."])
  await gitIn(local, ["commit", "-m", "first"])
  first = await gitIn(local, ["rev-parse", "HEAD"])
  writeFileSync(join(local, "a.txt"), "one\n2\nthree\n")
  await gitIn(local, ["commit", "-am", "second"])
  second = await gitIn(local, ["rev-parse", "HEAD"])
  await gitIn(local, ["tag", "-a", "v1", "-m", "release one", first])
  await gitIn(local, ["tag", "v1.0", second])
  await gitIn(
    local,
    ["-c", "gpg.program=gpg", "-c", "user.signingkey=t@example.com", "tag", "-s", "v2", "-m", "signed release"],
    env
  )
  await gitIn(local, ["notes", "add", "-m", "reviewed by T", first])
  notesCommit = await gitIn(local, ["rev-parse", "refs/notes/commits"])
  annotated = await gitIn(local, ["rev-parse", "refs/tags/v1"])
  signedTag = await gitIn(local, ["rev-parse", "refs/tags/v2"])
  await gitIn(local, [
    "push",
    "origin",
    "HEAD:refs/heads/main",
    "refs/tags/v1",
    "refs/tags/v1.0",
    "refs/tags/v2",
    "refs/notes/commits"
  ])
  const privRemote = new URL(`${hearth.base}/alice/priv.git`)
  privRemote.username = "alice"
  privRemote.password = "password123"
  await gitIn(local, ["push", privRemote.toString(), "HEAD:refs/heads/main"])
}, 120_000)

afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

/** The route on the private repository as the owner, a reader, an outsider and anonymously. */
const privateRule = async (method: string, path: string, body?: unknown) => ({
  owner: (await request(hearth, method, `/repos/alice/priv${path}`, alice(), body)).status,
  reader: (await request(hearth, method, `/repos/alice/priv${path}`, basic("bob"), body)).status,
  outsider: (await request(hearth, method, `/repos/alice/priv${path}`, basic("carol"), body)).status,
  anonymous: (await request(hearth, method, `/repos/alice/priv${path}`, undefined, body)).status
})

describe("git/blobs (GetBlobs)", () => {
  it("answers several blobs in one request, anonymously on a public repository", async () => {
    const a = await gitIn(local, ["rev-parse", `${second}:a.txt`])
    const b = await gitIn(local, ["rev-parse", `${first}:a.txt`])
    const res = await get(`/git/blobs?shas=${a},${b}`)
    expect(res.status).toBe(200)
    const blobs = await json(res)
    expect(blobs.map((x: any) => x.sha)).toEqual([a, b])
    expect(Buffer.from(blobs[0].content, "base64").toString()).toBe("one\n2\nthree\n")
    expect(blobs[1]).toMatchObject({ encoding: "base64", size: 14, url: hearth.api(`/repos/alice/pub/git/blobs/${b}`) })
  })

  it("refuses a missing list, an unknown or malformed sha and too many with 400", async () => {
    for (const query of ["", "?shas=", `?shas=${"0".repeat(40)}`, "?shas=xyz", `?shas=${first}`]) {
      const res = await get(`/git/blobs${query}`)
      expect(res.status, query).toBe(400)
      expect((await json(res)).message).toMatch(/shas|blob|sha/)
    }
    const many = Array.from({ length: 51 }, () => first).join(",")
    expect((await json(await get(`/git/blobs?shas=${many}`))).message).toMatch(/at most 50/)
  })

  it("is the private repository's readers' only", async () => {
    const a = await gitIn(local, ["rev-parse", `${second}:a.txt`])
    expect(await privateRule("GET", `/git/blobs?shas=${a}`)).toEqual({
      owner: 200,
      reader: 200,
      outsider: 404,
      anonymous: 404
    })
  })
})

describe("git/refs (repoListAllGitRefs, repoListGitRefs)", () => {
  it("lists every ref, notes and tags included, and 404 for a repository without any", async () => {
    const refs = await json(await get("/git/refs"))
    expect(refs.map((r: any) => r.ref)).toEqual([
      "refs/heads/main",
      "refs/notes/commits",
      "refs/tags/v1",
      "refs/tags/v1.0",
      "refs/tags/v2"
    ])
    expect(refs.find((r: any) => r.ref === "refs/tags/v1").object).toEqual({
      type: "tag",
      sha: annotated,
      url: hearth.api(`/repos/alice/pub/git/tags/${annotated}`)
    })
    expect((await request(hearth, "GET", "/repos/alice/empty/git/refs")).status).toBe(404)
  })

  it("matches by prefix as Forgejo does: an array even for one exact match, 404 when none", async () => {
    expect((await json(await get("/git/refs/tags/v1"))).map((r: any) => r.ref)).toEqual([
      "refs/tags/v1",
      "refs/tags/v1.0"
    ])
    const one = await json(await get("/git/refs/heads/main"))
    expect(Array.isArray(one)).toBe(true)
    expect(one[0].object.sha).toBe(second)
    expect((await get("/git/refs/heads/ma")).status).toBe(200)
    expect((await get("/git/refs/heads/nope")).status).toBe(404)
    expect(await privateRule("GET", "/git/refs")).toEqual({ owner: 200, reader: 200, outsider: 404, anonymous: 404 })
  })
})

describe("git/tags/{sha} (GetAnnotatedTag)", () => {
  it("answers an annotated tag with its tagger, message and the commit it points at", async () => {
    const tag = await json(await get(`/git/tags/${annotated}`))
    expect(tag).toMatchObject({
      tag: "v1",
      sha: annotated,
      url: hearth.api(`/repos/alice/pub/git/tags/${annotated}`),
      message: "release one\n",
      tagger: { name: "T", email: "t@example.com" },
      object: { type: "commit", sha: first, url: hearth.api(`/repos/alice/pub/git/commits/${first}`) },
      verification: { verified: false, reason: "gpg.error.not_signed_commit", signature: "" },
      archive_download_count: { zip: 0, tar_gz: 0 }
    })
    expect(tag.tagger.date).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2})$/)
  })

  it("splits a signed tag's signature from its message and reports what was signed", async () => {
    const tag = await json(await get(`/git/tags/${signedTag}`))
    expect(tag.message).toBe("signed release\n")
    expect(tag.verification.signature).toMatch(/^-----BEGIN PGP SIGNATURE-----/)
    expect(tag.verification.payload).toBe(
      `${(await gitIn(local, ["cat-file", "tag", signedTag])).split("-----BEGIN PGP SIGNATURE-----")[0]}`
    )
    // The key is nobody's on this forge.
    expect(tag.verification).toMatchObject({ verified: false, reason: "gpg.error.no_gpg_keys_found" })
  })

  it("verifies a tag signed by a key its tagger registered (src/gpg), and only for the tagger's address", async () => {
    const home = join(work, "alice-gnupg")
    mkdirSync(home, { mode: 0o700 })
    const env = { ...process.env, GNUPGHOME: home }
    const { execFileSync } = await import("node:child_process")
    execFileSync(
      "gpg",
      ["--batch", "--passphrase", "", "--quick-gen-key", "alice <alice@example.com>", "ed25519", "sign", "never"],
      {
        env
      }
    )
    const armored = execFileSync("gpg", ["--batch", "--armor", "--export", "alice@example.com"], { env }).toString()
    const added = await request(hearth, "POST", "/user/gpg_keys", alice(), { armored_public_key: armored })
    expect(added.status, await added.clone().text()).toBe(201)
    const keyId = (await json(added)).key_id
    const sign = ["-c", "gpg.program=gpg", "-c", "user.signingkey=alice@example.com", "tag", "-s"]
    const asAlice = { GNUPGHOME: home, GIT_COMMITTER_NAME: "alice", GIT_COMMITTER_EMAIL: "alice@example.com" }
    await gitIn(local, [...sign, "by-alice", "-m", "alice signs", first], asAlice)
    await gitIn(local, [...sign, "by-alice-as-t", "-m", "not her address", first], { GNUPGHOME: home })
    await gitIn(local, ["push", "-q", "origin", "refs/tags/by-alice", "refs/tags/by-alice-as-t"])
    const good = await json(await get(`/git/tags/${await gitIn(local, ["rev-parse", "refs/tags/by-alice"])}`))
    expect(good.verification).toMatchObject({
      verified: true,
      reason: `alice / ${keyId}`,
      signer: { name: "alice", email: "alice@example.com", username: "alice" }
    })
    const other = await json(await get(`/git/tags/${await gitIn(local, ["rev-parse", "refs/tags/by-alice-as-t"])}`))
    expect(other.verification).toMatchObject({ verified: false, reason: "gpg.error.no_gpg_keys_found" })
  })

  it("answers 400 for what is not a tag object, as Forgejo does", async () => {
    for (const sha of [second, "0".repeat(40), "v1", "zz"]) {
      const res = await get(`/git/tags/${sha}`)
      expect(res.status, sha).toBe(400)
      expect((await json(res)).message).toMatch(/tag/)
    }
    expect(await privateRule("GET", `/git/tags/${annotated}`)).toMatchObject({ outsider: 404, anonymous: 404 })
  })
})

describe("git/notes/{sha} (repoGetNote, repoSetNote, repoRemoveNote)", () => {
  it("reads a note pushed with git notes, with the notes commit that last changed it", async () => {
    const note = await json(await get(`/git/notes/${first}`))
    expect(note.message).toBe("reviewed by T\n")
    expect(note.commit.sha).toBe(notesCommit)
    expect(note.commit.commit.verification).not.toBeNull()
    const bare = await json(await get(`/git/notes/${first}?verification=false&files=false`))
    expect(bare.commit.commit.verification).toBeNull()
    expect(bare.commit.files).toBeNull()
    expect((await get(`/git/notes/${second}`)).status).toBe(404)
    expect((await get("/git/notes/a..b")).status).toBe(422)
  })

  it("sets, replaces and removes a note as a writer, through refs/notes/commits", async () => {
    const set = await request(hearth, "POST", `/repos/alice/pub/git/notes/${second}`, alice(), { message: "ship it" })
    expect(set.status).toBe(200)
    const note = await json(set)
    expect(note.message).toBe("ship it\n")
    expect(note.commit.commit.author.name).toBe("alice")
    await gitIn(local, ["fetch", "origin", "+refs/notes/commits:refs/notes/commits"])
    expect(await gitIn(local, ["notes", "show", second])).toBe("ship it")
    expect(await gitIn(local, ["notes", "show", first])).toBe("reviewed by T")
    // By branch name too, as Forgejo resolves the sha parameter.
    const replaced = await request(hearth, "POST", "/repos/alice/pub/git/notes/main", alice(), { message: "again" })
    expect((await json(replaced)).message).toBe("again\n")
    expect((await request(hearth, "DELETE", `/repos/alice/pub/git/notes/${second}`, alice())).status).toBe(204)
    expect((await get(`/git/notes/${second}`)).status).toBe(404)
    expect((await request(hearth, "DELETE", `/repos/alice/pub/git/notes/${second}`, alice())).status).toBe(404)
    expect(
      (await request(hearth, "POST", `/repos/alice/pub/git/notes/${"1".repeat(40)}`, alice(), { message: "x" })).status
    ).toBe(404)
  })

  it("lets readers read and only writers write", async () => {
    const rule = await privateRule("POST", `/git/notes/${second}`, { message: "from someone" })
    // Signed-in routes ask an anonymous caller to sign in first (Forgejo's reqToken).
    expect(rule).toEqual({ owner: 200, reader: 403, outsider: 404, anonymous: 401 })
    expect(await privateRule("GET", `/git/notes/${second}`)).toEqual({
      owner: 200,
      reader: 200,
      outsider: 404,
      anonymous: 404
    })
    const anonymous = await request(hearth, "POST", `/repos/alice/pub/git/notes/${second}`, undefined, { message: "x" })
    expect(anonymous.status).toBe(401)
  })
})

describe("git/commits/{sha}.{diff|patch} (repoDownloadCommitDiffOrPatch)", () => {
  it("answers git's diff and patch of a commit as text", async () => {
    const diff = await get(`/git/commits/${second}.diff`)
    expect(diff.status).toBe(200)
    expect(diff.headers.get("content-type")).toMatch(/^text\/plain/)
    expect(await diff.text()).toBe(`${await gitIn(local, ["diff", "-M", first, second])}\n`)
    const patch = await (await get(`/git/commits/${second}.patch`)).text()
    expect(patch).toMatch(new RegExp(`^From ${second} `))
    expect(patch).toContain("Subject: [PATCH] second")
    // A root commit's diff against nothing.
    expect(await (await get(`/git/commits/${first}.diff`)).text()).toContain("+++ b/a.txt")
  })

  it("leaves other dotted names to the commit route and answers 404 for unknown commits", async () => {
    const commit = await get("/git/commits/v1.0")
    expect(commit.status).toBe(200)
    expect((await json(commit)).sha).toBe(second)
    expect(await (await get("/git/commits/v1.0.diff")).text()).toContain("-two")
    expect((await get(`/git/commits/${"1".repeat(40)}.diff`)).status).toBe(404)
    expect(await privateRule("GET", `/git/commits/${second}.patch`)).toEqual({
      owner: 200,
      reader: 200,
      outsider: 404,
      anonymous: 404
    })
  })
})

describe("diffpatch (repoApplyDiffPatch)", () => {
  const patchOf = (from: string, to: string, path: string) =>
    `diff --git a/${path} b/${path}\n--- a/${path}\n+++ b/${path}\n@@ -1,3 +1,3 @@\n one\n-${from}\n+${to}\n three\n`

  it("applies a patch as one commit on the branch, with the author and message given", async () => {
    const res = await request(hearth, "POST", "/repos/alice/pub/diffpatch", alice(), {
      content: patchOf("2", "TWO", "a.txt"),
      sha: second,
      message: "patch it",
      author: { name: "P", email: "p@example.com" },
      signoff: true
    })
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body.content).toBeNull()
    expect(body.commit.message).toBe("patch it\n\nSigned-off-by: P <p@example.com>\n")
    expect(body.commit.author).toMatchObject({ name: "P", email: "p@example.com" })
    expect(body.commit.parents[0].sha).toBe(second)
    expect(body.verification).toMatchObject({ verified: false, reason: "gpg.error.not_signed_commit" })
    const raw = await get("/raw/a.txt")
    expect(await raw.text()).toBe("one\nTWO\nthree\n")
    expect((await json(await get("/branches/main"))).commit.id).toBe(body.commit.sha)
  })

  it("answers 409 with git's words for a patch that does not apply, and changes nothing", async () => {
    const before = (await json(await get("/branches/main"))).commit.id
    const res = await request(hearth, "POST", "/repos/alice/pub/diffpatch", alice(), {
      content: patchOf("not there", "x", "a.txt"),
      sha: second
    })
    expect(res.status).toBe(409)
    expect((await json(res)).message).toMatch(/does not apply/)
    expect((await json(await get("/branches/main"))).commit.id).toBe(before)
  })

  it("puts the commit on a new branch when asked, and refuses bad input with 4xx", async () => {
    const res = await request(hearth, "POST", "/repos/alice/pub/diffpatch", alice(), {
      content: Buffer.from(
        "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n"
      ).toString("base64"),
      sha: second,
      new_branch: "patched"
    })
    expect(res.status).toBe(200)
    expect(await (await get("/raw/new.txt?ref=patched")).text()).toBe("hello\n")
    expect((await get("/raw/new.txt")).status).toBe(404)
    for (const [body, status] of [
      [{ content: "not a patch", sha: second }, 422],
      [{ content: "", sha: second }, 422],
      [{ content: patchOf("2", "3", "a.txt"), sha: second, branch: "nope" }, 404],
      [{ content: patchOf("TWO", "3", "a.txt"), sha: second, new_branch: "patched" }, 422],
      [{ content: patchOf("TWO", "3", "a.txt"), sha: second, branch: "bad..name" }, 422]
    ] as const) {
      const refused = await request(hearth, "POST", "/repos/alice/pub/diffpatch", alice(), body)
      expect(refused.status, JSON.stringify(body)).toBe(status)
      if (status !== 404) expect((await json(refused)).message).not.toBe("")
    }
  })

  it("is for writers only", async () => {
    expect(await privateRule("POST", "/diffpatch", { content: patchOf("2", "Z", "a.txt"), sha: second })).toEqual({
      owner: 200,
      reader: 403,
      outsider: 404,
      anonymous: 401
    })
  })
})

describe("editorconfig/{filepath} (repoGetEditorConfig)", () => {
  it("answers the definition matching the path, from the default branch or ?ref", async () => {
    expect(await json(await get("/editorconfig/src/main.go"))).toEqual({
      indent_style: "tab",
      indent_size: "2",
      tab_width: "2"
    })
    expect(await json(await get("/editorconfig/docs/guide.md"))).toMatchObject({ indent_style: "space", x_wrap: "off" })
    expect(await json(await get(`/editorconfig/a.txt?ref=${first}`))).toMatchObject({ indent_style: "space" })
  })

  it("answers 404 without a .editorconfig or a matching section", async () => {
    await gitIn(local, ["checkout", "-q", "--orphan", "bare"])
    await gitIn(local, ["rm", "-rfq", "."])
    writeFileSync(join(local, ".editorconfig"), "[*.go]\nindent_style = tab\n")
    await gitIn(local, ["add", ".editorconfig"])
    await gitIn(local, ["commit", "-qm", "only go"])
    await gitIn(local, ["push", "-q", "origin", "HEAD:refs/heads/only-go"])
    await gitIn(local, ["checkout", "-q", "main"])
    expect((await get("/editorconfig/a.txt?ref=only-go")).status).toBe(404)
    expect((await get("/editorconfig/x.go?ref=only-go")).status).toBe(200)
    expect((await get("/editorconfig/a.txt?ref=nope")).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/empty/editorconfig/a.txt")).status).toBe(404)
    expect(await privateRule("GET", "/editorconfig/a.txt")).toEqual({
      owner: 200,
      reader: 200,
      outsider: 404,
      anonymous: 404
    })
  })
})

describe("hooks/git (repoListGitHooks and friends)", () => {
  it("lists Forgejo's hooks as inactive to repository admins and refuses every change", async () => {
    const list = await json(await request(hearth, "GET", "/repos/alice/pub/hooks/git", alice()))
    expect(list).toEqual([
      { name: "pre-receive", is_active: false, content: "" },
      { name: "update", is_active: false, content: "" },
      { name: "post-receive", is_active: false, content: "" }
    ])
    expect(await json(await request(hearth, "GET", "/repos/alice/pub/hooks/git/update", alice()))).toMatchObject({
      name: "update"
    })
    expect((await request(hearth, "GET", "/repos/alice/pub/hooks/git/nope", alice())).status).toBe(404)
    for (const method of ["PATCH", "DELETE"]) {
      const res = await request(hearth, method, "/repos/alice/pub/hooks/git/pre-receive", alice(), {
        content: "#!/bin/sh\n"
      })
      expect(res.status).toBe(403)
      expect((await json(res)).message).toMatch(/git hooks are disabled/)
    }
    expect(await privateRule("GET", "/hooks/git")).toEqual({ owner: 200, reader: 403, outsider: 404, anonymous: 401 })
  })
})

describe("signing keys without [repository.signing]", () => {
  it("answers an empty OpenPGP key and no SSH key, as Forgejo without a key", async () => {
    for (const path of ["/signing-key.gpg", "/repos/alice/pub/signing-key.gpg"]) {
      const res = await request(hearth, "GET", path)
      expect(res.status, path).toBe(200)
      expect(await res.text()).toBe("")
    }
    expect((await request(hearth, "GET", "/signing-key.ssh")).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/priv/signing-key.gpg", basic("carol"))).status).toBe(404)
  })
})

describe("media/{filepath}", () => {
  it("serves the stored file with the raw route's headers (no LFS in Hearth)", async () => {
    const [media, raw] = [await get("/media/a.txt"), await get("/raw/a.txt")]
    expect(media.status).toBe(200)
    for (const header of ["content-type", "content-disposition", "x-service-object-type", "cache-control"])
      expect(media.headers.get(header), header).toBe(raw.headers.get(header))
    expect(await media.text()).toBe(await raw.text())
  })
})
