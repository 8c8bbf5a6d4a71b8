// Release events (CONTRACT-WEBHOOKS §3.8; issue 20 item 5): the webhook `release` with Forgejo's
// actions — published (a new release, or an edit that made its tag), updated, deleted; never for a
// draft — delivered to a real receiver on 127.0.0.1 with Forgejo's payload; the tag a release
// makes fires create and push; and a published release of a public repository reaches its
// owner's followers (whoever published it) on a real Fedify peer as a Create of a Note; an
// organization's release makes none (organizations have no actor).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as V from "@fedify/fedify/vocab"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually, startFederated } from "./support/federation.ts"
import { type Peer, startPeer } from "./support/fedify-peer.ts"
import { gitIn } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request } from "./support/hearth.ts"
import { type Receiver, startReceiver } from "./support/receiver.ts"

let hearth: Hearth
let receiver: Receiver
let peer: Peer
let work: string
const call = (user: string, method: string, path: string, body?: unknown) =>
  request(hearth, method, path, basic(user), body)

beforeAll(async () => {
  receiver = await startReceiver()
  ;[hearth, peer] = await Promise.all([
    startFederated({ webhook: { ALLOWED_HOST_LIST: "loopback" } }),
    startPeer({ names: ["fan"] })
  ])
  work = mkdtempSync(join(tmpdir(), "hearth-release-events-"))
  await createUser(hearth, { username: "Alice" })
  await createUser(hearth, { username: "Bob" })
  await createUser(hearth, { username: "Root", isAdmin: true })
  for (const [name, priv] of [
    ["app", false],
    ["hidden", true]
  ] as const) {
    expect((await call("Alice", "POST", "/user/repos", { name, private: priv })).status).toBe(201)
    const res = await call("Alice", "POST", `/repos/Alice/${name}/hooks`, {
      type: "forgejo",
      config: { url: receiver.url(`/${name}`), content_type: "json" },
      events: ["release", "create", "push"],
      active: true
    })
    expect(res.status).toBe(201)
  }
  // Content pushed before anything is listened for: the receiver hears only what the releases do.
  const local = join(work, "src")
  await gitIn(work, ["init", "--quiet", "--initial-branch=main", local])
  writeFileSync(join(local, "README.md"), "one\n")
  await gitIn(local, ["add", "README.md"])
  await gitIn(local, ["commit", "--quiet", "-m", "first"])
  for (const name of ["app", "hidden"]) {
    const remote = `http://Alice:password123@${new URL(hearth.base).host}/Alice/${name}.git`
    await gitIn(local, ["push", "--quiet", remote, "main", "main:refs/tags/pushed"])
  }
  await receiver.wait("/app", 3)
  await receiver.wait("/hidden", 3)
  receiver.received.length = 0
  expect((await call("Alice", "PUT", "/repos/Alice/app/collaborators/Bob", { permission: "write" })).status).toBe(204)
  expect((await call("Bob", "POST", "/orgs", { username: "Guild" })).status).toBe(201)
  expect((await call("Bob", "POST", "/orgs/Guild/repos", { name: "tools", auto_init: true })).status).toBe(201)
}, 120_000)
afterAll(async () => {
  await Promise.all([hearth?.close(), receiver?.close(), peer?.close()])
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

const events = (path: string) =>
  receiver.at(path).map((r) => ({ event: r.headers["x-forgejo-event"], body: JSON.parse(r.body) }))

describe("webhooks", () => {
  it("a new release: its tag's create and push, then release/published with Forgejo's payload", async () => {
    const made = await json(await call("Alice", "POST", "/repos/Alice/app/releases", { tag_name: "v1", body: "notes" }))
    await receiver.wait("/app", 3)
    const got = events("/app")
    expect(got.map((e) => e.event).sort()).toEqual(["create", "push", "release"])
    const release = got.find((e) => e.event === "release")!
    expect(release.body).toMatchObject({
      action: "published",
      release: {
        id: made.id,
        tag_name: "v1",
        name: "v1",
        body: "notes",
        draft: false,
        url: `${hearth.base}/api/v1/repos/Alice/app/releases/${made.id}`,
        html_url: `${hearth.base}/Alice/app/releases/tag/v1`,
        author: { login: "Alice" },
        assets: []
      },
      repository: { full_name: "Alice/app" },
      sender: { login: "Alice" }
    })
    expect(got.find((e) => e.event === "create")!.body).toMatchObject({ ref: "refs/tags/v1", ref_type: "tag" })
  })

  it("an edit sends updated; a draft sends nothing until an edit publishes it (its tag made then)", async () => {
    receiver.received.length = 0
    const v1 = await json(await call("Alice", "GET", "/repos/Alice/app/releases/tags/v1"))
    expect((await call("Alice", "PATCH", `/repos/Alice/app/releases/${v1.id}`, { name: "One" })).status).toBe(200)
    const [updated] = await receiver.wait("/app", 1)
    expect(JSON.parse(updated!.body)).toMatchObject({ action: "updated", release: { name: "One" } })

    receiver.received.length = 0
    const draft = await json(await call("Alice", "POST", "/repos/Alice/app/releases", { tag_name: "v2", draft: true }))
    expect((await call("Alice", "PATCH", `/repos/Alice/app/releases/${draft.id}`, { body: "more" })).status).toBe(200)
    // Publishing makes the tag: create, push and published — and nothing came for the draft before.
    expect((await call("Alice", "PATCH", `/repos/Alice/app/releases/${draft.id}`, { draft: false })).status).toBe(200)
    await receiver.wait("/app", 3)
    const got = events("/app")
    expect(got.map((e) => e.event).sort()).toEqual(["create", "push", "release"])
    expect(got.find((e) => e.event === "release")!.body).toMatchObject({
      action: "published",
      release: { tag_name: "v2", body: "more", draft: false }
    })
  })

  it("a release of an existing tag sends published alone; deleting sends deleted; a draft's delete nothing", async () => {
    receiver.received.length = 0
    const made = await json(await call("Alice", "POST", "/repos/Alice/app/releases", { tag_name: "pushed" }))
    const [published] = await receiver.wait("/app", 1)
    expect(JSON.parse(published!.body)).toMatchObject({ action: "published", release: { tag_name: "pushed" } })

    const draft = await json(await call("Alice", "POST", "/repos/Alice/app/releases", { tag_name: "v3", draft: true }))
    expect((await call("Alice", "DELETE", `/repos/Alice/app/releases/${draft.id}`)).status).toBe(204)
    expect((await call("Alice", "DELETE", `/repos/Alice/app/releases/${made.id}`)).status).toBe(204)
    await receiver.wait("/app", 2)
    // Deliveries to one hook go in order: the draft's delete sent nothing before this.
    const got = events("/app")
    expect(got.map((e) => [e.event, e.body.action])).toEqual([
      ["release", "published"],
      ["release", "deleted"]
    ])
    expect(got[1]!.body).toMatchObject({ release: { id: made.id, tag_name: "pushed" }, sender: { login: "Alice" } })
  })
})

describe("federation", () => {
  it("a published release of a public repository reaches the followers as a Note; drafts and private ones do not", async () => {
    const alice = `${hearth.base}/api/v1/activitypub/user/Alice`
    await peer.send(new V.Follow({ id: peer.newId("follow"), actor: new URL(peer.actor()), object: new URL(alice) }), {
      id: alice,
      inbox: `${alice}/inbox`
    })
    await eventually(
      async () =>
        (await json(await call("Alice", "GET", "/user/federation/followers"))).length === 1 ? true : undefined,
      15_000,
      "Alice's follower"
    )
    const notes = () =>
      peer.verified.filter(
        (a) => a.type === "Create" && a.json.actor === alice && String(a.json.object?.content).includes("release")
      )
    await call("Alice", "POST", "/repos/Alice/hidden/releases", { tag_name: "h1" })
    await call("Alice", "POST", "/repos/Alice/app/releases", { tag_name: "d1", draft: true })
    expect((await call("Alice", "POST", "/repos/Alice/app/releases", { tag_name: "v9", name: "Nine" })).status).toBe(
      201
    )
    const note = await eventually(async () => notes()[0], 15_000, "the Note of the release")
    expect(note.json.object).toMatchObject({ type: "Note", url: `${hearth.base}/Alice/app/releases/tag/v9` })
    expect(note.json.object.content).toContain("published the release Nine (v9) of Alice/app")
    // The push of the tag the release made is not a git push (not over HTTP or SSH): no note of it,
    // and none for the private repository's release or the draft.
    const fromAlice = peer.verified.filter((a) => a.type === "Create" && a.json.actor === alice)
    expect(fromAlice.map((a) => String(a.json.object?.content))).toEqual([
      expect.stringContaining("published the release Nine (v9) of Alice/app")
    ])
  })

  it("a release is the owner's news: a collaborator's release reaches the owner's followers, not the collaborator's", async () => {
    const actor = (name: string) => `${hearth.base}/api/v1/activitypub/user/${name}`
    const bob = actor("Bob")
    await peer.send(new V.Follow({ id: peer.newId("follow"), actor: new URL(peer.actor()), object: new URL(bob) }), {
      id: bob,
      inbox: `${bob}/inbox`
    })
    await eventually(
      async () =>
        (await json(await call("Bob", "GET", "/user/federation/followers"))).length === 1 ? true : undefined,
      15_000,
      "Bob's follower"
    )
    const before = peer.verified.length
    // An organization has no actor: its release makes no note (nor one of Bob's).
    expect((await call("Bob", "POST", "/repos/Guild/tools/releases", { tag_name: "g1" })).status).toBe(201)
    expect((await call("Bob", "POST", "/repos/Alice/app/releases", { tag_name: "v10" })).status).toBe(201)
    const note = await eventually(
      async () =>
        peer.verified.slice(before).find((a) => a.type === "Create" && String(a.json.object?.content).includes("v10")),
      15_000,
      "the Note of Bob's release"
    )
    expect(note.json.actor).toBe(actor("Alice"))
    expect(note.json.object.content).toContain("Bob published the release v10 of Alice/app")
    // Every federation job done (the events handled, the deliveries made): nothing else was sent.
    await eventually(
      async () => {
        const jobs = (await json(await call("Root", "GET", "/admin/jobs?limit=50"))) as Array<{
          kind: string
          state: string
        }>
        return jobs.every(
          (j) => !(j.kind === "events-federation" || j.kind === "federation-outbox") || j.state === "succeeded"
        )
          ? true
          : undefined
      },
      15_000,
      "the federation jobs"
    )
    const sent = peer.verified.slice(before).filter((a) => a.type === "Create")
    expect(sent.map((a) => [a.json.actor, String(a.json.object?.content)])).toEqual([
      [actor("Alice"), expect.stringContaining("Bob published the release v10 of Alice/app")]
    ])
  })
})
