// Hearth's ActivityPub inboxes (issue 8 item 4 and its "Bad input"): every rule of
// federation/Inbox.ts's header, each broken alone by a remote actor that signs its own requests
// (test/support/activitypub.ts), and every refusal checked to change nothing.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Federation } from "../federation/Service.ts"
import {
  type Activity,
  AS,
  postRaw,
  type RemoteActor,
  type RemoteServer,
  send,
  startRemote,
  verifyReceived
} from "./support/activitypub.ts"
import { eventually, startFederated } from "./support/federation.ts"
import { basic, createUser, type Hearth, json, request } from "./support/hearth.ts"

/** Defaults, a 1 MiB body cap, and `localhost` blocked (remotes live on 127.0.0.1). */
let hearth: Hearth
/** Only Ed25519 signatures. */
let strict: Hearth
/** Unsigned activities taken; only hosts named 127.0.0.1 federated with. */
let lax: Hearth
let remote: RemoteServer
/** Another origin than `remote`'s (another port). */
let elsewhere: RemoteServer
/** The same server named `localhost`: a host `hearth` blocks and `lax` does not allow. */
let blocked: RemoteServer

beforeAll(async () => {
  ;[hearth, strict, lax, remote, elsewhere, blocked] = await Promise.all([
    startFederated({ federation: { BLOCKED_HOSTS: "localhost", MAX_SIZE: "1" } }),
    startFederated({ federation: { SIGNATURE_ALGORITHMS: "ed25519" } }),
    startFederated({ federation: { SIGNATURE_ENFORCED: "false", ALLOWED_HOSTS: "127.0.0.1" } }),
    startRemote(),
    startRemote(),
    startRemote({ hostname: "localhost" })
  ])
  for (const h of [hearth, strict, lax]) await createUser(h, { username: "Alice" })
  await createUser(hearth, { username: "Bob" })
  await createUser(hearth, { username: "Hidden", visibility: "private" })
}, 120_000)
afterAll(async () => {
  await Promise.all([
    hearth?.close(),
    strict?.close(),
    lax?.close(),
    remote?.close(),
    elsewhere?.close(),
    blocked?.close()
  ])
})

let unique = 0
/** A fresh remote actor (its documents and keys cached nowhere yet). */
const someone = (server = remote, options?: { readonly ed25519?: boolean; readonly owner?: string }) =>
  server.actor(`r${++unique}`, options)

const person = (h: Hearth, name: string) => `${h.base}/api/v1/activitypub/user/${name}`
const repository = (h: Hearth, id: number) => `${h.base}/api/v1/activitypub/repository-id/${id}`
const inbox = {
  shared: (h: Hearth) => `${h.base}/api/v1/activitypub/inbox`,
  user: (h: Hearth, name: string) => `${person(h, name)}/inbox`,
  repository: (h: Hearth, id: number) => `${repository(h, id)}/inbox`
}

interface Repo {
  readonly id: number
  readonly name: string
  readonly stars: () => Promise<number>
}
/** A new repository of Alice. */
const newRepo = async (h: Hearth, options: { readonly private?: boolean } = {}): Promise<Repo> => {
  const name = `repo${++unique}`
  const res = await request(h, "POST", "/user/repos", basic("Alice"), { name, private: options.private === true })
  expect(res.status).toBe(201)
  const { id } = await json(res)
  return {
    id,
    name,
    stars: async () => (await json(await request(h, "GET", `/repos/Alice/${name}`, basic("Alice")))).stars_count
  }
}

const listOf = (what: "followers" | "following" | "activities") => async (h: Hearth, user: string) =>
  json(await request(h, "GET", `/user/federation/${what}`, basic(user))) as Promise<Array<any>>
const followers = listOf("followers")
const following = listOf("following")
const received = listOf("activities")

/** A Like of a repository: what most tests send, since its effect (stars_count) is easy to read. */
const like = (actor: RemoteActor, h: Hearth, repo: Repo) => actor.activity("Like", repository(h, repo.id))

