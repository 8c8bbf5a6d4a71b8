// What follows an account's rename (issue 23 item 2): the RenameUser event on the hub, and the old
// name answered as Forgejo's `context.RedirectToUser` on every API route that names an account
// (`/users/{username}/…`, `/admin/users/{username}/…`, `/orgs/{org}/…`: 307 to the same URL under
// the new name, query kept) and on the web profile, at once after the rename; a hidden account's
// new name is not told; a new account taking the old name ends the redirect for good.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Event } from "../src/events/Events.ts"
import { EventHub } from "../src/events/Hub.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
const events: Array<Event> = []
const call = (method: string, path: string, who?: string, body?: unknown) =>
  request(hearth, method, path, who === undefined ? undefined : basic(who), body)
const ok = async (method: string, path: string, who: string, body?: unknown) => {
  const res = await call(method, path, who, body)
  expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBeLessThan(300)
  return res.status === 204 ? undefined : json(res)
}
/** The answer to an API path without following redirects, as `auth` (a full header value). */
const raw = (path: string, auth?: string, method = "GET") =>
  fetch(hearth.api(path), {
    method,
    redirect: "manual",
    headers: auth === undefined ? {} : { authorization: auth }
  })
const expectRedirect = async (res: Response, to: string) => {
  expect(res.status, await res.clone().text()).toBe(307)
  const location = new URL(res.headers.get("location")!, hearth.base)
  expect(`${location.pathname}${location.search}`).toBe(to)
}
const rename = (from: string, to: string) => ok("POST", `/admin/users/${from}/rename`, "root", { new_username: to })

beforeAll(async () => {
  hearth = await startHearth()
  await hearth.run(
    Effect.gen(function* () {
      const hub = yield* EventHub
      yield* hub.subscribe({
        name: "test",
        handle: (event) => Effect.sync(() => void (event._tag === "RenameUser" && events.push(event)))
      })
    })
  )
  for (const username of ["root", "ann", "ben", "hidden"]) {
    await createUser(hearth, {
      username,
      isAdmin: username === "root",
      ...(username === "hidden" ? { visibility: "private" as const } : {})
    })
  }
}, 120_000)
afterAll(async () => {
  await hearth?.close()
})

describe("renaming a user", () => {
  it("publishes RenameUser; the old name redirects at once on every account route, the new one answers", async () => {
    await ok("POST", "/user/repos", "ann", { name: "proj", auto_init: true })
    const token = await createToken(hearth, "ann")
    // Warm every cache that knows the name: the token's principal, the name look-up, the profile.
    expect((await json(await raw("/user", `token ${token}`))).login).toBe("ann")
    expect((await json(await raw("/users/ann"))).login).toBe("ann")

    await rename("ann", "anna")
    const renamed = events.find((e) => e._tag === "RenameUser" && e.oldName === "ann")
    expect(renamed).toMatchObject({ user: { name: "anna" }, isOrganization: false, doer: { name: "root" } })

    // At once: the token names the new login, the old name redirects, the new one answers.
    expect((await json(await raw("/user", `token ${token}`))).login).toBe("anna")
    await expectRedirect(await raw("/users/ann"), "/api/v1/users/anna")
    await expectRedirect(await raw("/users/ann/repos?limit=1&page=1"), "/api/v1/users/anna/repos?limit=1&page=1")
    await expectRedirect(await raw("/users/ann/followers", basic("ben")), "/api/v1/users/anna/followers")
    await expectRedirect(await raw("/users/Ann/gpg_keys", basic("ben")), "/api/v1/users/anna/gpg_keys")
    await expectRedirect(await raw("/admin/users/ann/emails", basic("root")), "/api/v1/admin/users/anna/emails")
    await expectRedirect(await raw("/users/ann/tokens", basic("anna")), "/api/v1/users/anna/tokens")
    expect((await ok("GET", "/users/anna/repos", "root")).map((r: { name: string }) => r.name)).toEqual(["proj"])
    // An unknown name stays an empty 404.
    expect((await raw("/users/never-was/repos")).status).toBe(404)
  })

  it("tells a hidden account's new name only to who may see it", async () => {
    await rename("hidden", "hidden2")
    expect((await raw("/users/hidden")).status).toBe(404)
    expect((await raw("/users/hidden/repos", basic("ben"))).status).toBe(404)
    await expectRedirect(await raw("/users/hidden/repos", basic("hidden2")), "/api/v1/users/hidden2/repos")
    await expectRedirect(await raw("/users/hidden", basic("root")), "/api/v1/users/hidden2")
  })

  it("redirects the web profile and repository pages of the old name", async () => {
    const profile = await fetch(`${hearth.base}/ann?tab=stars`, { redirect: "manual" })
    expect(profile.status).toBe(302)
    expect(profile.headers.get("location")).toBe("/anna?tab=stars")
    const page = await fetch(`${hearth.base}/ann/proj`, { redirect: "manual" })
    expect([302, 307]).toContain(page.status)
    expect(new URL(page.headers.get("location")!, hearth.base).pathname).toBe("/anna/proj")
    expect((await fetch(`${hearth.base}/anna`)).status).toBe(200)
  })

  it("stops redirecting once a new account takes the old name, also after that account is gone", async () => {
    await rename("ben", "benjamin")
    await expectRedirect(await raw("/users/ben/repos"), "/api/v1/users/benjamin/repos")
    await createUser(hearth, { username: "ben", email: "new-ben@example.com" })
    expect((await json(await raw("/users/ben"))).id).not.toBe((await json(await raw("/users/benjamin"))).id)
    expect((await raw("/users/ben/repos")).status).toBe(200)
    await ok("DELETE", "/admin/users/ben", "root")
    // Forgejo deletes the redirect when the name is reused: it does not come back.
    expect((await raw("/users/ben")).status).toBe(404)
    expect((await raw("/users/ben/repos")).status).toBe(404)
  })
})

describe("renaming an organization", () => {
  it("redirects /orgs/{old}/… and /users/{old}/… to the new name at once", async () => {
    await ok("POST", "/orgs", "root", { username: "guild" })
    await ok("POST", "/orgs/guild/repos", "root", { name: "tools" })
    expect((await json(await raw("/orgs/guild"))).name).toBe("guild")
    await ok("POST", "/orgs/guild/rename", "root", { new_name: "guild2" })
    expect(events.find((e) => e._tag === "RenameUser" && e.oldName === "guild")).toMatchObject({
      user: { name: "guild2" },
      isOrganization: true
    })
    await expectRedirect(await raw("/orgs/guild"), "/api/v1/orgs/guild2")
    await expectRedirect(await raw("/orgs/guild/repos?limit=5"), "/api/v1/orgs/guild2/repos?limit=5")
    await expectRedirect(await raw("/orgs/guild/members", basic("root")), "/api/v1/orgs/guild2/members")
    await expectRedirect(await raw("/users/guild/repos"), "/api/v1/users/guild2/repos")
    await expectRedirect(await raw("/repos/guild/tools"), "/api/v1/repos/guild2/tools")
    expect((await json(await raw("/orgs/guild2"))).name).toBe("guild2")
  })
})
