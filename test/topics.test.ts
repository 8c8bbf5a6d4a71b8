// Repository topics (Forgejo's routers/api/v1/repo/topic.go, models/repo/topic.go): list, replace,
// add, delete, search, the Repository JSON's `topics`, and /repos/search by topic.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth

const topicsOf = async (repo: string, auth?: string) => {
  const res = await request(hearth, "GET", `/repos/alice/${repo}/topics`, auth)
  expect(res.status).toBe(200)
  return (await json(res)).topics as Array<string>
}
const put = (repo: string, topics: unknown, auth = basic("alice")) =>
  request(hearth, "PUT", `/repos/alice/${repo}/topics`, auth, { topics })

beforeAll(async () => {
  hearth = await startHearth()
  await Promise.all(["alice", "bob", "carol", "dave"].map((username) => createUser(hearth, { username })))
  for (const [name, priv] of [
    ["one", false],
    ["two", false],
    ["webby", false],
    ["full", false],
    ["secret", true]
  ] as const) {
    expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name, private: priv })).status).toBe(201)
  }
  for (const [user, permission] of [
    ["bob", "write"],
    ["carol", "admin"]
  ] as const) {
    const res = await request(hearth, "PUT", `/repos/alice/one/collaborators/${user}`, basic("alice"), { permission })
    expect(res.status).toBe(204)
  }
  // "web" on two repositories, "go" on one: the Repository JSON lists the most used first.
  expect((await put("two", ["web"])).status).toBe(204)
}, 60_000)
afterAll(() => hearth?.close())

describe("PUT /repos/{o}/{r}/topics", () => {
  it("replaces the topics: trimmed, lower-cased, duplicates and blanks dropped; listed by name", async () => {
    expect(await topicsOf("one")).toEqual([])
    expect((await put("one", ["Web", " go ", "GO", ""])).status).toBe(204)
    const res = await request(hearth, "GET", "/repos/alice/one/topics")
    expect(res.headers.get("x-total-count")).toBe("2")
    const body = await json(res)
    expectSwagger(body, "TopicName")
    expect(body).toEqual({ topics: ["go", "web"] })
    const repo = await json(await request(hearth, "GET", "/repos/alice/one"))
    expect(repo.topics).toEqual(["web", "go"])
  })

  it("refuses invalid names with Forgejo's body, listing them, and changes nothing", async () => {
    const res = await put("one", ["ok", "-bad", "Has Space", "a".repeat(36), "a".repeat(35)])
    expect(res.status).toBe(422)
    const body = await json(res)
    expectSwagger(body, "APIInvalidTopicsError")
    expect(body).toMatchObject({
      message: "Topic names are invalid",
      invalidTopics: ["-bad", "has space", "a".repeat(36)]
    })
    expect(await topicsOf("one")).toEqual(["go", "web"])
  })

  it("refuses more than 25 topics", async () => {
    const res = await put(
      "one",
      Array.from({ length: 26 }, (_, i) => `t${i}`)
    )
    expect(res.status).toBe(422)
    expect(await json(res)).toMatchObject({
      message: "Exceeding maximum number of topics per repo",
      invalidTopics: null
    })
    expect(await topicsOf("one")).toEqual(["go", "web"])
  })

  it("is for the repository's admins: 403 for a writer, 401 anonymous, 404 for who cannot see it", async () => {
    const denied = await put("one", ["x"], basic("bob"))
    expect(denied.status).toBe(403)
    expect(await json(denied)).toMatchObject({
      message: "user should be an owner or a collaborator with admin write of a repository"
    })
    expect((await request(hearth, "PUT", "/repos/alice/one/topics", undefined, { topics: ["x"] })).status).toBe(401)
    expect((await put("secret", ["x"], basic("dave"))).status).toBe(404)
    expect((await put("one", ["go", "web", "admin-set"], basic("carol"))).status).toBe(204)
    expect(await topicsOf("one")).toEqual(["admin-set", "go", "web"])
    expect((await put("one", ["go", "web"], basic("carol"))).status).toBe(204)
  })
})

