// Releases through the API (CONTRACT-WEBHOOKS §3) on repositories filled with the real git
// client: create (the tag made from target_commitish when missing, an existing tag used as it
// is), drafts seen by writers only and never latest, pre-releases, lookups by id and by tag,
// edits, deletes that keep the tag, `DELETE /tags/{tag}` refused while a release uses it, tag
// protection, and who may do what (anonymous, reader, writer, repository admin, site admin; a
// private repository and a repository with its releases unit off answer 404).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let work: string
const shas: Record<string, string> = {}

const call = (method: string, path: string, who: string | undefined, body?: unknown) =>
  request(hearth, method, path, who === undefined ? undefined : basic(who), body)

const url = (repo: string) => {
  const u = new URL(`${hearth.base}/${repo}.git`)
  u.username = "alice"
  u.password = "password123"
  return u.toString()
}

/** The tags git itself sees over HTTP: `{ v1: sha, … }` (peeled lines left out). */
const remoteTags = async (repo: string) => {
  const out = await gitIn(work, ["ls-remote", "--tags", url(repo)])
  return Object.fromEntries(
    out
      .split("\n")
      .filter((l) => l !== "" && !l.endsWith("^{}"))
      .map((l) => {
        const [sha, ref] = l.split("\t")
        return [ref!.slice("refs/tags/".length), sha!]
      })
  )
}