describe("body size", () => {
  it("a Content-Length over MAX_SIZE gets 413 before the body is read", async () => {
    const repo = await newRepo(hearth)
    const alice = await someone()
    const signed = await alice.sign(inbox.repository(hearth, repo.id), like(alice, hearth, repo))
    signed.headers.set("content-length", String(2 * 1024 * 1024))
    // Headers only: an answer can only come before the body.
    expect((await postRaw(signed.url, signed.headers, undefined)).status).toBe(413)
    expect(await repo.stars()).toBe(0)
  })

  it("a chunked body over MAX_SIZE gets 413; the same activity under it is taken", async () => {
    const repo = await newRepo(hearth)
    const alice = await someone()
    const padded = (size: number) => {
      const activity = like(alice, hearth, repo)
      return { ...activity, summary: "x".repeat(size - JSON.stringify({ ...activity, summary: "" }).length) }
    }
    const over = await alice.sign(inbox.repository(hearth, repo.id), padded(1024 * 1024 + 1))
    expect((await postRaw(over.url, over.headers, over.body, { chunked: true })).status).toBe(413)
    expect(await repo.stars()).toBe(0)
    const under = await alice.sign(inbox.repository(hearth, repo.id), padded(1024 * 1024 - 100))
    expect((await postRaw(under.url, under.headers, under.body, { chunked: true })).status).toBe(202)
    expect(await repo.stars()).toBe(1)
  })
})

describe("malformed activities", () => {
  it("400 for a body that is not JSON, not an object, or has no type or actor, or an id not on the actor's server", async () => {
    const repo = await newRepo(hearth)
    const alice = await someone()
    const good = like(alice, hearth, repo)
    const { type: _t, ...noType } = good
    const { actor: _a, ...noActor } = good
    const { id: _i, ...noId } = good
    const bodies: Array<unknown> = [
      "{not json",
      "[1, 2]",
      '"Like"',
      "null",
      noType,
      noActor,
      { ...good, actor: "not a URL" },
      noId,
      { ...good, id: `${elsewhere.base}/activities/1` }
    ]
    for (const body of bodies) {
      // Signed properly: what refuses it is its shape.
      const answer = await alice.post(inbox.repository(hearth, repo.id), body)
      expect(answer.status, JSON.stringify(body)).toBe(400)
    }
    expect(await repo.stars()).toBe(0)
  })

  it("403 for an actor on a host in BLOCKED_HOSTS, and its server is not even asked", async () => {
    const repo = await newRepo(hearth)
    const outcast = await someone(blocked)
    const answer = await outcast.post(inbox.repository(hearth, repo.id), like(outcast, hearth, repo))
    expect(answer.status).toBe(403)
    expect(blocked.requests.filter((r) => r.method === "GET")).toEqual([])
    expect(await repo.stars()).toBe(0)
  })

  it("403 for an actor on a host a names-only ALLOWED_HOSTS does not list; 202 for one it lists", async () => {
    const repo = await newRepo(lax)
    const outcast = await someone(blocked)
    expect(
      (await outcast.post(inbox.repository(lax, repo.id), like(outcast, lax, repo), { spec: "none" })).status
    ).toBe(403)
    expect(await repo.stars()).toBe(0)
    const friend = await someone()
    expect((await friend.post(inbox.repository(lax, repo.id), like(friend, lax, repo), { spec: "none" })).status).toBe(
      202
    )
    expect(await repo.stars()).toBe(1)
  })
})

