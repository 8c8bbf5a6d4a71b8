// Inboxes: a user's, a repository's and the shared one. An activity is taken only when:
// - its HTTP signature verifies (draft-cavage `Signature` + `Digest`, or RFC 9421
//   `Signature-Input` + `Content-Digest`, every signature of it), made with a key whose algorithm
//   [federation] SIGNATURE_ALGORITHMS allows (whatever algorithm name the request gives), over the
//   request target, the date and the body digest, dated within an hour of now, with a key its
//   actor owns and its actor's server serves (keys are fetched through Remote.ts and remembered);
//   with SIGNATURE_ENFORCED off, unsigned activities are taken too;
// - it is a JSON object with a type, an actor of a host this server federates with, and an id
//   on the actor's own server;
// - its id was not handled before: a replay, even within the hour, changes nothing.
// Refusals: unsigned or unverifiable 401 (a Fedify sender then retries in the other format),
// a key of another actor or a refused host 403, malformed 400, too large 413 (before reading it);
// none changes anything. Handled: Follow (→ Accept), Undo of Follow and Like, Like of a
// repository (a federated star), Accept/Reject of our Follows, Update and Delete of the sender's
// own actor (a Delete verifies with the remembered key: the actor's document is gone by then);
// anything else from an actor local users follow lands in their received activities, once each.
import { Effect, Option } from "effect"
import { jsonStringsProblem } from "../src/http/Input.ts"
import type { UserRow } from "../src/users/Repo.ts"
import * as Activities from "./Activities.ts"
import type { Loaded } from "./Fedify.ts"
import { parseLocal } from "./Paths.ts"
import { asObject, hostRefused, idOf, type RemoteError, typeOf } from "./Remote.ts"
import type { RemoteActor } from "./Repo.ts"
import type { Federation } from "./Service.ts"

export type InboxTarget =
  | { readonly kind: "user"; readonly user: UserRow }
  | { readonly kind: "repository"; readonly repoId: number }
  | { readonly kind: "shared" }

export interface InboxAnswer {
  readonly status: number
  readonly message?: string
}

type FederationShape = (typeof Federation)["Service"]
type Json = Record<string, unknown>

/** How long handled activity ids are remembered: well past the signatures' hour. */
const HANDLED_DAYS = 7
/** The activities that change something here (the others are kept for the sender's followers). */
const HANDLED_TYPES = new Set(["Follow", "Like", "Undo", "Accept", "Reject", "Update", "Delete"])

const refuse = (status: number, message: string): InboxAnswer => ({ status, message })
const ACCEPTED: InboxAnswer = { status: 202 }

// RFC 9421 `alg` names → the names SIGNATURE_ALGORITHMS uses (Forgejo's for the common ones).
const RFC9421_NAMES: Record<string, string> = {
  "rsa-v1_5-sha256": "rsa-sha256",
  "rsa-v1_5-sha512": "rsa-sha512"
}

/**
 * The members of an RFC 9421 `Signature-Input`, each label's covered components (lower case) and
 * its parameters: split at the commas outside quotes and parentheses.
 */
const signatureInputs = (input: string): ReadonlyArray<{ readonly components: string; readonly params: string }> => {
  const members: Array<{ components: string; params: string }> = []
  let depth = 0
  let quoted = false
  let start = 0
  const push = (end: number) => {
    const member = /^\s*[^=\s]+=\(([^)]*)\)(.*)$/s.exec(input.slice(start, end))
    members.push(
      member === null ? { components: "", params: "" } : { components: member[1]!.toLowerCase(), params: member[2]! }
    )
  }
  for (let i = 0; i < input.length; i++) {
    const c = input[i]
    if (quoted) {
      if (c === "\\") i++
      else if (c === '"') quoted = false
    } else if (c === '"') quoted = true
    else if (c === "(") depth++
    else if (c === ")") depth--
    else if (c === "," && depth === 0) {
      push(i)
      start = i + 1
    }
  }
  push(input.length)
  return members
}