const create = (repo: string, body: unknown, who = "alice") => call("POST", `/repos/${repo}/releases`, who, body)

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-releases-"))
  for (const username of ["alice", "rita", "will", "ada", "stranger"]) await createUser(hearth, { username })
  await createUser(hearth, { username: "root", isAdmin: true })
  for (const [name, priv] of [
    ["proj", false],
    ["secret", true],
    ["empty", false],
    ["nounit", false],
    ["guarded", false],
    ["arch", false]
  ] as const) {
    expect((await call("POST", "/user/repos", "alice", { name, private: priv })).status).toBe(201)
  }
  const local = join(work, "proj")
  await gitIn(work, ["init", "--quiet", "--initial-branch=main", local])
  writeFileSync(join(local, "README.md"), "one\n")
  await gitIn(local, ["add", "README.md"])
  await gitIn(local, ["commit", "--quiet", "-m", "first"])
  shas.c1 = await gitIn(local, ["rev-parse", "HEAD"])
  writeFileSync(join(local, "README.md"), "two\n")
  await gitIn(local, ["commit", "--quiet", "-am", "second"])
  shas.c2 = await gitIn(local, ["rev-parse", "HEAD"])
  await gitIn(local, ["branch", "old", shas.c1])
  // An annotated tag pushed before any release names it.
  await gitIn(local, ["tag", "-a", "-m", "pushed", "v0.9", shas.c1])
  for (const repo of ["proj", "secret", "nounit", "guarded", "arch"])
    await gitIn(local, ["push", "--quiet", url(`alice/${repo}`), "main", "old", "v0.9"])
  for (const repo of ["proj", "secret", "guarded"]) {
    for (const [who, permission] of [
      ["rita", "read"],
      ["will", "write"],
      ["ada", "admin"]
    ] as const) {
      expect((await call("PUT", `/repos/alice/${repo}/collaborators/${who}`, "alice", { permission })).status).toBe(204)
    }
  }
  expect((await call("PATCH", "/repos/alice/nounit", "alice", { has_releases: false })).status).toBe(200)
  expect((await create("alice/arch", { tag_name: "before" })).status).toBe(201)
  expect((await call("PATCH", "/repos/alice/arch", "alice", { archived: true })).status).toBe(200)
  const rule = await call("POST", "/repos/alice/guarded/tag_protections", "alice", {
    name_pattern: "v*",
    whitelist_usernames: ["ada"]
  })
  expect(rule.status).toBe(201)
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("creating a release", () => {
  it("creates the tag from the default branch when target_commitish is empty, and answers Forgejo's Release", async () => {
    const res = await create("alice/proj", { tag_name: "v1.0", body: "notes" })
    expect(res.status).toBe(201)
    const release = await json(res)
    expectSwagger(release, "Release")
    expect(release).toMatchObject({
      tag_name: "v1.0",
      target_commitish: "main",
      // No title: the tag name.
      name: "v1.0",
      body: "notes",
      draft: false,
      prerelease: false,
      hide_archive_links: false,
      url: `${hearth.base}/api/v1/repos/alice/proj/releases/${release.id}`,
      html_url: `${hearth.base}/alice/proj/releases/tag/v1.0`,
      tarball_url: `${hearth.base}/alice/proj/archive/v1.0.tar.gz`,
      zipball_url: `${hearth.base}/alice/proj/archive/v1.0.zip`,
      upload_url: `${hearth.base}/api/v1/repos/alice/proj/releases/${release.id}/assets`,
      assets: [],
      author: { login: "alice" }
    })
    expect(release.published_at).toBe(release.created_at)
    // A lightweight tag at the default branch's head, seen by git.
    expect((await remoteTags("alice/proj"))["v1.0"]).toBe(shas.c2)
  })

  it("creates the tag at a given branch or commit", async () => {
    const fromBranch = await json(await create("alice/proj", { tag_name: "v0.1", target_commitish: "old" }))
    expect(fromBranch.target_commitish).toBe("old")
    const fromCommit = await create("alice/proj", { tag_name: "v0.2", target_commitish: shas.c1, prerelease: true })
    expect(fromCommit.status).toBe(201)
    const tags = await remoteTags("alice/proj")
    expect(tags["v0.1"]).toBe(shas.c1)
    expect(tags["v0.2"]).toBe(shas.c1)
  })

  it("uses a tag that exists in git as it is, whatever the target", async () => {
    const before = (await remoteTags("alice/proj"))["v0.9"]
    const res = await create("alice/proj", { tag_name: "v0.9", target_commitish: "no-such-branch" })
    expect(res.status).toBe(201)
    expect((await remoteTags("alice/proj"))["v0.9"]).toBe(before)
  })

  it("refuses what it cannot create, changing nothing", async () => {
    const refusals: Array<[unknown, number, string | undefined]> = [
      [{}, 422, "[TagName]: Required"],
      [{ tag_name: "" }, 422, "[TagName]: Required"],
      // A release of the tag exists (case-insensitive, as Forgejo's lower_tag_name).
      [{ tag_name: "V1.0" }, 409, "Release has no Tag"],
      [{ tag_name: "v9", target_commitish: "no-such-branch" }, 404, undefined],
      [{ tag_name: "bad..name" }, 422, undefined]
    ]
    for (const [body, status, message] of refusals) {
      const res = await create("alice/proj", body)
      expect(res.status, JSON.stringify(body)).toBe(status)
      if (message !== undefined) expect((await json(res)).message).toBe(message)
    }
    const tags = await remoteTags("alice/proj")
    expect(tags.v9).toBeUndefined()
    expect(Object.keys(tags)).not.toContain("bad..name")
    const empty = await create("alice/empty", { tag_name: "v1" })
    expect(empty.status).toBe(422)
    expect((await json(empty)).message).toBe("repo is empty")
  })

  it("makes no tag for a draft; publishing it makes the tag", async () => {
    const draft = await json(await create("alice/proj", { tag_name: "v2.0-rc", name: "Two", draft: true }))
    expect(draft).toMatchObject({ draft: true, name: "Two" })
    expect((await remoteTags("alice/proj"))["v2.0-rc"]).toBeUndefined()
    const published = await call("PATCH", `/repos/alice/proj/releases/${draft.id}`, "alice", {
      draft: false,
      target_commitish: "old"
    })
    expect(published.status).toBe(200)
    expect(await json(published)).toMatchObject({ draft: false, name: "Two", target_commitish: "old" })
    expect((await remoteTags("alice/proj"))["v2.0-rc"]).toBe(shas.c1)
  })

  it("refuses a tag name git cannot make for a draft too, when created and when edited", async () => {
    const long = "t".repeat(65536)
    for (const tag_name of ["bad..name", long]) {
      const res = await create("alice/proj", { tag_name, draft: true })
      expect(res.status, tag_name.slice(0, 20)).toBe(422)
      expect((await json(res)).message).toMatch(/^\[TagName\]: invalid tag name/)
    }
    const draft = await json(await create("alice/proj", { tag_name: "v7-draft", draft: true }))
    const edited = await call("PATCH", `/repos/alice/proj/releases/${draft.id}`, "alice", { tag_name: long })
    expect(edited.status).toBe(422)
    const again = await json(await call("GET", `/repos/alice/proj/releases/${draft.id}`, "alice"))
    expect(again.tag_name).toBe("v7-draft")
  })

  it("checks tag protection for the tag it would create (Forgejo: 422)", async () => {
    const refused = await create("alice/guarded", { tag_name: "v1" }, "will")
    expect(refused.status).toBe(422)
    expect((await json(refused)).message).toBe("release tag name is protected [tag_name: v1]")
    expect((await remoteTags("alice/guarded")).v1).toBeUndefined()
    // An allowed user, a tag outside the pattern, and an existing protected tag are fine.
    expect((await create("alice/guarded", { tag_name: "v1" }, "ada")).status).toBe(201)
    expect((await create("alice/guarded", { tag_name: "nightly" }, "will")).status).toBe(201)
    expect((await create("alice/guarded", { tag_name: "v0.9" }, "will")).status).toBe(201)
    // A draft makes no tag, so nothing to protect yet; publishing it is checked.
    const draft = await json(await create("alice/guarded", { tag_name: "v2", draft: true }, "will"))
    const publish = await call("PATCH", `/repos/alice/guarded/releases/${draft.id}`, "will", { draft: false })
    expect(publish.status).toBe(422)
    expect((await remoteTags("alice/guarded")).v2).toBeUndefined()
    const stillDraft = await json(await call("GET", `/repos/alice/guarded/releases/${draft.id}`, "will"))
    expect(stillDraft.draft).toBe(true)
  })
})