describe("signatures", () => {
  /** Posts a Like of a new repository per attempt; the answer and whether it starred. */
  const attempt = async (
    sign: (actor: RemoteActor, url: string, activity: Activity) => Promise<{ status: number }>
  ) => {
    const repo = await newRepo(hearth)
    const actor = await someone()
    const answer = await sign(actor, inbox.repository(hearth, repo.id), like(actor, hearth, repo))
    return { status: answer.status, stars: await repo.stars() }
  }
  const refused = (status: number) => ({ status, stars: 0 })
  const TAKEN = { status: 202, stars: 1 }

  it("takes what Fedify signs, in both formats, and hand-signed requests half an hour old", async () => {
    const halfHourAgo = new Date(Date.now() - 30 * 60_000)
    expect(await attempt((a, url, act) => a.post(url, act, { spec: "rfc9421" }))).toEqual(TAKEN)
    expect(await attempt((a, url, act) => a.post(url, act, { spec: "draft-cavage-http-signatures-12" }))).toEqual(TAKEN)
    expect(await attempt((a, url, act) => a.post(url, act, { spec: "rfc9421", at: halfHourAgo }))).toEqual(TAKEN)
    expect(
      await attempt((a, url, act) => a.post(url, act, { spec: "draft-cavage-http-signatures-12", at: halfHourAgo }))
    ).toEqual(TAKEN)
  })

  it("401 without a signature", async () => {
    expect(await attempt((a, url, act) => a.post(url, act, { spec: "none" }))).toEqual(refused(401))
  })

  it("RFC 9421: 401 without Content-Digest, or when the digest, the method, the target or the date is not signed", async () => {
    const rfc = { spec: "rfc9421" } as const
    expect(await attempt((a, url, act) => a.post(url, act, { ...rfc, drop: ["content-digest"] }))).toEqual(refused(401))
    // A body the signature does not cover could be anything: here a Like where a Note was signed.
    const noDigest = ["@method", "@target-uri", "@authority", "host", "date"]
    expect(
      await attempt(async (a, url, act) => {
        const signed = await a.sign(url, { ...act, type: "Note" }, { ...rfc, components: noDigest })
        signed.body = JSON.stringify(act)
        return send(signed)
      })
    ).toEqual(refused(401))
    expect(
      await attempt((a, url, act) =>
        a.post(url, act, { ...rfc, components: ["@target-uri", "date", "content-digest"] })
      )
    ).toEqual(refused(401))
    expect(
      await attempt((a, url, act) =>
        a.post(url, act, { ...rfc, components: ["@method", "@authority", "date", "content-digest"] })
      )
    ).toEqual(refused(401))
    // The date is signed as the `created` parameter (which the hour is checked on), or the Date header.
    const noDate = ["@method", "@target-uri", "content-digest"]
    expect(await attempt((a, url, act) => a.post(url, act, { ...rfc, components: noDate, created: false }))).toEqual(
      refused(401)
    )
    expect(await attempt((a, url, act) => a.post(url, act, { ...rfc, components: noDate }))).toEqual(TAKEN)
  })

  it("RFC 9421: every signature of the request must follow the rules, not only the first", async () => {
    // sig1 covers everything but does not verify; sig2 verifies but leaves out the body (a Note
    // signed, a Like sent).
    expect(
      await attempt(async (a, url, act) => {
        const decoy = { ...act, type: "Note" }
        const full = await a.sign(url, act, { spec: "rfc9421", label: "sig1", keys: (await someone()).keys })
        const partial = await a.sign(url, decoy, {
          spec: "rfc9421",
          label: "sig2",
          components: ["@method", "@target-uri", "date"]
        })
        const headers = new Headers(full.headers)
        headers.set(
          "signature-input",
          `${full.headers.get("signature-input")}, ${partial.headers.get("signature-input")}`
        )
        headers.set("signature", `${full.headers.get("signature")}, ${partial.headers.get("signature")}`)
        return postRaw(url, headers, JSON.stringify(act))
      })
    ).toEqual(refused(401))
  })

  it("draft-cavage: 401 without Digest, or when (request-target), digest or date is not signed", async () => {
    const cavage = { spec: "draft-cavage-http-signatures-12" } as const
    expect(await attempt((a, url, act) => a.post(url, act, { ...cavage, drop: ["digest"] }))).toEqual(refused(401))
    for (const headers of [
      ["host", "date", "digest"],
      ["(request-target)", "host", "date"],
      ["(request-target)", "host", "digest"]
    ]) {
      expect(await attempt((a, url, act) => a.post(url, act, { ...cavage, headers })), headers.join(" ")).toEqual(
        refused(401)
      )
    }
  })

  it("401 for a signature that does not verify, and for a body changed after signing", async () => {
    for (const spec of ["rfc9421", "draft-cavage-http-signatures-12"] as const) {
      const stranger = (await someone()).keys
      expect(await attempt((a, url, act) => a.post(url, act, { spec, keys: stranger })), spec).toEqual(refused(401))
      expect(
        await attempt(async (a, url, act) => {
          const signed = await a.sign(url, act, { spec })
          signed.body = JSON.stringify({ ...act, object: `${act.object}0` })
          return send(signed)
        }),
        spec
      ).toEqual(refused(401))
    }
  })

  it("401 for a Date or created more than an hour old or ahead", async () => {
    const hour = 61 * 60_000
    for (const spec of ["rfc9421", "draft-cavage-http-signatures-12"] as const) {
      for (const at of [new Date(Date.now() - hour), new Date(Date.now() + hour)]) {
        expect(await attempt((a, url, act) => a.post(url, act, { spec, at })), `${spec} ${at.toISOString()}`).toEqual(
          refused(401)
        )
      }
    }
  })

  it("401 when the key cannot be fetched", async () => {
    expect(
      await attempt((a, url, act) => {
        a.mode = "gone"
        return a.post(url, act)
      })
    ).toEqual(refused(401))
    const gone = await startRemote()
    const actor = await gone.actor("vanished")
    await gone.close()
    const repo = await newRepo(hearth)
    expect((await actor.post(inbox.repository(hearth, repo.id), like(actor, hearth, repo))).status).toBe(401)
    expect(await repo.stars()).toBe(0)
  })

  it("401, not an error, for a draft-cavage signature made with an Ed25519 key (Fedify checks those as RSA)", async () => {
    const repo = await newRepo(hearth)
    const actor = await someone(remote, { ed25519: true })
    const answer = await actor.post(inbox.repository(hearth, repo.id), like(actor, hearth, repo), {
      spec: "draft-cavage-http-signatures-12"
    })
    expect(answer.status).toBe(401)
    expect(await repo.stars()).toBe(0)
    // The same key in RFC 9421 is fine.
    expect(
      (await actor.post(inbox.repository(hearth, repo.id), like(actor, hearth, repo), { spec: "rfc9421" })).status
    ).toBe(202)
    expect(await repo.stars()).toBe(1)
  })

  it("403 for a valid signature made with the key of another actor than the activity's", async () => {
    const repo = await newRepo(hearth)
    const alice = await someone()
    const mallory = await someone()
    expect((await mallory.post(inbox.repository(hearth, repo.id), like(alice, hearth, repo))).status).toBe(403)
    expect(await repo.stars()).toBe(0)
  })

  it("403 for a key on another server that claims the activity's actor as its owner", async () => {
    const repo = await newRepo(hearth)
    const alice = await someone()
    expect((await alice.post(inbox.repository(hearth, repo.id), like(alice, hearth, repo))).status).toBe(202)
    // Mallory's server publishes a key "owned" by Alice and undoes her star with it.
    const mallory = await someone(elsewhere, { owner: alice.id })
    const undo = alice.activity("Undo", {
      id: `${alice.id}/activities/x`,
      type: "Like",
      actor: alice.id,
      object: repository(hearth, repo.id)
    })
    expect((await mallory.post(inbox.repository(hearth, repo.id), undo)).status).toBe(403)
    expect(await repo.stars()).toBe(1)
  })
})

