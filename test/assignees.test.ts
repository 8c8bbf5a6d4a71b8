// GET /repos/{o}/{r}/assignees and /reviewers (Forgejo's GetAssignees, GetReviewers): assignees are
// the active accounts with write access (the owner, write collaborators, organization owners and
// members of teams that may write); reviewers are those with read access or more, but the caller,
// and for a public repository also its watchers. Signed-in readers only.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { UsersService } from "../src/users/Service.ts"
import { apiAs, basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth

const names = async (path: string, as: string) => {
  const res = await request(hearth, "GET", path, basic(as))
  expect(res.status, path).toBe(200)
  const body = await json(res)
  expectSwagger(body, "User[]")
  return body.map((u: { login: string }) => u.login)
}

beforeAll(async () => {
  hearth = await startHearth()
  for (const name of ["ann", "wes", "rea", "wat", "out", "idle", "oon", "tew", "ter"]) {
    const user = await createUser(hearth, { username: name })
    if (name === "idle")
      await hearth.run(Effect.flatMap(UsersService, (users) => users.update(user, { is_active: false })))
  }
  for (const [name, isPrivate] of [
    ["priv", true],
    ["pub", false]
  ] as const) {
    await apiAs(hearth, "POST", "/user/repos", "ann", { name, private: isPrivate })
    await apiAs(hearth, "PUT", `/repos/ann/${name}/collaborators/wes`, "ann", { permission: "write" })
    await apiAs(hearth, "PUT", `/repos/ann/${name}/collaborators/rea`, "ann", { permission: "read" })
    await apiAs(hearth, "PUT", `/repos/ann/${name}/collaborators/idle`, "ann", { permission: "write" })
  }
  await apiAs(hearth, "PUT", "/repos/ann/pub/subscription", "wat")

  await apiAs(hearth, "POST", "/orgs", "oon", { username: "guild" })
  await apiAs(hearth, "POST", "/orgs/guild/repos", "oon", { name: "vault", private: true })
  const team = async (name: string, permission: string, member: string) => {
    const made = await apiAs(hearth, "POST", "/orgs/guild/teams", "oon", {
      name,
      permission,
      includes_all_repositories: true,
      units: ["repo.code", "repo.issues", "repo.pulls"]
    })
    await apiAs(hearth, "PUT", `/teams/${made.id}/members/${member}`, "oon")
  }
  await team("writers", "write", "tew")
  await team("readers", "read", "ter")
}, 120_000)
afterAll(async () => {
  await hearth?.close()
})

describe("assignees", () => {
  it("are the active accounts that may write, by name", async () => {
    expect(await names("/repos/ann/priv/assignees", "ann")).toEqual(["ann", "wes"])
    expect(await names("/repos/ann/pub/assignees", "rea")).toEqual(["ann", "wes"])
    expect(await names("/repos/guild/vault/assignees", "ter")).toEqual(["oon", "tew"])
  })
})

describe("reviewers", () => {
  it("are those who may read, but the caller; a public repository's watchers too", async () => {
    expect(await names("/repos/ann/priv/reviewers", "ann")).toEqual(["rea", "wes"])
    expect(await names("/repos/ann/priv/reviewers", "wes")).toEqual(["ann", "rea"])
    expect(await names("/repos/ann/pub/reviewers", "ann")).toEqual(["rea", "wat", "wes"])
    expect(await names("/repos/guild/vault/reviewers", "tew")).toEqual(["oon", "ter"])
  })
})

describe("who may ask", () => {
  it("a signed-in reader: anonymous 401, someone who may not see a private repository 404", async () => {
    for (const path of ["/repos/ann/priv/assignees", "/repos/ann/priv/reviewers"]) {
      expect((await request(hearth, "GET", path)).status, path).toBe(401)
      const hidden = await request(hearth, "GET", path, basic("out"))
      expect(hidden.status, path).toBe(404)
      expect(await hidden.text()).toBe("")
    }
    expect((await request(hearth, "GET", "/repos/ann/pub/assignees", basic("out"))).status).toBe(200)
  })
})