describe("reading releases", () => {
  let repo = "alice/proj"
  beforeAll(async () => {
    repo = "alice/secret"
    await create(repo, { tag_name: "s1", body: "first stable" })
    await create(repo, { tag_name: "s2-beta", prerelease: true })
    await create(repo, { tag_name: "s3", draft: true, body: "unfinished" })
  })

  it("lists newest first; drafts only for writers; filters draft, pre-release and q", async () => {
    const names = async (query: string, who: string | undefined) => {
      const res = await call("GET", `/repos/${repo}/releases${query}`, who)
      expect(res.status).toBe(200)
      const list = await json(res)
      expectSwagger(list, "Release[]")
      return { tags: list.map((r: any) => r.tag_name), total: res.headers.get("x-total-count") }
    }
    expect(await names("", "alice")).toEqual({ tags: ["s3", "s2-beta", "s1"], total: "3" })
    expect(await names("", "will")).toEqual({ tags: ["s3", "s2-beta", "s1"], total: "3" })
    expect(await names("", "rita")).toEqual({ tags: ["s2-beta", "s1"], total: "2" })
    expect((await names("?draft=true", "rita")).tags).toEqual([])
    expect((await names("?draft=true", "alice")).tags).toEqual(["s3"])
    expect((await names("?draft=false", "alice")).tags).toEqual(["s2-beta", "s1"])
    expect((await names("?draft=false&pre-release=false", "alice")).tags).toEqual(["s1"])
    expect((await names("?pre-release=true", "alice")).tags).toEqual(["s2-beta"])
    expect((await names("?q=STABLE", "alice")).tags).toEqual(["s1"])
    expect((await names("?q=s", "alice")).total).toBe("3")
    expect(await names("?limit=1&page=2", "alice")).toEqual({ tags: ["s2-beta"], total: "3" })
  })

  it("gets one by id and by tag (case-insensitive); a draft is 404 to readers", async () => {
    const list = await json(await call("GET", `/repos/${repo}/releases`, "alice"))
    const byTag = Object.fromEntries(list.map((r: any) => [r.tag_name, r]))
    const one = await call("GET", `/repos/${repo}/releases/${byTag.s1.id}`, "rita")
    expect(one.status).toBe(200)
    expect((await json(one)).tag_name).toBe("s1")
    const tagged = await call("GET", `/repos/${repo}/releases/tags/S1`, "rita")
    expect(tagged.status).toBe(200)
    expect((await json(tagged)).id).toBe(byTag.s1.id)
    expect((await call("GET", `/repos/${repo}/releases/${byTag.s3.id}`, "rita")).status).toBe(404)
    expect((await call("GET", `/repos/${repo}/releases/tags/s3`, "rita")).status).toBe(404)
    expect((await call("GET", `/repos/${repo}/releases/${byTag.s3.id}`, "will")).status).toBe(200)
    expect((await call("GET", `/repos/${repo}/releases/tags/s3`, "will")).status).toBe(200)
    for (const missing of ["999999", "abc", "-1"])
      expect((await call("GET", `/repos/${repo}/releases/${missing}`, "alice")).status).toBe(404)
    // Another repository's release is not found through this one.
    expect((await call("GET", `/repos/alice/proj/releases/${byTag.s1.id}`, "alice")).status).toBe(404)
  })

  it("latest is the newest release that is neither a draft nor a pre-release", async () => {
    const latest = await call("GET", `/repos/${repo}/releases/latest`, "alice")
    expect(latest.status).toBe(200)
    expect((await json(latest)).tag_name).toBe("s1")
    expect((await call("GET", "/repos/alice/guarded/releases/latest", "alice")).status).toBe(200)
    expect((await call("GET", "/repos/alice/empty/releases/latest", "alice")).status).toBe(404)
  })

  it("counts published releases in the repository's release_counter", async () => {
    const seen = await json(await call("GET", `/repos/${repo}`, "alice"))
    expect(seen.release_counter).toBe(2)
  })
})