describe("SIGNATURE_ALGORITHMS", () => {
  it("with only ed25519 allowed, RSA signatures get 401 whatever algorithm name they give (or none)", async () => {
    const repo = await newRepo(strict)
    const rsa = await someone()
    const url = inbox.repository(strict, repo.id)
    const attempts = [
      { spec: "rfc9421" },
      { spec: "rfc9421", algorithm: null },
      { spec: "draft-cavage-http-signatures-12" },
      { spec: "draft-cavage-http-signatures-12", algorithm: "hs2019" },
      { spec: "draft-cavage-http-signatures-12", algorithm: null }
    ] as const
    for (const options of attempts) {
      expect((await rsa.post(url, like(rsa, strict, repo), options)).status, JSON.stringify(options)).toBe(401)
    }
    expect(await repo.stars()).toBe(0)
    // An Ed25519 signature is taken there.
    const ed = await someone(remote, { ed25519: true })
    expect((await ed.post(url, like(ed, strict, repo), { spec: "rfc9421" })).status).toBe(202)
    expect(await repo.stars()).toBe(1)
  })
})

describe("SIGNATURE_ENFORCED = false", () => {
  it("takes unsigned activities", async () => {
    const repo = await newRepo(lax)
    const alice = await someone()
    expect((await alice.post(inbox.repository(lax, repo.id), like(alice, lax, repo), { spec: "none" })).status).toBe(
      202
    )
    expect(await repo.stars()).toBe(1)
  })
})

