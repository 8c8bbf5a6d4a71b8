// Commit statuses (CONTRACT-PULLS §14; Forgejo's routers/api/v1/repo/status.go and the integration
// tests `TestRepoCommitsWithStatus*`, `TestCreateCommitStatusNonExistingSHA`): create by full id,
// short id or branch, list by sha and by ref with sort, state filter and paging, the combined
// state (latest per context, worst wins, `error` reported as `failure`), who may post or read,
// and the CommitStatus event.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Event } from "../src/events/Events.ts"
import { EventHub } from "../src/events/Hub.ts"
import { combinedState, requiredContextsState } from "../src/statuses/Service.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let sha = ""
let tagSha = ""
const seen: Array<Event> = []

const post = (path: string, body: unknown, ...as: [auth?: string | undefined]) =>
  request(hearth, "POST", `/repos/alice/${path}`, as.length === 0 ? basic("alice") : as[0], body)

beforeAll(async () => {
  hearth = await startHearth()
  const events = await hearth.run(Effect.service(EventHub))
  await hearth.run(events.subscribe({ name: "collector", handle: (event) => Effect.sync(() => void seen.push(event)) }))
  await Promise.all(["alice", "reader", "writer", "stranger"].map((username) => createUser(hearth, { username })))
  for (const [name, priv] of [
    ["ci", false],
    ["hidden", true],
    ["empty", false]
  ] as const) {
    const res = await request(hearth, "POST", "/user/repos", basic("alice"), {
      name,
      private: priv,
      auto_init: name !== "empty"
    })
    expect(res.status).toBe(201)
  }
  for (const [who, permission] of [
    ["reader", "read"],
    ["writer", "write"]
  ] as const) {
    for (const repo of ["ci", "hidden"]) {
      const res = await request(hearth, "PUT", `/repos/alice/${repo}/collaborators/${who}`, basic("alice"), {
        permission
      })
      expect(res.status).toBe(204)
    }
  }
  sha = (await json(await request(hearth, "GET", "/repos/alice/ci/branches/main"))).commit.id
  // A second commit on a branch, tagged: statuses are per commit.
  const file = await request(hearth, "POST", "/repos/alice/ci/contents/second.txt", basic("alice"), {
    content: Buffer.from("2").toString("base64"),
    new_branch: "feature"
  })
  expect(file.status).toBe(201)
  tagSha = (await json(file)).commit.sha
  expect((await post("ci/tags", { tag_name: "v1", target: "feature" })).status).toBe(201)
}, 60_000)
afterAll(() => hearth?.close())