describe("editing a release", () => {
  it("changes only what is given and non-empty; a new tag is created, the old one stays", async () => {
    const made = await json(await create("alice/proj", { tag_name: "e1", name: "Edit me", body: "b" }))
    const res = await call("PATCH", `/repos/alice/proj/releases/${made.id}`, "will", {
      name: "",
      body: "new body",
      prerelease: true,
      hide_archive_links: true
    })
    expect(res.status).toBe(200)
    const edited = await json(res)
    expectSwagger(edited, "Release")
    expect(edited).toMatchObject({
      name: "Edit me",
      body: "new body",
      prerelease: true,
      hide_archive_links: true,
      // The publisher stays the creator.
      author: { login: "alice" }
    })
    const retagged = await json(
      await call("PATCH", `/repos/alice/proj/releases/${made.id}`, "alice", { tag_name: "e2", target_commitish: "old" })
    )
    expect(retagged.tag_name).toBe("e2")
    const tags = await remoteTags("alice/proj")
    expect(tags.e1).toBe(shas.c2)
    expect(tags.e2).toBe(shas.c1)
  })

  it("refuses a tag another release has, and a missing release", async () => {
    const made = await json(await create("alice/proj", { tag_name: "e3" }))
    const clash = await call("PATCH", `/repos/alice/proj/releases/${made.id}`, "alice", { tag_name: "v1.0" })
    expect(clash.status).toBe(409)
    expect((await json(await call("GET", `/repos/alice/proj/releases/${made.id}`, "alice"))).tag_name).toBe("e3")
    expect((await call("PATCH", "/repos/alice/proj/releases/999999", "alice", { name: "x" })).status).toBe(404)
  })
})