describe("replays", () => {
  it("an activity id handled before changes nothing, even re-signed: Like, Undo, the same Like again", async () => {
    const repo = await newRepo(hearth)
    const alice = await someone()
    const url = inbox.repository(hearth, repo.id)
    const liked = like(alice, hearth, repo)
    expect((await alice.post(url, liked)).status).toBe(202)
    expect((await alice.post(url, liked, { spec: "draft-cavage-http-signatures-12" })).status).toBe(202)
    expect(await repo.stars()).toBe(1)
    expect((await alice.post(url, alice.activity("Undo", liked))).status).toBe(202)
    expect(await repo.stars()).toBe(0)
    // The same Like, signed anew, through another inbox.
    expect((await alice.post(inbox.shared(hearth), liked, { spec: "draft-cavage-http-signatures-12" })).status).toBe(
      202
    )
    expect(await repo.stars()).toBe(0)
  })

  it("a refused activity is not taken as handled: the same one through the right inbox counts", async () => {
    const repo = await newRepo(hearth)
    const alice = await someone()
    const liked = like(alice, hearth, repo)
    expect((await alice.post(inbox.user(hearth, "Alice"), liked)).status).toBe(422)
    expect((await alice.post(inbox.repository(hearth, repo.id), liked)).status).toBe(202)
    expect(await repo.stars()).toBe(1)
  })

  it("the same Follow delivered five times at once is handled once: one Accept", async () => {
    const lee = await someone()
    const follow = lee.activity("Follow", person(hearth, "Alice"))
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => lee.post(inbox.user(hearth, "Alice"), follow)))
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202])
    // A later Follow's Accept comes after any Accept of the first (Alice's deliveries go in order).
    const later = lee.activity("Follow", person(hearth, "Alice"))
    expect((await lee.post(inbox.user(hearth, "Alice"), later)).status).toBe(202)
    const accepts = () =>
      remote
        .deliveries(lee)
        .map((r) => JSON.parse(r.body))
        .filter((a) => a.type === "Accept")
    await eventually(
      async () => (accepts().some((a) => a.object.id === later.id) ? true : undefined),
      30_000,
      "the later Accept"
    )
    expect(accepts().filter((a) => a.object.id === follow.id)).toHaveLength(1)
  })

  it("a Follow undone and replayed leaves no follower", async () => {
    const alice = await someone()
    const follow = alice.activity("Follow", person(hearth, "Bob"))
    expect((await alice.post(inbox.user(hearth, "Bob"), follow)).status).toBe(202)
    expect((await alice.post(inbox.user(hearth, "Bob"), alice.activity("Undo", follow))).status).toBe(202)
    expect((await alice.post(inbox.user(hearth, "Bob"), follow)).status).toBe(202)
    expect((await followers(hearth, "Bob")).map((f) => f.id)).not.toContain(alice.id)
  })
})

describe("Follow", () => {
  it("of a local person through their inbox: 202, the follower recorded, a signed Accept delivered", async () => {
    const carol = await someone()
    const follow = carol.activity("Follow", person(hearth, "Alice"))
    expect((await carol.post(inbox.user(hearth, "Alice"), follow)).status).toBe(202)
    expect((await followers(hearth, "Alice")).map((f) => f.id)).toContain(carol.id)
    const accept = await eventually(
      async () => remote.deliveries(carol).find((r) => JSON.parse(r.body).type === "Accept"),
      30_000,
      "the Accept"
    )
    const body = JSON.parse(accept.body)
    expect(body.actor).toBe(person(hearth, "Alice"))
    expect(body.object.id).toBe(follow.id)
    expect(await verifyReceived(remote, accept)).toBe(person(hearth, "Alice"))
  })

  it("through the shared inbox, naming the person by id", async () => {
    const dave = await someone()
    const { id } = await json(await request(hearth, "GET", "/users/Bob"))
    const follow = dave.activity("Follow", `${hearth.base}/api/v1/activitypub/user-id/${id}`)
    expect((await dave.post(inbox.shared(hearth), follow)).status).toBe(202)
    expect((await followers(hearth, "Bob")).map((f) => f.id)).toContain(dave.id)
  })

  it("404 when the object is not a local person; 422 through a repository inbox", async () => {
    const erin = await someone()
    const before = await followers(hearth, "Alice")
    for (const object of [person(hearth, "nobody"), person(hearth, "Hidden"), `${remote.base}/users/someone`]) {
      expect((await erin.post(inbox.shared(hearth), erin.activity("Follow", object))).status, object).toBe(404)
    }
    // Alice's inbox takes Follows of Alice only; Hidden has no inbox.
    expect((await erin.post(inbox.user(hearth, "Alice"), erin.activity("Follow", person(hearth, "Bob")))).status).toBe(
      404
    )
    expect(
      (await erin.post(inbox.user(hearth, "Hidden"), erin.activity("Follow", person(hearth, "Hidden")))).status
    ).toBe(404)
    const repo = await newRepo(hearth)
    expect(
      (await erin.post(inbox.repository(hearth, repo.id), erin.activity("Follow", person(hearth, "Alice")))).status
    ).toBe(422)
    expect(await followers(hearth, "Alice")).toEqual(before)
    expect((await followers(hearth, "Bob")).map((f) => f.id)).not.toContain(erin.id)
  })
})