describe("POST /repos/{o}/{r}/statuses/{sha}", () => {
  it("creates a status numbered per commit, trimmed, with the creator and Forgejo's url", async () => {
    const res = await post(`ci/statuses/${sha}`, {
      state: "pending",
      target_url: " https://ci.example/build/1 ",
      description: " building ",
      context: " ci/build "
    })
    expect(res.status).toBe(201)
    const body = await json(res)
    expectSwagger(body, "CommitStatus")
    expect(body).toMatchObject({
      id: 1,
      status: "pending",
      target_url: "https://ci.example/build/1",
      description: "building",
      context: "ci/build",
      url: `${hearth.settings.server.ROOT_URL}api/v1/repos/alice/ci/statuses/${sha}`,
      creator: { login: "alice" }
    })
    expect(body.updated_at).toBe(body.created_at)
    // The creator is shown as to an anonymous reader: no e-mail address.
    expect(body.creator.email).toBe("alice@noreply.localhost")
    const event = seen.find((e) => e._tag === "CommitStatus")
    expect(event).toMatchObject({ _tag: "CommitStatus", sha, context: "ci/build", state: "pending", index: 1 })
  })

  it("takes a short id or a branch name and stores the full commit id", async () => {
    const short = await post(`ci/statuses/${sha.slice(0, 8)}`, { state: "success", context: "ci/build" })
    expect(short.status).toBe(201)
    expect(await json(short)).toMatchObject({ id: 2, url: expect.stringContaining(sha) })
    const byBranch = await post("ci/statuses/main", { state: "success", context: "ci/lint" })
    expect((await json(byBranch)).id).toBe(3)
    const other = await post(`ci/statuses/feature`, { state: "error", context: "ci/build" })
    // Another commit starts its own numbering.
    expect(await json(other)).toMatchObject({ id: 1, url: expect.stringContaining(tagSha) })
  })

  it("refuses an unknown commit (404), an unknown state and a target_url that is not http(s) (422), storing nothing", async () => {
    expect((await post(`ci/statuses/${"1".repeat(40)}`, { state: "success" })).status).toBe(404)
    const state = await post(`ci/statuses/${sha}`, { state: "running" })
    expect(state.status).toBe(422)
    expect((await json(state)).message).toMatch(/^\[State\]: must be one of pending, success/)
    for (const target_url of ["javascript:alert(1)", "not a url", "/relative"]) {
      const res = await post(`ci/statuses/${sha}`, { state: "success", target_url })
      expect(res.status, target_url).toBe(422)
      expect((await json(res)).message).toBe("[TargetURL]: must be an absolute http or https URL")
    }
    expect((await request(hearth, "GET", `/repos/alice/ci/statuses/${sha}`)).headers.get("x-total-count")).toBe("3")
    // A repository nothing was pushed to has no commit to post for.
    expect((await post("empty/statuses/main", { state: "success" })).status).toBe(404)
  })

  it("needs a signed-in writer: 401 anonymous, 403 reader, 404 for who cannot see it, 201 writer", async () => {
    expect((await post(`ci/statuses/${sha}`, { state: "success" }, undefined)).status).toBe(401)
    const reader = await post(`ci/statuses/${sha}`, { state: "success" }, basic("reader"))
    expect(reader.status).toBe(403)
    expect((await json(reader)).message).toBe("user should have a permission to write to a repo")
    expect((await post("hidden/statuses/main", { state: "success" }, basic("stranger"))).status).toBe(404)
    const readOnly = `token ${await createToken(hearth, "writer", ["read:repository"])}`
    expect((await post("hidden/statuses/main", { state: "success" }, readOnly)).status).toBe(403)
    const writer = await post("hidden/statuses/main", { state: "success", context: "w" }, basic("writer"))
    expect(writer.status).toBe(201)
  })
})

describe("GET /statuses/{sha} and /commits/{ref}/statuses", () => {
  it("lists every status, newest first by default, with X-Total-Count and Link", async () => {
    const res = await request(hearth, "GET", `/repos/alice/ci/statuses/${sha}?limit=2`)
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("3")
    expect(res.headers.get("link")).toContain('rel="next"')
    const body = await json(res)
    for (const s of body) expectSwagger(s, "CommitStatus")
    expect(body.map((s: { id: number }) => s.id)).toEqual([3, 2])
  })

  it("sorts (with Forgejo's inverted index sorts) and filters by state", async () => {
    const ids = async (query: string, ref = sha) =>
      (await json(await request(hearth, "GET", `/repos/alice/ci/statuses/${ref}?${query}`))).map(
        (s: { id: number }) => s.id
      )
    expect(await ids("sort=oldest")).toEqual([1, 2, 3])
    expect(await ids("sort=leastindex")).toEqual([3, 2, 1])
    expect(await ids("sort=highestindex")).toEqual([1, 2, 3])
    expect(await ids("state=success&sort=oldest")).toEqual([2, 3])
    // An unknown state filter is ignored, as Forgejo does.
    expect(await ids("state=bogus&sort=oldest")).toEqual([1, 2, 3])
    // An id git cannot resolve just has no statuses.
    expect(await ids("", "f".repeat(40))).toEqual([])
  })

  it("resolves a branch, a tag or a short id by ref", async () => {
    for (const ref of ["main", sha.slice(0, 10)]) {
      const res = await request(hearth, "GET", `/repos/alice/ci/commits/${ref}/statuses?sort=oldest`)
      expect(res.status, ref).toBe(200)
      expect((await json(res)).map((s: { id: number }) => s.id)).toEqual([1, 2, 3])
    }
    const tagged = await json(await request(hearth, "GET", "/repos/alice/ci/commits/v1/statuses"))
    expect(tagged).toHaveLength(1)
    expect(tagged[0].url).toContain(tagSha)
  })

  it("hides a private repository's statuses (404) and shows them to its readers", async () => {
    expect((await request(hearth, "GET", "/repos/alice/hidden/statuses/main")).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/hidden/commits/main/status", basic("stranger"))).status).toBe(
      404
    )
    const res = await request(hearth, "GET", "/repos/alice/hidden/commits/main/statuses", basic("reader"))
    expect(res.status).toBe(200)
    expect(await json(res)).toHaveLength(1)
  })
})

