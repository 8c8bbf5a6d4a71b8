// What follows an account's rename (issue 23 item 2): the RenameUser event on the hub, and the old
// name answered as Forgejo's `context.RedirectToUser` on every API route that names an account
// (`/users/{username}/…`, `/admin/users/{username}/…`, `/orgs/{org}/…`: 307 to the same URL under
// the new name, query kept) and on the web profile, at once after the rename; a hidden account's
// new name is not told; a new account taking the old name ends the redirect for good. On the
// fediverse (a real Fedify peer): the old actor URLs redirect, WebFinger for the old `acct:` finds
// the new actor, and followers receive an Update of the Person under its new name.
import * as V from "@fedify/fedify/vocab"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Event } from "../src/events/Events.ts"
import { EventHub } from "../src/events/Hub.ts"
import { eventually, startFederated } from "./support/federation.ts"
import { type Peer, startPeer } from "./support/fedify-peer.ts"
import { basic, createToken, createUser, type Hearth, json, request } from "./support/hearth.ts"

let hearth: Hearth
let peer: Peer
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
  ;[hearth, peer] = await Promise.all([startFederated(), startPeer({ names: ["remote"], firstKnock: "rfc9421" })])
  await hearth.run(
    Effect.gen(function* () {
      const hub = yield* EventHub
      yield* hub.subscribe({
        name: "test",
        handle: (event) => Effect.sync(() => void (event._tag === "RenameUser" && events.push(event)))
      })
    })
  )
  for (const username of ["root", "ann", "ben", "hidden", "fedi"]) {
    await createUser(hearth, {
      username,
      isAdmin: username === "root",
      ...(username === "hidden" ? { visibility: "private" as const } : {})
    })
  }
}, 120_000)
afterAll(async () => {
  await Promise.all([hearth?.close(), peer?.close()])
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

describe("a renamed person on the fediverse", () => {
  it("old actor URLs redirect, WebFinger for the old acct finds the new actor, followers get an Update", async () => {
    const old = `${hearth.base}/api/v1/activitypub/user/fedi`
    await peer.send(new V.Follow({ id: peer.newId("follow"), actor: new URL(peer.actor()), object: new URL(old) }), {
      id: old,
      inbox: `${old}/inbox`
    })
    await eventually(
      async () => ((await ok("GET", "/user/federation/followers", "fedi")).length === 1 ? true : undefined),
      15_000,
      "the follower"
    )
    await rename("fedi", "fedi2")
    const moved = `${hearth.base}/api/v1/activitypub/user/fedi2`

    const actor = await fetch(old, { headers: { accept: "application/activity+json" }, redirect: "manual" })
    expect(actor.status).toBe(307)
    expect(actor.headers.get("location")).toBe(moved)
    const outbox = await fetch(`${old}/outbox?page=1`, { redirect: "manual" })
    expect(outbox.status).toBe(307)
    expect(outbox.headers.get("location")).toBe(`${moved}/outbox?page=1`)
    const host = new URL(hearth.base).host
    const finger = await fetch(`${hearth.base}/.well-known/webfinger?resource=acct:fedi@${host}`)
    expect(finger.status).toBe(200)
    const jrd = (await finger.json()) as { subject: string; links: Array<{ rel: string; href?: string }> }
    expect(jrd.subject).toBe(`acct:fedi2@${host}`)
    expect(jrd.links.find((link) => link.rel === "self")?.href).toBe(moved)
    // The peer reads the new actor (and its key) from there.
    expect(((await peer.lookup(moved)) as V.Person).preferredUsername).toBe("fedi2")

    const update = await eventually(
      async () => peer.verified.find((a) => a.type === "Update" && a.json.actor === moved),
      30_000,
      "the Update of the renamed person"
    )
    expect(update.json.object).toMatchObject({ id: moved, type: "Person", preferredUsername: "fedi2" })
    // Unknown old names stay 404.
    expect((await fetch(`${hearth.base}/api/v1/activitypub/user/never-was`, { redirect: "manual" })).status).toBe(404)
  })
})
