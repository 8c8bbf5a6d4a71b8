// `[service] AUTO_WATCH_NEW_REPOS` (default true): whoever creates a repository watches it — a
// repository of their own or of an organization, a fork, a migration (Forgejo's
// CreateRepositoryByExample). Off: nobody does.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let on: Hearth
let off: Hearth

const setUp = async (h: Hearth) => {
  await createUser(h, { username: "alice" })
  await createUser(h, { username: "bob" })
  expect((await request(h, "POST", "/orgs", basic("alice"), { username: "acme" })).status).toBe(201)
}

beforeAll(async () => {
  ;[on, off] = await Promise.all([
    startHearth({ migrations: { ALLOW_LOCALNETWORKS: "true" } }),
    startHearth({ service: { AUTO_WATCH_NEW_REPOS: "false" }, migrations: { ALLOW_LOCALNETWORKS: "true" } })
  ])
  await Promise.all([setUp(on), setUp(off)])
})
afterAll(() => Promise.all([on?.close(), off?.close()]))

const watchers = async (h: Hearth, repo: string) => {
  const res = await request(h, "GET", `/repos/${repo}/subscribers`, basic("alice"))
  expect(res.status).toBe(200)
  return (await json(res)).map((u: { login: string }) => u.login)
}
const watchersCount = async (h: Hearth, repo: string) =>
  (await json(await request(h, "GET", `/repos/${repo}`, basic("alice")))).watchers_count

/** Creates the same repositories on a server: alice's own, one in acme, bob's fork and bob's migration. */
const createAll = async (h: Hearth) => {
  const own = await request(h, "POST", "/user/repos", basic("alice"), { name: "garden", auto_init: true })
  expect(own.status).toBe(201)
  const inOrg = await request(h, "POST", "/orgs/acme/repos", basic("alice"), { name: "tools" })
  expect(inOrg.status).toBe(201)
  const fork = await request(h, "POST", "/repos/alice/garden/forks", basic("bob"), {})
  expect(fork.status).toBe(202)
  const migrated = await request(h, "POST", "/repos/migrate", basic("bob"), {
    clone_addr: `${h.base}/alice/garden.git`,
    repo_name: "garden-copy"
  })
  expect(migrated.status).toBe(201)
  return { own: await json(own), inOrg: await json(inOrg) }
}

describe("AUTO_WATCH_NEW_REPOS on (the default)", () => {
  it("makes the creator watch a new repository, one in an organization, a fork and a migration", async () => {
    const { own, inOrg } = await createAll(on)
    expect(own.watchers_count).toBe(1)
    expect(inOrg.watchers_count).toBe(1)
    expect(await watchers(on, "alice/garden")).toEqual(["alice"])
    expect(await watchersCount(on, "alice/garden")).toBe(1)
    expect(await watchers(on, "acme/tools")).toEqual(["alice"])
    expect(await watchers(on, "bob/garden")).toEqual(["bob"])
    expect(await watchersCount(on, "bob/garden")).toBe(1)
    expect(await watchers(on, "bob/garden-copy")).toEqual(["bob"])
    expect((await request(on, "GET", "/repos/acme/tools/subscription", basic("alice"))).status).toBe(200)
  })
})

describe("AUTO_WATCH_NEW_REPOS = false", () => {
  it("leaves new repositories unwatched", async () => {
    const { own, inOrg } = await createAll(off)
    expect([own.watchers_count, inOrg.watchers_count]).toEqual([0, 0])
    for (const repo of ["alice/garden", "acme/tools", "bob/garden", "bob/garden-copy"]) {
      expect(await watchers(off, repo)).toEqual([])
      expect(await watchersCount(off, repo)).toBe(0)
    }
  })
})