/**
 * The signature scheme of a request, when its headers follow the rules above (which algorithm,
 * what is signed); a refusal otherwise. Fedify checks the signature itself. In RFC 9421 every
 * signature must follow them: Fedify takes the request when any one of them verifies.
 */
export const signatureScheme = (
  allowedAlgorithms: string,
  headers: Headers
): { readonly spec: "draft-cavage-http-signatures-12" | "rfc9421" } | InboxAnswer => {
  const allowed = allowedAlgorithms.split(",")
  const input = headers.get("signature-input")
  const signature = headers.get("signature")
  if (input !== null && signature !== null) {
    if (headers.get("content-digest") === null) return refuse(401, "the request has no Content-Digest")
    for (const { components, params } of signatureInputs(input)) {
      if (!components.includes('"content-digest"')) return refuse(401, "the request's Content-Digest is not signed")
      if (!components.includes('"@method"') || !/"@(target-uri|path|request-target)"/.test(components)) {
        return refuse(401, "the request's method and target are not signed")
      }
      if (!components.includes('"date"') && !/;\s*created=/i.test(params))
        return refuse(401, "the request's date is not signed")
      const alg = /;\s*alg="([^"]*)"/i.exec(params)?.[1]?.toLowerCase()
      if (alg !== undefined && !allowed.includes(RFC9421_NAMES[alg] ?? alg)) {
        return refuse(401, `the signature algorithm ${alg} is not allowed here`)
      }
    }
    return { spec: "rfc9421" }
  }
  if (signature !== null) {
    if (headers.get("digest") === null) return refuse(401, "the request has no Digest")
    const signed = /headers="([^"]*)"/i.exec(signature)?.[1]?.toLowerCase().split(/\s+/) ?? []
    for (const name of ["(request-target)", "digest"]) {
      if (!signed.includes(name)) return refuse(401, `the request's ${name} is not signed`)
    }
    if (!signed.includes("date") && !signed.includes("(created)"))
      return refuse(401, "the request's date is not signed")
    const algorithm = /algorithm="([^"]*)"/i.exec(signature)?.[1]?.toLowerCase()
    if (algorithm !== undefined && algorithm !== "hs2019" && !allowed.includes(algorithm)) {
      return refuse(401, `the signature algorithm ${algorithm} is not allowed here`)
    }
    return { spec: "draft-cavage-http-signatures-12" }
  }
  return refuse(401, "the request is not signed")
}

/**
 * What a verified signature was checked with, as SIGNATURE_ALGORITHMS names it: its key's
 * algorithm, whatever name the request gave (draft-cavage's `hs2019` or none, RFC 9421 without
 * `alg`), since that is what Fedify verified with.
 */
const keyAlgorithm = (key: {
  readonly algorithm: { readonly name: string; readonly hash?: { readonly name: string } }
}) =>
  key.algorithm.name === "Ed25519"
    ? "ed25519"
    : key.algorithm.name === "RSASSA-PKCS1-v1_5"
      ? `rsa-${(key.algorithm.hash?.name ?? "SHA-256").replace("SHA-", "sha")}`
      : key.algorithm.name.toLowerCase()

/**
 * Remote public keys, remembered in the key-value store under their owner's URL (the key id
 * without its fragment), so an actor's `Update` forgets them all and a deleted actor's last
 * activity still verifies.
 */
