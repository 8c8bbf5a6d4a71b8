// What this instance shows the fediverse (issue 8 items 2 and 3): Person
// actors by name and by id, the ForgeFed Repository and instance actors, NodeInfo 2.1, WebFinger
// with Forgejo's JSON, paged collections; keys made once and kept.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startFederated } from "./support/federation.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let host: string
const AP = "application/activity+json"

beforeAll(async () => {
  hearth = await startFederated()
  host = new URL(hearth.base).host
  await createUser(hearth, { username: "AliceCase", fullName: "Alice Example" })
  await createUser(hearth, { username: "hidden", visibility: "private" })
  await createUser(hearth, { username: "limited", visibility: "limited" })
  await createUser(hearth, { username: "bob" })
  await createUser(hearth, { username: "root", isAdmin: true })
})
afterAll(() => hearth?.close())

const get = (path: string, accept?: string) =>
  fetch(`${hearth.base}${path}`, accept === undefined ? {} : { headers: { accept } })
const actorUrl = (name: string) => `${hearth.base}/api/v1/activitypub/user/${name}`

describe("Person actors", () => {
  it("GET /api/v1/activitypub/user/{name} answers the Person as application/activity+json", async () => {
    const res = await get("/api/v1/activitypub/user/AliceCase", AP)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe(AP)
    const person = await json(res)
    expect(person["@context"]).toContain("https://www.w3.org/ns/activitystreams")
    expect(person).toMatchObject({
      id: actorUrl("AliceCase"),
      type: "Person",
      preferredUsername: "AliceCase",
      name: "Alice Example",
      url: `${hearth.base}/AliceCase`,
      inbox: `${actorUrl("AliceCase")}/inbox`,
      outbox: `${actorUrl("AliceCase")}/outbox`,
      followers: `${actorUrl("AliceCase")}/followers`,
      following: `${actorUrl("AliceCase")}/following`,
      endpoints: { sharedInbox: `${hearth.base}/api/v1/activitypub/inbox` }
    })
    expect(person.icon).toMatchObject({ type: "Image", mediaType: "image/png" })
    expect(person.publicKey).toMatchObject({
      id: `${actorUrl("AliceCase")}#main-key`,
      owner: actorUrl("AliceCase"),
      type: "CryptographicKey"
    })
    expect(person.publicKey.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/)
    // RSA for HTTP signatures, Ed25519 for object proofs, both as Multikeys.
    const methods = person.assertionMethod as Array<{ type: string; controller: string; publicKeyMultibase: string }>
    expect(methods).toHaveLength(2)
    expect(methods.every((m) => m.type === "Multikey" && m.controller === actorUrl("AliceCase"))).toBe(true)
    expect(methods.some((m) => m.publicKeyMultibase.startsWith("z6Mk"))).toBe(true) // an Ed25519 key
  })

  it("finds the user whatever the letter case of the request, and keeps the stored case", async () => {
    const person = await json(await get("/api/v1/activitypub/user/alicecase", AP))
    expect(person.id).toBe(actorUrl("AliceCase"))
    expect(person.preferredUsername).toBe("AliceCase")
  })

  it("answers clients that send no Accept, */* or plain JSON with the actor all the same", async () => {
    // A browser's text/html goes to the profile page instead (issue 17; test/web-people.test.ts).
    for (const accept of [undefined, "*/*", "application/json"]) {
      const res = await get("/api/v1/activitypub/user/AliceCase", accept)
      expect(res.status, `Accept: ${accept}`).toBe(200)
      expect(res.headers.get("content-type")).toBe(AP)
      expect((await json(res)).id).toBe(actorUrl("AliceCase"))
    }
  })

  it("answers Forgejo's /user-id/{id} with the same Person", async () => {
    const { id } = await json(await request(hearth, "GET", "/users/AliceCase"))
    const byId = await json(await get(`/api/v1/activitypub/user-id/${id}`, AP))
    const byName = await json(await get("/api/v1/activitypub/user/AliceCase", AP))
    expect(byId).toEqual(byName)
  })

  it("404 for unknown users, private and limited ones, organizations, and a malformed id", async () => {
    await request(hearth, "POST", "/orgs", basic("bob"), { username: "someorg" })
    const { id: hiddenId } = await json(await request(hearth, "GET", "/users/hidden", basic("root")))
    for (const path of [
      "user/nobody",
      "user/hidden",
      "user/limited",
      "user/someorg",
      `user-id/${hiddenId}`,
      "user-id/999999",
      "user-id/abc"
    ]) {
      const res = await get(`/api/v1/activitypub/${path}`, AP)
      expect(res.status, path).toBe(404)
    }
  })

  it("makes each user's key pairs once and keeps them (sealed) in the database", async () => {
    const first = await json(await get("/api/v1/activitypub/user/bob", AP))
    const second = await json(await get("/api/v1/activitypub/user/BOB", AP))
    expect(second.publicKey.publicKeyPem).toBe(first.publicKey.publicKeyPem)
    expect(second.assertionMethod).toEqual(first.assertionMethod)
    const rows = await hearth.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        return yield* sql`SELECT k.algorithm, k.private_jwk FROM federation_keys k JOIN users u ON k.owner = 'user:' || u.id
        WHERE u.lower_name = 'bob' ORDER BY k.algorithm`
      })
    )
    expect(rows.map((r) => r.algorithm)).toEqual(["ed25519", "rsa"])
    // The private halves are not stored as readable JWKs.
    for (const row of rows) expect(String(row.private_jwk)).not.toContain('"d"')
  })
})