describe("Like", () => {
  it("of a repository actor: stars_count +1 once per remote actor", async () => {
    const repo = await newRepo(hearth)
    const [alice, bob] = [await someone(), await someone()]
    expect((await alice.post(inbox.repository(hearth, repo.id), like(alice, hearth, repo))).status).toBe(202)
    // A second Like (another id) of the same actor does not count twice.
    expect((await alice.post(inbox.shared(hearth), like(alice, hearth, repo))).status).toBe(202)
    expect(await repo.stars()).toBe(1)
    expect((await bob.post(inbox.shared(hearth), like(bob, hearth, repo))).status).toBe(202)
    expect(await repo.stars()).toBe(2)
  })

  it("422 on a user inbox or for an object that is no repository of this server; 404 for a private or unknown one", async () => {
    const repo = await newRepo(hearth)
    const secret = await newRepo(hearth, { private: true })
    const alice = await someone()
    expect((await alice.post(inbox.user(hearth, "Alice"), like(alice, hearth, repo))).status).toBe(422)
    for (const object of [person(hearth, "Alice"), `${remote.base}/repos/1`, `${hearth.base}/Alice/${repo.name}`]) {
      expect((await alice.post(inbox.shared(hearth), alice.activity("Like", object))).status, object).toBe(422)
    }
    expect((await alice.post(inbox.shared(hearth), like(alice, hearth, secret))).status).toBe(404)
    expect((await alice.post(inbox.repository(hearth, secret.id), like(alice, hearth, secret))).status).toBe(404)
    expect((await alice.post(inbox.shared(hearth), alice.activity("Like", repository(hearth, 999_999)))).status).toBe(
      404
    )
    expect(await repo.stars()).toBe(0)
    expect(await secret.stars()).toBe(0)
  })
})

describe("Undo", () => {
  it("of a Follow and of a Like, by the undone activity's id", async () => {
    const repo = await newRepo(hearth)
    const alice = await someone()
    const liked = like(alice, hearth, repo)
    const follow = alice.activity("Follow", person(hearth, "Alice"))
    for (const activity of [liked, follow]) expect((await alice.post(inbox.shared(hearth), activity)).status).toBe(202)
    expect(await repo.stars()).toBe(1)
    expect((await followers(hearth, "Alice")).map((f) => f.id)).toContain(alice.id)
    // By id only, as some servers write it.
    for (const activity of [liked, follow])
      expect((await alice.post(inbox.shared(hearth), alice.activity("Undo", activity.id))).status).toBe(202)
    expect(await repo.stars()).toBe(0)
    expect((await followers(hearth, "Alice")).map((f) => f.id)).not.toContain(alice.id)
  })

  it("by what the undone activity named when its id is unknown", async () => {
    const repo = await newRepo(hearth)
    const alice = await someone()
    for (const activity of [like(alice, hearth, repo), alice.activity("Follow", person(hearth, "Alice"))]) {
      expect((await alice.post(inbox.shared(hearth), activity)).status).toBe(202)
    }
    const unknownId = (type: string, object: string) => ({
      id: `${alice.id}/activities/lost-${type}`,
      type,
      actor: alice.id,
      object
    })
    expect(
      (await alice.post(inbox.shared(hearth), alice.activity("Undo", unknownId("Like", repository(hearth, repo.id)))))
        .status
    ).toBe(202)
    expect(
      (await alice.post(inbox.shared(hearth), alice.activity("Undo", unknownId("Follow", person(hearth, "Alice")))))
        .status
    ).toBe(202)
    expect(await repo.stars()).toBe(0)
    expect((await followers(hearth, "Alice")).map((f) => f.id)).not.toContain(alice.id)
  })

  it("403 when the undone activity is another actor's", async () => {
    const repo = await newRepo(hearth)
    const [alice, mallory] = [await someone(), await someone()]
    const liked = like(alice, hearth, repo)
    expect((await alice.post(inbox.shared(hearth), liked)).status).toBe(202)
    expect((await mallory.post(inbox.shared(hearth), mallory.activity("Undo", liked))).status).toBe(403)
    expect(await repo.stars()).toBe(1)
  })
})

describe("Accept and Reject of Follows a local user sent", () => {
  /** Bob follows a new remote actor; the Follow as the remote got it. */
  const bobFollows = async () => {
    const actor = await someone()
    expect((await request(hearth, "PUT", `/user/following/${actor.handle}`, basic("Bob"))).status).toBe(204)
    const delivered = await eventually(
      async () => remote.deliveries(actor).find((r) => JSON.parse(r.body).type === "Follow"),
      30_000,
      "the Follow"
    )
    const follow = JSON.parse(delivered.body) as Activity
    const entry = async () => (await following(hearth, "Bob")).find((f) => f.id === actor.id)
    expect((await entry())?.accepted).toBe(false)
    return { actor, follow, entry }
  }

  it("an Accept of the followed actor marks it accepted; one of another actor does not", async () => {
    const { actor, follow, entry } = await bobFollows()
    const intruder = await someone()
    expect((await intruder.post(inbox.user(hearth, "Bob"), intruder.activity("Accept", follow))).status).toBe(202)
    expect((await entry())?.accepted).toBe(false)
    expect((await actor.post(inbox.user(hearth, "Bob"), actor.activity("Accept", follow))).status).toBe(202)
    expect((await entry())?.accepted).toBe(true)
  })

  it("a Reject removes the follow", async () => {
    const { actor, follow, entry } = await bobFollows()
    expect((await actor.post(inbox.shared(hearth), actor.activity("Reject", follow.id))).status).toBe(202)
    expect(await entry()).toBeUndefined()
  })
})

