// The files counted in an account's `size:assets:attachments:*` (Forgejo's `/user/quota/attachments`
// and `/orgs/{org}/quota/attachments`): the attachments of the issues and comments of the
// repositories it owns and their release assets, as QuotaUsedAttachment (name, size, the file's
// API URL, the API and web URLs of what contains it), oldest first, paged with X-Total-Count.
// Nobody else's files; an organization's list for its owners only. Packages and artifacts stay
// empty lists (Hearth stores neither). The routes exist while `[quota] ENABLED` is on.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
const made: Record<string, number> = {}

const call = (method: string, path: string, who: string | undefined, body?: unknown) =>
  request(hearth, method, path, who === undefined ? undefined : basic(who), body)

const upload = async (path: string, who: string, text: string, filename: string) => {
  const form = new FormData()
  form.append("attachment", new Blob([text]), filename)
  const res = await fetch(hearth.api(path), { method: "POST", headers: { authorization: basic(who) }, body: form })
  expect(res.status).toBe(201)
  return (await json(res)).id as number
}

beforeAll(async () => {
  hearth = await startHearth({ quota: { ENABLED: "true" } })
  for (const username of ["alice", "bob"]) await createUser(hearth, { username })
  expect((await call("POST", "/user/repos", "alice", { name: "proj", auto_init: true })).status).toBe(201)
  expect((await call("POST", "/user/repos", "bob", { name: "other" })).status).toBe(201)
  expect((await call("POST", "/orgs", "alice", { username: "acme" })).status).toBe(201)
  expect((await call("POST", "/orgs/acme/repos", "alice", { name: "tools" })).status).toBe(201)

  const issue = await json(await call("POST", "/repos/alice/proj/issues", "alice", { title: "one" }))
  made.issue = issue.number
  made.issueFile = await upload(`/repos/alice/proj/issues/${issue.number}/assets`, "alice", "first\n", "first.txt")
  const comment = await json(
    await call("POST", `/repos/alice/proj/issues/${issue.number}/comments`, "bob", { body: "a comment" })
  )
  made.comment = comment.id
  // Bob's file on Alice's issue counts for Alice, who owns the repository.
  made.commentFile = await upload(
    `/repos/alice/proj/issues/comments/${comment.id}/assets`,
    "bob",
    "second!\n",
    "second.txt"
  )
  const release = await json(await call("POST", "/repos/alice/proj/releases", "alice", { tag_name: "v1/rc" }))
  made.release = release.id
  made.releaseFile = await upload(`/repos/alice/proj/releases/${release.id}/assets`, "alice", "third!!\n", "third.txt")

  const other = await json(await call("POST", "/repos/bob/other/issues", "bob", { title: "bob's" }))
  await upload(`/repos/bob/other/issues/${other.number}/assets`, "bob", "bob\n", "bob.txt")
  const orgIssue = await json(await call("POST", "/repos/acme/tools/issues", "alice", { title: "org" }))
  made.orgIssue = orgIssue.number
  made.orgFile = await upload(`/repos/acme/tools/issues/${orgIssue.number}/assets`, "alice", "org\n", "org.txt")
}, 120_000)
afterAll(async () => {
  await hearth?.close()
})

describe("GET /user/quota/attachments", () => {
  it("lists the issue, comment and release files of the caller's repositories, oldest first, with their containers", async () => {
    const res = await call("GET", "/user/quota/attachments", "alice")
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("3")
    const list = await json(res)
    expectSwagger(list, "QuotaUsedAttachment[]")
    const api = `${hearth.base}/api/v1/repos/alice/proj`
    const html = `${hearth.base}/alice/proj`
    expect(list).toEqual([
      {
        name: "first.txt",
        size: 6,
        api_url: `${api}/issues/${made.issue}/assets/${made.issueFile}`,
        contained_in: { api_url: `${api}/issues/${made.issue}`, html_url: `${html}/issues/${made.issue}` }
      },
      {
        name: "second.txt",
        size: 8,
        api_url: `${api}/issues/comments/${made.comment}/assets/${made.commentFile}`,
        contained_in: {
          api_url: `${api}/issues/comments/${made.comment}`,
          html_url: `${html}/issues/${made.issue}#issuecomment-${made.comment}`
        }
      },
      {
        name: "third.txt",
        size: 8,
        api_url: `${api}/releases/${made.release}/assets/${made.releaseFile}`,
        contained_in: { api_url: `${api}/releases/${made.release}`, html_url: `${html}/releases/tag/v1/rc` }
      }
    ])
    // Each api_url is the file's own address in the API.
    for (const item of list) {
      const got = await call("GET", item.api_url.slice(`${hearth.base}/api/v1`.length), "alice")
      expect(got.status).toBe(200)
      expect((await json(got)).name).toBe(item.name)
    }
  })

  it("pages with limit and page, the total in X-Total-Count", async () => {
    const res = await call("GET", "/user/quota/attachments?limit=2&page=2", "alice")
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("3")
    expect(res.headers.get("link")).toContain('rel="first"')
    expect((await json(res)).map((a: { name: string }) => a.name)).toEqual(["third.txt"])
  })

  it("shows nobody else's files, and an account without any gets an empty list", async () => {
    const bob = await json(await call("GET", "/user/quota/attachments", "bob"))
    expect(bob.map((a: { name: string }) => a.name)).toEqual(["bob.txt"])
    await createUser(hearth, { username: "carol" })
    const res = await call("GET", "/user/quota/attachments", "carol")
    expect(res.headers.get("x-total-count")).toBe("0")
    expect(await json(res)).toEqual([])
    expect((await call("GET", "/user/quota/attachments", undefined)).status).toBe(401)
  })

  it("forgets a deleted file", async () => {
    const extra = await upload(`/repos/alice/proj/issues/${made.issue}/assets`, "alice", "gone\n", "gone.txt")
    expect((await call("GET", "/user/quota/attachments", "alice")).headers.get("x-total-count")).toBe("4")
    expect((await call("DELETE", `/repos/alice/proj/issues/${made.issue}/assets/${extra}`, "alice")).status).toBe(204)
    const after = await call("GET", "/user/quota/attachments", "alice")
    expect(after.headers.get("x-total-count")).toBe("3")
    expect((await json(after)).map((a: { name: string }) => a.name)).not.toContain("gone.txt")
  })

  it("leaves packages and artifacts empty", async () => {
    for (const what of ["packages", "artifacts"]) {
      const res = await call("GET", `/user/quota/${what}`, "alice")
      expect(res.status).toBe(200)
      expect(await json(res)).toEqual([])
    }
  })
})

describe("GET /orgs/{org}/quota/attachments", () => {
  it("lists the organization's files to its owners", async () => {
    const res = await call("GET", "/orgs/acme/quota/attachments", "alice")
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("1")
    const api = `${hearth.base}/api/v1/repos/acme/tools`
    expect(await json(res)).toEqual([
      {
        name: "org.txt",
        size: 4,
        api_url: `${api}/issues/${made.orgIssue}/assets/${made.orgFile}`,
        contained_in: {
          api_url: `${api}/issues/${made.orgIssue}`,
          html_url: `${hearth.base}/acme/tools/issues/${made.orgIssue}`
        }
      }
    ])
  })

  it("is refused to someone who does not own the organization", async () => {
    expect((await call("GET", "/orgs/acme/quota/attachments", "bob")).status).toBe(403)
  })
})