describe("the instance actor and NodeInfo", () => {
  it("GET /api/v1/activitypub/actor is an Application with a key and the shared inbox", async () => {
    const res = await get("/api/v1/activitypub/actor", AP)
    expect(res.status).toBe(200)
    const actor = await json(res)
    expect(actor).toMatchObject({
      id: `${hearth.base}/api/v1/activitypub/actor`,
      type: "Application",
      preferredUsername: "ghost",
      inbox: `${hearth.base}/api/v1/activitypub/actor/inbox`
    })
    expect(actor.publicKey.id).toBe(`${hearth.base}/api/v1/activitypub/actor#main-key`)
  })

  it("/.well-known/nodeinfo points at a NodeInfo 2.1 document naming the software hearth", async () => {
    const links = await json(await get("/.well-known/nodeinfo"))
    expect(links.links).toEqual([
      { rel: "http://nodeinfo.diaspora.software/ns/schema/2.1", href: `${hearth.base}/api/v1/nodeinfo` }
    ])
    const res = await get("/api/v1/nodeinfo")
    expect(res.headers.get("content-type")).toContain("application/json")
    const info = await json(res)
    expect(info).toMatchObject({ version: "2.1", software: { name: "hearth" }, protocols: ["activitypub"] })
    expect(info.usage.users.total).toBe(5) // the active individual users (hidden and limited too); organizations do not count
  })

  it("shows no user counts when [federation] SHARE_USER_STATISTICS is false", async () => {
    const quiet = await startFederated({ federation: { SHARE_USER_STATISTICS: "false" } })
    try {
      await createUser(quiet, { username: "someone" })
      const info = await json(await fetch(`${quiet.base}/api/v1/nodeinfo`))
      expect(info.software.name).toBe("hearth")
      expect(info.usage).toEqual({ users: {}, localPosts: 0 })
    } finally {
      await quiet.close()
    }
  })
})