describe("Update and Delete of the sender's own actor", () => {
  it("an Update refetches the actor: its new name shows in the followers list", async () => {
    const frank = await someone()
    expect(
      (await frank.post(inbox.user(hearth, "Alice"), frank.activity("Follow", person(hearth, "Alice")))).status
    ).toBe(202)
    frank.name = "Frank Renamed"
    expect((await frank.post(inbox.shared(hearth), frank.activity("Update", frank.id))).status).toBe(202)
    expect((await followers(hearth, "Alice")).find((f) => f.id === frank.id)?.name).toBe("Frank Renamed")
  })

  it("an Update forgets the actor's remembered keys: its old key no longer verifies", async () => {
    const repo = await newRepo(hearth)
    const grace = await someone()
    expect((await grace.post(inbox.repository(hearth, repo.id), like(grace, hearth, repo))).status).toBe(202)
    // A new key published, announced by an Update the old (remembered) key signs.
    const old = await grace.rotateKey()
    expect((await grace.post(inbox.shared(hearth), grace.activity("Update", grace.id), { keys: old })).status).toBe(202)
    const second = await newRepo(hearth)
    expect((await grace.post(inbox.shared(hearth), like(grace, hearth, second), { keys: old })).status).toBe(401)
    expect(await second.stars()).toBe(0)
    expect((await grace.post(inbox.shared(hearth), like(grace, hearth, second))).status).toBe(202)
    expect(await second.stars()).toBe(1)
  })

  it("a key changed without an Update verifies at once (the key is fetched anew, not from a cache)", async () => {
    const repo = await newRepo(hearth)
    const heidi = await someone()
    expect((await heidi.post(inbox.repository(hearth, repo.id), like(heidi, hearth, repo))).status).toBe(202)
    await heidi.rotateKey()
    const second = await newRepo(hearth)
    expect((await heidi.post(inbox.shared(hearth), like(heidi, hearth, second))).status).toBe(202)
    expect(await second.stars()).toBe(1)
  })

  it("a Delete of a gone actor verifies with its remembered key and removes its follows and stars", async () => {
    const repo = await newRepo(hearth)
    const ivan = await someone()
    expect((await ivan.post(inbox.repository(hearth, repo.id), like(ivan, hearth, repo))).status).toBe(202)
    expect(
      (await ivan.post(inbox.user(hearth, "Alice"), ivan.activity("Follow", person(hearth, "Alice")))).status
    ).toBe(202)
    expect((await request(hearth, "PUT", `/user/following/${ivan.handle}`, basic("Alice"))).status).toBe(204)
    expect(await repo.stars()).toBe(1)
    // A Delete of someone else's actor is no Delete of an actor.
    const mallory = await someone()
    expect((await mallory.post(inbox.shared(hearth), mallory.activity("Delete", ivan.id))).status).toBe(202)
    expect(await repo.stars()).toBe(1)

    ivan.mode = "gone"
    // As a minute later: this server's short-lived copy of the actor's document has expired.
    await hearth.run(
      Effect.gen(function* () {
        ;(yield* Federation).documents.forget(ivan.id)
      })
    )
    expect(
      (await ivan.post(inbox.shared(hearth), ivan.activity("Delete", ivan.id, { to: [`${AS}#Public`] }))).status
    ).toBe(202)
    expect(await repo.stars()).toBe(0)
    expect((await followers(hearth, "Alice")).map((f) => f.id)).not.toContain(ivan.id)
    expect((await following(hearth, "Alice")).map((f) => f.id)).not.toContain(ivan.id)
    // Its keys are forgotten too: nothing it signs is taken any more.
    expect((await ivan.post(inbox.shared(hearth), like(ivan, hearth, repo))).status).toBe(401)
    expect(await repo.stars()).toBe(0)
  })
})