describe("PUT/DELETE /repos/{o}/{r}/topics/{topic}", () => {
  it("adds one topic (lower-cased, once) and deletes it; 404 when the repository does not have it", async () => {
    expect((await request(hearth, "PUT", "/repos/alice/one/topics/Rust", basic("alice"))).status).toBe(204)
    expect((await request(hearth, "PUT", "/repos/alice/one/topics/rust", basic("alice"))).status).toBe(204)
    expect(await topicsOf("one")).toEqual(["go", "rust", "web"])
    expect((await json(await request(hearth, "GET", "/repos/alice/one"))).topics).toContain("rust")
    expect((await request(hearth, "DELETE", "/repos/alice/one/topics/RUST", basic("alice"))).status).toBe(204)
    expect(await topicsOf("one")).toEqual(["go", "web"])
    expect((await request(hearth, "DELETE", "/repos/alice/one/topics/rust", basic("alice"))).status).toBe(404)
    expect((await request(hearth, "PUT", "/repos/alice/one/topics/x", basic("bob"))).status).toBe(403)
    expect((await request(hearth, "DELETE", "/repos/alice/one/topics/go", basic("bob"))).status).toBe(403)
  })

  it("refuses an invalid name, naming it", async () => {
    for (const method of ["PUT", "DELETE"]) {
      const res = await request(hearth, method, "/repos/alice/one/topics/Bad_Name", basic("alice"))
      expect(res.status, method).toBe(422)
      expect(await json(res)).toMatchObject({ message: "Topic name is invalid", invalidTopics: "bad_name" })
    }
  })

  it("refuses a 26th topic", async () => {
    const names = Array.from({ length: 25 }, (_, i) => `f${i}`)
    expect((await put("full", names)).status).toBe(204)
    const res = await request(hearth, "PUT", "/repos/alice/full/topics/one-more", basic("alice"))
    expect(res.status).toBe(422)
    const body = await json(res)
    expect(body).toMatchObject({ message: "Exceeding maximum allowed topics per repo." })
    expect(body).not.toHaveProperty("invalidTopics")
    // One already there is still refused: Forgejo counts before it looks.
    expect((await request(hearth, "PUT", "/repos/alice/full/topics/f0", basic("alice"))).status).toBe(422)
    const page = await request(hearth, "GET", "/repos/alice/full/topics?page=2&limit=10")
    expect(page.headers.get("x-total-count")).toBe("25")
    expect((await json(page)).topics).toEqual([...names].sort().slice(10, 20))
    // Without `page`, every topic (Forgejo's FindTopics pages only when asked).
    expect((await json(await request(hearth, "GET", "/repos/alice/full/topics?limit=10"))).topics).toHaveLength(25)
    expect((await put("full", [])).status).toBe(204)
    expect(await topicsOf("full")).toEqual([])
  })
})

describe("GET /topics/search", () => {
  it("finds topics containing the keyword, most used first, with their repository count", async () => {
    const res = await request(hearth, "GET", "/topics/search?q=e")
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(body.topics, "TopicResponse[]")
    const names = body.topics.map((t: any) => t.topic_name)
    // A topic no repository has any more is still known (Forgejo keeps it, with a count of 0).
    expect(names).toEqual(["web", "admin-set"])
    const web = body.topics[0]
    expect(web).toMatchObject({ topic_name: "web", repo_count: 2 })
    expect(typeof web.id).toBe("number")
    expect(web.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    expect(res.headers.get("x-total-count")).toBe(String(names.length))
    const go = await json(await request(hearth, "GET", "/topics/search?q=GO"))
    expect(go.topics.map((t: any) => t.topic_name)).toEqual(["go"])
    expect((await json(await request(hearth, "GET", "/topics/search?q=nothing-like-it"))).topics).toEqual([])
  })
})

describe("GET /repos/search with topics", () => {
  const found = async (query: string) =>
    (await json(await request(hearth, "GET", `/repos/search?${query}`))).data.map((r: any) => r.name).sort()

  it("matches repositories by a topic containing the keyword, and by exact topic names with topic=true", async () => {
    expect(await found("q=web")).toEqual(["one", "two", "webby"])
    expect(await found("q=web&topic=true")).toEqual(["one", "two"])
    expect(await found("q=we&topic=true")).toEqual([])
    expect(await found("q=go,nothing&topic=true")).toEqual(["one"])
  })
})