describe("WebFinger", () => {
  const webfinger = (resource: string) => get(`/.well-known/webfinger?resource=${encodeURIComponent(resource)}`)

  it("answers acct: with Forgejo's JSON: subject, aliases, profile, avatar, self and subscribe links", async () => {
    const res = await webfinger(`acct:alicecase@${host}`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("application/jrd+json")
    expect(res.headers.get("access-control-allow-origin")).toBe("*")
    expect(await json(res)).toEqual({
      subject: `acct:AliceCase@${host}`,
      aliases: [`${hearth.base}/AliceCase`, actorUrl("AliceCase"), "mailto:alicecase@example.com"],
      links: [
        { rel: "http://webfinger.net/rel/profile-page", type: "text/html", href: `${hearth.base}/AliceCase` },
        {
          rel: "http://webfinger.net/rel/avatar",
          type: "image/png",
          href: `${hearth.base}/avatars/identicon/alicecase`
        },
        { rel: "self", type: AP, href: actorUrl("AliceCase") },
        {
          rel: "http://ostatus.org/schema/1.0/subscribe",
          template: `${hearth.base}/api/v1/authorize_interaction?uri={uri}`
        }
      ]
    })
  })

  it("finds the same person by profile URL, actor URL and public e-mail", async () => {
    for (const resource of [`${hearth.base}/AliceCase`, actorUrl("AliceCase"), "mailto:alicecase@example.com"]) {
      const jrd = await json(await webfinger(resource))
      expect(jrd.subject, resource).toBe(`acct:AliceCase@${host}`)
    }
  })

  it("offers mailto: only for public e-mails", async () => {
    expect(
      (
        await request(hearth, "PATCH", "/admin/users/bob", basic("root"), {
          login_name: "bob",
          source_id: 0,
          hide_email: true
        })
      ).status
    ).toBe(200)
    expect((await webfinger("mailto:bob@example.com")).status).toBe(404)
    const jrd = await json(await webfinger(`acct:bob@${host}`))
    expect(jrd.aliases.some((a: string) => a.startsWith("mailto:"))).toBe(false)
  })

  it("400 for another host and malformed resources, 404 for unknown or hidden users; CORS on all", async () => {
    for (const [resource, status] of [
      ["acct:alicecase@elsewhere.example", 400],
      ["acct:alicecase", 400],
      ["https://elsewhere.example/alicecase", 400],
      ["", 400],
      [`acct:nobody@${host}`, 404],
      [`acct:hidden@${host}`, 404],
      [`acct:limited@${host}`, 404]
    ] as const) {
      const res = await webfinger(resource)
      expect(res.status, resource).toBe(status)
      expect(res.headers.get("access-control-allow-origin")).toBe("*")
      if (status === 400) expect((await json(res)).message).toBeTruthy()
    }
  })

  it("names a public repository's ForgeFed actor by its page URL; private repositories are not found", async () => {
    expect((await request(hearth, "POST", "/user/repos", basic("AliceCase"), { name: "tools" })).status).toBe(201)
    expect(
      (await request(hearth, "POST", "/user/repos", basic("AliceCase"), { name: "secret", private: true })).status
    ).toBe(201)
    const { id } = await json(await request(hearth, "GET", "/repos/AliceCase/tools"))
    const jrd = await json(await webfinger(`${hearth.base}/AliceCase/tools`))
    expect(jrd.links).toContainEqual({
      rel: "self",
      type: AP,
      href: `${hearth.base}/api/v1/activitypub/repository-id/${id}`
    })
    expect((await webfinger(`${hearth.base}/AliceCase/secret`)).status).toBe(404)
  })
})

describe("repository actors", () => {
  it("a public repository is a ForgeFed Repository with an inbox; private ones are 404", async () => {
    await request(hearth, "POST", "/user/repos", basic("AliceCase"), { name: "forged", description: "a forge" })
    await request(hearth, "POST", "/user/repos", basic("AliceCase"), { name: "closed", private: true })
    const { id } = await json(await request(hearth, "GET", "/repos/AliceCase/forged"))
    const res = await get(`/api/v1/activitypub/repository-id/${id}`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe(AP)
    const uri = `${hearth.base}/api/v1/activitypub/repository-id/${id}`
    expect(await json(res)).toMatchObject({
      id: uri,
      type: "Repository",
      name: "forged",
      summary: "a forge",
      url: `${hearth.base}/AliceCase/forged`,
      attributedTo: actorUrl("AliceCase"),
      inbox: `${uri}/inbox`
    })
    const { id: closed } = await json(await request(hearth, "GET", "/repos/AliceCase/closed", basic("AliceCase")))
    expect((await get(`/api/v1/activitypub/repository-id/${closed}`)).status).toBe(404)
    expect((await get("/api/v1/activitypub/repository-id/987654")).status).toBe(404)
  })
})

describe("collections", () => {
  it("the outbox is an OrderedCollection of the user's public activity, paged, newest first", async () => {
    await createUser(hearth, { username: "busy" })
    for (let i = 0; i < 23; i++) {
      expect((await request(hearth, "POST", "/user/repos", basic("busy"), { name: `r${i}` })).status).toBe(201)
    }
    await request(hearth, "POST", "/user/repos", basic("busy"), { name: "private-one", private: true })
    const outbox = `${actorUrl("busy")}/outbox`
    const summary = await json(await get("/api/v1/activitypub/user/busy/outbox"))
    expect(summary).toMatchObject({
      id: outbox,
      type: "OrderedCollection",
      totalItems: 23,
      first: `${outbox}?page=1`,
      last: `${outbox}?page=2`
    })
    const first = await json(await get("/api/v1/activitypub/user/busy/outbox?page=1"))
    expect(first).toMatchObject({ type: "OrderedCollectionPage", partOf: outbox, next: `${outbox}?page=2` })
    expect(first.orderedItems).toHaveLength(20)
    expect(first.orderedItems[0].object.content).toContain("busy/r22")
    const second = await json(await get("/api/v1/activitypub/user/busy/outbox?page=2"))
    expect(second.orderedItems).toHaveLength(3)
    expect(second.prev).toBe(`${outbox}?page=1`)
    expect(second.next).toBeUndefined()
    // Every published activity can be fetched by its id, and so can its note.
    const activity = first.orderedItems[0]
    const fetched = await json(await get(new URL(activity.id).pathname))
    expect(fetched.id).toBe(activity.id)
    expect((await json(await get(new URL(activity.object.id).pathname))).type).toBe("Note")
    // Forgejo's path for the activity (`…/activities/{id}/activity`) answers it too.
    expect((await json(await get(`${new URL(activity.id).pathname}/activity`))).id).toBe(activity.id)
    expect((await get("/api/v1/activitypub/user/busy/outbox?page=0")).status).toBe(400)
  })

  it("followers, following and liked are OrderedCollections (empty for a new user)", async () => {
    for (const kind of ["followers", "following", "liked"]) {
      const collection = await json(await get(`/api/v1/activitypub/user/AliceCase/${kind}`))
      expect(collection, kind).toMatchObject({
        id: `${actorUrl("AliceCase")}/${kind}`,
        type: "OrderedCollection",
        totalItems: 0
      })
    }
    expect((await get("/api/v1/activitypub/user/hidden/followers")).status).toBe(404)
  })
})

describe("[federation] ENABLED = false", () => {
  it("answers none of the federation routes", async () => {
    const off = await startHearth({ federation: { ENABLED: "false" } })
    try {
      await createUser(off, { username: "carol" })
      for (const path of [
        "/api/v1/activitypub/user/carol",
        "/.well-known/webfinger?resource=acct:carol@x",
        "/.well-known/nodeinfo",
        "/api/v1/nodeinfo"
      ]) {
        expect((await fetch(`${off.base}${path}`)).status, path).toBe(404)
      }
      const res = await fetch(`${off.base}/api/v1/activitypub/user/carol/inbox`, { method: "POST", body: "{}" })
      expect(res.status).toBe(404)
    } finally {
      await off.close()
    }
  })
})