describe("GET /commits/{ref}/status (combined)", () => {
  it("takes the latest status per context and the worst state", async () => {
    const res = await request(hearth, "GET", "/repos/alice/ci/commits/main/status")
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("2")
    const body = await json(res)
    expectSwagger(body, "CombinedStatus")
    expect(body).toMatchObject({ state: "success", sha, total_count: 2, commit_url: "", url: "" })
    expect(body.repository).toMatchObject({ full_name: "alice/ci" })
    // Newest first; ci/build's latest is #2 (success), not #1 (pending).
    expect(body.statuses.map((s: { id: number; context: string }) => [s.id, s.context])).toEqual([
      [3, "ci/lint"],
      [2, "ci/build"]
    ])
  })

  it("reports the worst state, `error` as `failure`", async () => {
    const ref = await json(await request(hearth, "GET", "/repos/alice/ci/commits/v1/status"))
    expect(ref.state).toBe("failure")
    expect(ref.statuses[0].status).toBe("error")
    await post(`ci/statuses/${sha}`, { state: "warning", context: "ci/lint" })
    expect((await json(await request(hearth, "GET", "/repos/alice/ci/commits/main/status"))).state).toBe("warning")
    await post(`ci/statuses/${sha}`, { state: "pending", context: "ci/docs" })
    const paged = await request(hearth, "GET", "/repos/alice/ci/commits/main/status?page=1&limit=1")
    expect(paged.headers.get("x-total-count")).toBe("3")
    const body = await json(paged)
    expect(body.total_count).toBe(1)
    expect(body.statuses[0].context).toBe("ci/docs")
  })

  it("answers a commit without statuses with every member at its zero value", async () => {
    const res = await request(hearth, "GET", `/repos/alice/ci/commits/${"e".repeat(40)}/status`)
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBeNull()
    expect(await json(res)).toEqual({
      state: "",
      sha: "",
      total_count: 0,
      statuses: null,
      repository: null,
      commit_url: "",
      url: ""
    })
  })
})

describe("the state rules (Forgejo's `Test_CalcCommitStatus`, `TestMergeRequiredContextsCommitStatus`)", () => {
  const s = (context: string, state: string) => ({ context, state })
  it("combines: worst wins, error reads as failure, nothing is empty", () => {
    expect(combinedState([])).toBe("")
    expect(combinedState(["success", "pending"])).toBe("pending")
    expect(combinedState(["success", "warning", "pending"])).toBe("warning")
    expect(combinedState(["failure", "error"])).toBe("failure")
    expect(combinedState(["success", "error"])).toBe("failure")
    expect(combinedState(["success"])).toBe("success")
  })
  it("requires each context pattern (globs) to match a status", () => {
    const latest = [s("Build 1", "success"), s("Build 2", "success"), s("Lint", "pending")]
    expect(requiredContextsState(latest, ["Build*"])).toBe("success")
    expect(requiredContextsState(latest, ["Build*", "Build*"])).toBe("success")
    expect(requiredContextsState(latest, ["Build*", "Lint"])).toBe("pending")
    expect(requiredContextsState(latest, ["Build*", "Deploy"])).toBe("pending")
    expect(requiredContextsState([...latest, s("Build 3", "failure")], ["Build*"])).toBe("failure")
    // No patterns: every latest status counts; none at all is not success.
    expect(requiredContextsState(latest.slice(0, 2), [])).toBe("success")
    expect(requiredContextsState([], [])).toBe("")
  })
})