const keyEntry = (keyId: string) => ["hearth", "key", keyId.replace(/#.*$/, ""), keyId] as const

// The keys read back from the store, per server (a key read back goes through JSON-LD, ~1 ms).
const keysInMemory = new WeakMap<object, Map<string, unknown>>()
const memoryOf = (federation: FederationShape) => {
  let memory = keysInMemory.get(federation.kv)
  if (memory === undefined) keysInMemory.set(federation.kv, (memory = new Map()))
  return memory
}

const keyCache = (federation: FederationShape, loaded: Loaded) => {
  const options = { documentLoader: loaded.documentLoader, contextLoader: loaded.contextLoader } as never
  const memory = memoryOf(federation)
  const remember = (keyId: string, key: unknown) => {
    if (memory.size >= 10_000) memory.delete(memory.keys().next().value!)
    memory.set(keyId, key)
  }
  return {
    get: async (keyId: URL) => {
      const known = memory.get(keyId.href)
      if (known !== undefined) return known
      const stored = await federation.kv.get(keyEntry(keyId.href))
      if (stored === undefined || stored === null) return undefined
      const key = await loaded.V.CryptographicKey.fromJsonLd(stored, options).catch(() => undefined)
      if (key !== undefined) remember(keyId.href, key)
      return key
    },
    set: async (keyId: URL, key: unknown) => {
      if (key === null || key === undefined) return
      remember(keyId.href, key)
      await federation.kv.set(
        keyEntry(keyId.href),
        await (key as { toJsonLd: (o: never) => Promise<unknown> }).toJsonLd(options)
      )
    }
  }
}

/** Forgets the remembered keys of an actor. */
const forgetKeys = (federation: FederationShape, actorUri: string) =>
  Effect.promise(async () => {
    const memory = memoryOf(federation)
    for (const keyId of [...memory.keys()]) if (keyId.replace(/#.*$/, "") === actorUri) memory.delete(keyId)
    for await (const entry of federation.kv.list(["hearth", "key", actorUri])) await federation.kv.delete(entry.key)
  })

/** Verifies the request's signature; the answer is a refusal, or nothing when it may be taken. */
const verify = (federation: FederationShape, request: Request, actorUri: string) =>
  Effect.gen(function* () {
    const allowed = federation.settings.federation.SIGNATURE_ALGORITHMS
    const scheme = signatureScheme(allowed, request.headers)
    if ("status" in scheme) return Option.some(scheme)
    const loaded = yield* federation.fedify
    // Keys are remembered in the key-value store; when Fedify fetches one (none remembered, or the
    // remembered one failed: the key may have changed), it gets the document as it is now.
    const documentLoader = async (url: string) => ({
      contextUrl: null,
      documentUrl: url.replace(/#.*$/, ""),
      document: await Effect.runPromise(federation.documents.fetch(url, { fresh: true }))
    })
    const result = yield* Effect.tryPromise(() =>
      loaded.F.verifyRequestDetailed(request, {
        spec: scheme.spec,
        documentLoader: documentLoader as never,
        contextLoader: loaded.contextLoader as never,
        timeWindow: { hours: 1 },
        keyCache: keyCache(federation, loaded) as never
      })
    ).pipe(
      // e.g. a draft-cavage signature made with an Ed25519 key, which Fedify checks as RSA
      Effect.catch((error) =>
        Effect.as(Effect.logWarning("an inbox signature could not be checked", error.cause), undefined)
      )
    )
    if (result === undefined || !result.verified) {
      const reason =
        result === undefined
          ? "its key cannot make such a signature"
          : result.reason.type === "keyFetchError"
            ? "its key could not be fetched"
            : result.reason.type === "noSignature"
              ? "it is not signed"
              : "its signature does not verify (or it is too old)"
      return Option.some(refuse(401, `request signature verification failed: ${reason}`))
    }
    const algorithm = keyAlgorithm(result.key.publicKey as never)
    if (!allowed.split(",").includes(algorithm))
      return Option.some(refuse(401, `the signature algorithm ${algorithm} is not allowed here`))
    // The key must be the actor's: owned by it, and served by its server (a key elsewhere could
    // claim any owner).
    const keyId = result.key.id?.href
    const owner = result.key.ownerId?.href ?? keyId?.replace(/#.*$/, "")
    if (owner !== actorUri || keyId === undefined || new URL(keyId).origin !== new URL(actorUri).origin) {
      return Option.some(refuse(403, "the request is signed with the key of another actor than the activity's"))
    }
    return Option.none()
  })

/** The inner activity an Undo, Accept or Reject names: embedded, or by id only. */
const innerOf = (
  activity: Json
): { readonly id: string | undefined; readonly type: string | undefined; readonly body: Json | undefined } => {
  const body = asObject(activity.object)
  return { id: idOf(activity.object), type: typeOf(body), body }
}

/** Handles one inbox POST whose body (at most MAX_SIZE bytes) has been read. */
export const receive = (
  federation: FederationShape,
  target: InboxTarget,
  request: Request,
  body: string
): Effect.Effect<InboxAnswer> =>
  Effect.gen(function* () {
    const { settings, repo } = federation
    let activity: Json | undefined
    try {
      activity = asObject(JSON.parse(body))
    } catch {
      return refuse(400, "the activity is not JSON")
    }
    if (activity === undefined) return refuse(400, "the activity is not a JSON object")
    // Neither database can store a NUL (nor a lone surrogate) in text or jsonb.
    const unstorable = jsonStringsProblem(activity)
    if (unstorable !== undefined) return refuse(400, `the activity cannot be stored: ${unstorable}`)
    const type = typeOf(activity)
    const actorUri = idOf(activity.actor)
    if (type === undefined || actorUri === undefined || !URL.canParse(actorUri)) {
      return refuse(400, "the activity needs a type and an actor")
    }
    const actorUrl = new URL(actorUri)
    if (hostRefused(settings, actorUrl.host)) return refuse(403, `this server does not federate with ${actorUrl.host}`)
    const activityId = idOf(activity.id)
    if (activityId === undefined || !URL.canParse(activityId) || new URL(activityId).origin !== actorUrl.origin) {
      return refuse(400, "the activity needs an id on its actor's server")
    }

    if (settings.federation.SIGNATURE_ENFORCED) {
      const refused = yield* verify(federation, request, actorUri)
      if (Option.isSome(refused)) return refused.value
    }
    const objectId = idOf(activity.object)
    let actor: RemoteActor
    if (type === "Delete" && objectId === actorUri) {
      // A deleted actor's document is gone: the one recorded here is the one deleted (none, nothing to delete).
      const recorded = yield* repo.actorByUri(actorUri)
      if (Option.isNone(recorded)) {
        yield* forgetKeys(federation, actorUri)
        return ACCEPTED
      }
      actor = recorded.value
    } else {
      const actorResult = yield* Effect.result(federation.remember(actorUri))
      if (actorResult._tag === "Failure") {
        const error = actorResult.failure
        return refuse(
          error.reason === "forbidden" ? 403 : 400,
          `the activity's actor could not be used: ${error.message}`
        )
      }
      actor = actorResult.success
    }

    // Update and Delete change something only for the sender's own actor; the rest is kept.
    if (!HANDLED_TYPES.has(type) || ((type === "Update" || type === "Delete") && objectId !== actorUri)) {
      yield* keep(federation, target, activity, actor)
      return ACCEPTED
    }
    // Claimed before it is handled, so that a replay arriving meanwhile changes nothing either;
    // released when it was not taken, so that a later delivery of it may be.
    if (!(yield* repo.markHandled(activityId, HANDLED_DAYS))) return ACCEPTED
    const release = Effect.ignore(repo.unmarkHandled(activityId))
    const answer = yield* handle(federation, target, activity, type, actor).pipe(Effect.onError(() => release))
    if (answer.status >= 300) yield* release
    return answer
  }).pipe(
    Effect.catchDefect((defect) =>
      Effect.as(
        Effect.logError("an inbox activity could not be handled", defect),
        refuse(500, "the activity could not be handled")
      )
    )
  )

const handle = (federation: FederationShape, target: InboxTarget, activity: Json, type: string, actor: RemoteActor) =>
  Effect.gen(function* () {
    const { paths, repo } = federation
    const activityId = idOf(activity.id)!
    const objectId = idOf(activity.object)

    /** The local person an activity's object names, reachable through this inbox. */
    const localPerson = (uri: string | undefined) =>
      Effect.gen(function* () {
        const local = parseLocal(paths, uri)
        const found =
          local?.kind === "user"
            ? yield* federation.person(local.name)
            : local?.kind === "user-id"
              ? yield* federation.personById(local.id)
              : Option.none<UserRow>()
        if (Option.isNone(found) || (target.kind === "user" && target.user.id !== found.value.id)) return undefined
        return found.value
      })
    /** The local repository an activity's object names, reachable through this inbox. */
    const localRepository = (uri: string | undefined) =>
      Effect.gen(function* () {
        const local = parseLocal(paths, uri)
        if (local?.kind !== "repository") return { known: false, id: undefined }
        const found = yield* federation.repository(local.id)
        if (Option.isNone(found) || (target.kind === "repository" && target.repoId !== local.id))
          return { known: true, id: undefined }
        return { known: true, id: found.value.repo.id }
      })

    switch (type) {
      case "Follow": {
        if (target.kind === "repository") return refuse(422, "repositories cannot be followed here")
        const user = yield* localPerson(objectId)
        if (user === undefined) return refuse(404, "the object of the Follow is not a person of this server")
        yield* repo.addFollower(user.id, actor.id, activityId)
        yield* federation
          .send(user, [actor], Activities.accept(paths.actor(user), { id: activityId, actor: actor.uri }))
          .pipe(
            Effect.catch((error: RemoteError) =>
              Effect.logWarning(`could not accept the Follow of ${actor.uri}: ${error.message}`)
            )
          )
        return ACCEPTED
      }
      case "Like": {
        if (target.kind === "user") return refuse(422, "the object of the Like is not a repository of this server")
        const found = yield* localRepository(objectId)
        if (!found.known) return refuse(422, "the object of the Like is not a repository of this server")
        if (found.id === undefined) return refuse(404, "the repository of the Like does not exist")
        yield* repo.addStar(found.id, actor.id, activityId)
        return ACCEPTED
      }
      case "Undo": {
        const inner = innerOf(activity)
        if (inner.body !== undefined && idOf(inner.body.actor) !== undefined && idOf(inner.body.actor) !== actor.uri) {
          return refuse(403, "an actor can only undo its own activities")
        }
        if (inner.id === undefined) return refuse(400, "the Undo does not say what it undoes")
        // By the undone activity's id; failing that (some servers make a new id), by what it named.
        if (inner.type === undefined || inner.type === "Follow") {
          if (yield* repo.removeFollower(actor.id, { activityUri: inner.id })) return ACCEPTED
          const user = yield* localPerson(idOf(inner.body?.object))
          if (user !== undefined && (yield* repo.removeFollower(actor.id, { userId: user.id }))) return ACCEPTED
        }
        if (inner.type === undefined || inner.type === "Like") {
          if (yield* repo.removeStar(actor.id, { activityUri: inner.id })) return ACCEPTED
          const found = yield* localRepository(idOf(inner.body?.object))
          if (found.id !== undefined) yield* repo.removeStar(actor.id, { repoId: found.id })
        }
        return ACCEPTED
      }
      case "Accept":
      case "Reject": {
        const inner = innerOf(activity)
        if (inner.id === undefined) return refuse(400, `the ${type} does not say what it answers`)
        if (type === "Accept") yield* repo.acceptFollowing(actor.id, inner.id)
        else yield* repo.rejectFollowing(actor.id, inner.id)
        return ACCEPTED
      }
      case "Update": {
        // The actor changed (its name, inbox or key): read it again, forget its old keys.
        yield* forgetKeys(federation, actor.uri)
        yield* Effect.ignore(federation.remember(actor.uri, { fresh: true }))
        return ACCEPTED
      }
      case "Delete": {
        federation.documents.forget(actor.uri)
        yield* forgetKeys(federation, actor.uri)
        yield* repo.deleteActor(actor.id)
        return ACCEPTED
      }
    }
    return ACCEPTED
  })

/**
 * Anything else from an actor local users follow lands in their received activities (through a
 * person's inbox, that person's only), once per user: a sender may deliver one activity to
 * several of their inboxes, so a replay is told by the user who has it already.
 */
const keep = (federation: FederationShape, target: InboxTarget, activity: Json, actor: RemoteActor) =>
  Effect.gen(function* () {
    const followers = yield* federation.repo.localFollowersOf(actor.id)
    const recipients = target.kind === "user" ? followers.filter((id) => id === target.user.id) : followers
    yield* federation.repo.addReceived(recipients, actor.id, activity)
  })