describe("deleting a release", () => {
  it("keeps the tag; the tag can be deleted only once no release uses it", async () => {
    await create("alice/proj", { tag_name: "d1" })
    expect((await remoteTags("alice/proj")).d1).toBe(shas.c2)
    const refused = await call("DELETE", "/repos/alice/proj/tags/d1", "alice")
    expect(refused.status).toBe(409)
    expect((await json(refused)).message).toBe("a tag attached to a release cannot be deleted directly")
    expect((await remoteTags("alice/proj")).d1).toBe(shas.c2)

    expect((await call("DELETE", "/repos/alice/proj/releases/tags/D1", "will")).status).toBe(204)
    expect((await call("DELETE", "/repos/alice/proj/releases/tags/d1", "will")).status).toBe(404)
    expect((await call("GET", "/repos/alice/proj/releases/tags/d1", "alice")).status).toBe(404)
    expect((await remoteTags("alice/proj")).d1).toBe(shas.c2)
    expect((await call("DELETE", "/repos/alice/proj/tags/d1", "alice")).status).toBe(204)
    expect((await remoteTags("alice/proj")).d1).toBeUndefined()
  })

  it("by id; a draft's tag is refused too while the draft exists", async () => {
    const draft = await json(
      await create("alice/proj", { tag_name: "v0.1-draft", target_commitish: "old", draft: true })
    )
    await gitIn(join(work, "proj"), ["push", "--quiet", url("alice/proj"), `${shas.c1}:refs/tags/v0.1-draft`])
    expect((await call("DELETE", "/repos/alice/proj/tags/v0.1-draft", "alice")).status).toBe(409)
    expect((await call("DELETE", `/repos/alice/proj/releases/${draft.id}`, "alice")).status).toBe(204)
    expect((await call("DELETE", `/repos/alice/proj/releases/${draft.id}`, "alice")).status).toBe(404)
    expect((await call("DELETE", "/repos/alice/proj/tags/v0.1-draft", "alice")).status).toBe(204)
  })
})

describe("tags with / (Forgejo's `{tag}` takes the rest of the path)", () => {
  it("reads and deletes a release of release/v1.0 by tag; DELETE /tags/{tag} is refused while it exists", async () => {
    const made = await json(await create("alice/proj", { tag_name: "release/v1.0", name: "Slashed" }))
    expect(made.tag_name).toBe("release/v1.0")
    expect(made.html_url).toBe(`${hearth.base}/alice/proj/releases/tag/release/v1.0`)
    expect((await remoteTags("alice/proj"))["release/v1.0"]).toBe(shas.c2)
    for (const path of ["release/v1.0", "RELEASE/V1.0", "release%2Fv1.0"]) {
      const got = await call("GET", `/repos/alice/proj/releases/tags/${path}`, undefined)
      expect(got.status).toBe(200)
      expect((await json(got)).id).toBe(made.id)
    }
    expect((await call("GET", "/repos/alice/proj/releases/tags/release/v1.1", undefined)).status).toBe(404)
    expect((await call("GET", "/repos/alice/proj/releases/tags/release", undefined)).status).toBe(404)
    // The other release routes are untouched by the longer tag route.
    expect((await json(await call("GET", `/repos/alice/proj/releases/${made.id}`, undefined))).tag_name).toBe(
      "release/v1.0"
    )
    expect((await call("GET", `/repos/alice/proj/releases/${made.id}/assets`, undefined)).status).toBe(200)
    expect((await json(await call("GET", "/repos/alice/proj/tags/release/v1.0", undefined))).name).toBe("release/v1.0")

    const refused = await call("DELETE", "/repos/alice/proj/tags/release/v1.0", "alice")
    expect(refused.status).toBe(409)
    expect((await json(refused)).message).toBe("a tag attached to a release cannot be deleted directly")
    expect((await call("DELETE", "/repos/alice/proj/releases/tags/release/v1.0", "rita")).status).toBe(403)
    expect((await call("DELETE", "/repos/alice/proj/releases/tags/release/v1.0", "will")).status).toBe(204)
    expect((await call("DELETE", "/repos/alice/proj/releases/tags/release/v1.0", "will")).status).toBe(404)
    expect((await call("GET", "/repos/alice/proj/releases/tags/release/v1.0", "alice")).status).toBe(404)
    // Deleting the release kept its tag; now the tag itself can go.
    expect((await remoteTags("alice/proj"))["release/v1.0"]).toBe(shas.c2)
    expect((await call("DELETE", "/repos/alice/proj/tags/release/v1.0", "alice")).status).toBe(204)
    expect((await remoteTags("alice/proj"))["release/v1.0"]).toBeUndefined()
  })

  it("a deeper tag (a/b/c) by tag, and a draft of one stays hidden from readers", async () => {
    const draft = await json(await create("alice/proj", { tag_name: "a/b/c", draft: true }))
    expect((await call("GET", "/repos/alice/proj/releases/tags/a/b/c", "rita")).status).toBe(404)
    expect((await json(await call("GET", "/repos/alice/proj/releases/tags/a/b/c", "will"))).id).toBe(draft.id)
    expect((await call("DELETE", "/repos/alice/proj/releases/tags/a/b/c", "alice")).status).toBe(204)
    expect((await call("GET", "/repos/alice/proj/releases/tags/a/b/c", "alice")).status).toBe(404)
  })
})