describe("other activities", () => {
  it("are stored for the local users who follow their actor (accepted), and for nobody else", async () => {
    const judy = await someone()
    expect((await request(hearth, "PUT", `/user/following/${judy.handle}`, basic("Alice"))).status).toBe(204)
    const follow = JSON.parse((await eventually(async () => remote.deliveries(judy)[0], 30_000, "the Follow")).body)
    const note = (text: string) => judy.activity("Create", { type: "Note", content: text, attributedTo: judy.id })
    const count = async () => (await received(hearth, "Alice")).filter((r) => r.actor.id === judy.id).length
    // Not accepted yet: not stored.
    expect((await judy.post(inbox.shared(hearth), note("too early"))).status).toBe(202)
    expect(await count()).toBe(0)
    expect((await judy.post(inbox.shared(hearth), judy.activity("Accept", follow))).status).toBe(202)
    const created = note("hello")
    expect((await judy.post(inbox.shared(hearth), created)).status).toBe(202)
    const list = (await received(hearth, "Alice")).filter((r) => r.actor.id === judy.id)
    expect(list.map((r) => r.activity.id)).toEqual([created.id])
    expect(list[0].activity.object.content).toBe("hello")
    // From an actor nobody follows: 202, nothing stored.
    const stranger = await someone()
    expect(
      (await stranger.post(inbox.shared(hearth), stranger.activity("Create", { type: "Note", content: "hi" }))).status
    ).toBe(202)
    expect((await received(hearth, "Alice")).filter((r) => r.actor.id === stranger.id)).toEqual([])
    expect((await received(hearth, "Bob")).filter((r) => r.actor.id === stranger.id)).toEqual([])
  })

  it("one activity delivered to two followers' own inboxes reaches both, once each", async () => {
    const kim = await someone()
    for (const user of ["Alice", "Bob"]) {
      expect((await request(hearth, "PUT", `/user/following/${kim.handle}`, basic(user))).status).toBe(204)
    }
    const follows = await eventually(
      async () => {
        const list = remote.deliveries(kim).map((r) => JSON.parse(r.body))
        return list.length === 2 ? list : undefined
      },
      30_000,
      "both Follows"
    )
    for (const follow of follows)
      expect((await kim.post(inbox.shared(hearth), kim.activity("Accept", follow))).status).toBe(202)
    const created = kim.activity("Create", { type: "Note", content: "to both" })
    for (const user of ["Alice", "Bob", "Alice"])
      expect((await kim.post(inbox.user(hearth, user), created)).status).toBe(202)
    for (const user of ["Alice", "Bob"]) {
      expect(
        (await received(hearth, user)).filter((r) => r.actor.id === kim.id).map((r) => r.activity.id),
        user
      ).toEqual([created.id])
    }
  })
})

describe("remote servers that hang or answer garbage", () => {
  it("a key server that hangs: 401 after the fetch time-out, while other local requests are answered", async () => {
    const repo = await newRepo(hearth)
    const [slow, quick] = [await someone(), await someone()]
    slow.mode = "hang"
    let answered = false
    const pending = slow.post(inbox.repository(hearth, repo.id), like(slow, hearth, repo)).then((a) => {
      answered = true
      return a
    })
    await eventually(
      async () => (remote.requests.some((r) => r.path === new URL(slow.id).pathname) ? true : undefined),
      15_000,
      "the key fetch"
    )
    // Meanwhile the API and the same inbox answer others.
    expect((await request(hearth, "GET", "/version")).status).toBe(200)
    expect((await quick.post(inbox.repository(hearth, repo.id), like(quick, hearth, repo))).status).toBe(202)
    expect(answered).toBe(false)
    expect((await pending).status).toBe(401)
    expect(await repo.stars()).toBe(1)
  }, 60_000)

  it("a key server that answers garbage or no actor: 401", async () => {
    const repo = await newRepo(hearth)
    for (const mode of ["garbage", "not-an-actor"] as const) {
      const actor = await someone()
      actor.mode = mode
      expect((await actor.post(inbox.repository(hearth, repo.id), like(actor, hearth, repo))).status, mode).toBe(401)
    }
    expect(await repo.stars()).toBe(0)
  })

  it("unsigned, the actor's server hanging or answering garbage: 400", async () => {
    const repo = await newRepo(lax)
    const answers = await Promise.all(
      (["hang", "garbage", "not-an-actor"] as const).map(async (mode) => {
        const actor = await someone()
        actor.mode = mode
        return (await actor.post(inbox.repository(lax, repo.id), like(actor, lax, repo), { spec: "none" })).status
      })
    )
    expect(answers).toEqual([400, 400, 400])
    expect(await repo.stars()).toBe(0)
  }, 60_000)
})