describe("who may do what", () => {
  it("readers and anonymous read a public repository's releases but cannot change them", async () => {
    expect((await call("GET", "/repos/alice/proj/releases", undefined)).status).toBe(200)
    expect((await call("GET", "/repos/alice/proj/releases/tags/v1.0", undefined)).status).toBe(200)
    expect((await call("POST", "/repos/alice/proj/releases", undefined, { tag_name: "anon" })).status).toBe(401)
    const reader = await create("alice/proj", { tag_name: "by-reader" }, "rita")
    expect(reader.status).toBe(403)
    expect((await json(reader)).message).toBe("user should have a permission to write to a repo")
    const stranger = await create("alice/proj", { tag_name: "by-stranger" }, "stranger")
    expect(stranger.status).toBe(403)
    const one = await json(await call("GET", "/repos/alice/proj/releases/tags/v1.0", "alice"))
    expect((await call("PATCH", `/repos/alice/proj/releases/${one.id}`, "rita", { name: "x" })).status).toBe(403)
    expect((await call("DELETE", `/repos/alice/proj/releases/${one.id}`, "rita")).status).toBe(403)
    expect((await call("DELETE", "/repos/alice/proj/releases/tags/v1.0", "stranger")).status).toBe(403)
    const tags = await remoteTags("alice/proj")
    expect(tags.anon ?? tags["by-reader"] ?? tags["by-stranger"]).toBeUndefined()
  })

  it("writers, repository admins and site admins create releases", async () => {
    for (const who of ["will", "ada", "root"]) {
      const res = await create("alice/proj", { tag_name: `by-${who}` }, who)
      expect(res.status, who).toBe(201)
      expect((await json(res)).author.login).toBe(who)
    }
  })

  it("a private repository is 404 to those who cannot see it; its drafts to readers", async () => {
    for (const who of [undefined, "stranger"]) {
      expect((await call("GET", "/repos/alice/secret/releases", who)).status).toBe(404)
      expect((await call("GET", "/repos/alice/secret/releases/latest", who)).status).toBe(404)
      expect((await call("GET", "/repos/alice/secret/releases/tags/s1", who)).status).toBe(404)
    }
    expect((await create("alice/secret", { tag_name: "x" }, "stranger")).status).toBe(404)
    expect((await call("GET", "/repos/alice/secret/releases/tags/s1", "rita")).status).toBe(200)
    expect((await call("GET", "/repos/alice/secret/releases/tags/s1", "root")).status).toBe(200)
    expect((await call("GET", "/repos/alice/secret/releases/tags/s3", "root")).status).toBe(200)
  })

  it("an archived repository: no new or edited releases (423, Forgejo answers 500); reading and deleting work", async () => {
    const refused = await create("alice/arch", { tag_name: "after" })
    expect(refused.status).toBe(423)
    expect((await remoteTags("alice/arch")).after).toBeUndefined()
    const before = await json(await call("GET", "/repos/alice/arch/releases/tags/before", "rita"))
    expect((await call("PATCH", `/repos/alice/arch/releases/${before.id}`, "alice", { name: "x" })).status).toBe(423)
    expect((await call("GET", "/repos/alice/arch/releases/latest", undefined)).status).toBe(200)
    expect((await call("DELETE", `/repos/alice/arch/releases/${before.id}`, "alice")).status).toBe(204)
    expect((await remoteTags("alice/arch")).before).toBeDefined()
  })

  it("a repository with its releases unit off answers 404 to everyone", async () => {
    for (const who of [undefined, "alice"]) {
      expect((await call("GET", "/repos/alice/nounit/releases", who)).status).toBe(404)
      expect((await call("GET", "/repos/alice/nounit/releases/latest", who)).status).toBe(404)
    }
    expect((await create("alice/nounit", { tag_name: "v1" })).status).toBe(404)
    expect((await remoteTags("alice/nounit")).v1).toBeUndefined()
  })
})
