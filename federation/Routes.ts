// The federation's HTTP routes, beside the API's (mounted only with [federation] ENABLED):
// - WebFinger (/.well-known/webfinger) with Forgejo's JSON, for people and repositories;
// - NodeInfo (/.well-known/nodeinfo → /api/v1/nodeinfo, a 2.1 document);
// - actors under /api/v1/activitypub: Person by name (Hearth's) and by id (Forgejo's), answered by
//   Fedify (`federation.fetch`); the ForgeFed Repository and the instance actor; their paged
//   collections (outbox, followers, following, liked) and published activities;
// - inboxes (a person's, a repository's, the shared one), bodies capped at MAX_SIZE.
import { Cause, Effect, Layer, Option } from "effect"
import * as ByteSize from "effect/ByteSize"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { answerOutage } from "../src/health/Database.ts"
import { ReposRepo } from "../src/repos/Repo.ts"
import type { UserRow } from "../src/users/Repo.ts"
import { UsersRepo } from "../src/users/Repo.ts"
import { VERSION } from "../src/version.ts"
import { CONTEXT } from "./Activities.ts"
import { type InboxTarget, receive } from "./Inbox.ts"
import { type FederationOperation, FederationOperations } from "./Operations.ts"
import { decodeName } from "./Paths.ts"
import { ACTIVITY_JSON, maxBytes } from "./Remote.ts"
import { Federation, federatedRepository, federatedUser } from "./Service.ts"

const PAGE_SIZE = 20
const NODEINFO_SCHEMA = "http://nodeinfo.diaspora.software/ns/schema/2.1"
const CORS = { "access-control-allow-origin": "*" }

/**
 * Whether an Accept header asks for a web page rather than ActivityPub JSON: `text/html` (or
 * XHTML) weighs more than every ActivityPub type it names. `*\/*`, no header, or a tie: JSON.
 */
export const prefersHtml = (accept: string | undefined): boolean => {
  if (accept === undefined) return false
  let html = 0
  let activity = 0
  for (const part of accept.split(",")) {
    const [type = "", ...params] = part.split(";").map((s) => s.trim().toLowerCase())
    const qParam = params.find((p) => p.startsWith("q="))
    const q = qParam === undefined ? 1 : Number(qParam.slice(2))
    if (!Number.isFinite(q)) continue
    if (type === "text/html" || type === "application/xhtml+xml") html = Math.max(html, q)
    else if (type === ACTIVITY_JSON || type === "application/ld+json" || type === "application/json")
      activity = Math.max(activity, q)
  }
  return html > activity
}

const activityJson = (value: unknown, status = 200) =>
  HttpServerResponse.text(JSON.stringify(value), { status, contentType: ACTIVITY_JSON })
const notFound = (headers: Record<string, string> = {}) => HttpServerResponse.empty({ status: 404, headers })

export const FederationRoutes = Layer.unwrap(
  Effect.gen(function* () {
    const federation = yield* Federation
    if (!federation.enabled) return Layer.empty
    const users = yield* UsersRepo
    const repos = yield* ReposRepo
    const { paths, repo, settings } = federation
    const errorBody = (status: number, message: string, headers: Record<string, string> = {}) =>
      HttpServerResponse.jsonUnsafe({ message, url: `${paths.root}api/swagger` }, { status, headers })

    const params = HttpRouter.params
    const query = Effect.map(
      HttpServerRequest.HttpServerRequest,
      (request) => new URL(request.url, paths.origin).searchParams
    )

    // --- WebFinger --------------------------------------------------------------------------

    const personJrd = (user: UserRow, subject: string) => {
      const aliases = [paths.profile(user), paths.actor(user)]
      if (!user.keepEmailPrivate && user.email !== "") aliases.push(`mailto:${user.email}`)
      return {
        subject,
        aliases,
        links: [
          { rel: "http://webfinger.net/rel/profile-page", type: "text/html", href: paths.profile(user) },
          { rel: "http://webfinger.net/rel/avatar", type: "image/png", href: paths.avatar(user) },
          { rel: "self", type: ACTIVITY_JSON, href: paths.actor(user) },
          {
            rel: "http://ostatus.org/schema/1.0/subscribe",
            template: `${paths.root}api/v1/authorize_interaction?uri={uri}`
          }
        ]
      }
    }

    /** The person called `name`, or the one called so before a rename (its new name answers). */
    const personOrRenamed = (name: string) =>
      Effect.gen(function* () {
        const found = yield* federation.person(name)
        return Option.getOrUndefined(Option.isSome(found) ? found : yield* federation.renamedPerson(name))
      })

    /** The local person or repository a WebFinger resource names, if any may be shown. */
    const resolveResource = (resource: string) =>
      Effect.gen(function* () {
        if (resource.startsWith("acct:")) {
          const at = resource.lastIndexOf("@")
          if (at < 0) return { refusal: "the acct: resource has no host" } as const
          const host = resource.slice(at + 1).toLowerCase()
          const ours = paths.host.toLowerCase()
          if (
            host !== ours &&
            !(new URL(paths.root).port === "" && host === new URL(paths.root).hostname.toLowerCase())
          ) {
            return { refusal: `${host} is not this server's host (${paths.host})` } as const
          }
          // A name that does not decode (or holds a NUL) names no one: 404, as an unknown name.
          const name = decodeName(resource.slice(5, at))
          if (name === undefined) return {}
          return { user: yield* personOrRenamed(name) }
        }
        if (resource.startsWith("mailto:")) {
          const found = yield* users.findByEmail(resource.slice(7))
          const user = Option.getOrUndefined(Option.filter(found, (u) => federatedUser(u) && !u.keepEmailPrivate))
          return { user }
        }
        if (resource.startsWith(paths.root)) {
          const rest = resource
            .slice(paths.root.length)
            .replace(/[?#].*$/, "")
            .replace(/\/$/, "")
          const byName = /^api\/v1\/activitypub\/user\/([^/]+)$/.exec(rest) ?? /^([^/]+)$/.exec(rest)
          if (byName !== null) {
            const name = decodeName(byName[1]!)
            return name === undefined ? {} : { user: yield* personOrRenamed(name) }
          }
          const byId = /^api\/v1\/activitypub\/user-id\/(\d{1,15})$/.exec(rest)
          if (byId !== null) return { user: Option.getOrUndefined(yield* federation.personById(Number(byId[1]))) }
          const page = /^([^/]+)\/([^/]+)$/.exec(rest)
          const repoId = /^api\/v1\/activitypub\/repository-id\/(\d{1,15})$/.exec(rest)
          if (repoId !== null)
            return { repository: Option.getOrUndefined(yield* federation.repository(Number(repoId[1]))) }
          if (page !== null) {
            const [ownerName, repoName] = [decodeName(page[1]!), decodeName(page[2]!)]
            if (ownerName === undefined || repoName === undefined) return {}
            const owner = yield* users.findByName(ownerName)
            if (Option.isNone(owner)) return {}
            const found = yield* repos.findByName(owner.value.id, repoName)
            if (Option.isNone(found) || !federatedRepository(found.value, owner.value)) return {}
            return { repository: { repo: found.value, owner: owner.value } }
          }
          return {}
        }
        return { refusal: "the resource must be acct:, mailto: or a URL of this server" } as const
      })

    const webfinger = Effect.gen(function* () {
      const resource = (yield* query).get("resource") ?? ""
      if (resource === "") return errorBody(400, "the resource parameter is required", CORS)
      const found = yield* resolveResource(resource)
      if ("refusal" in found && found.refusal !== undefined) return errorBody(400, found.refusal, CORS)
      let jrd: unknown
      if ("user" in found && found.user !== undefined) {
        jrd = personJrd(found.user, `acct:${encodeURIComponent(found.user.name)}@${paths.host}`)
      } else if ("repository" in found && found.repository !== undefined) {
        const { repo: row, owner } = found.repository
        const page = paths.repositoryPage(owner, row)
        jrd = {
          subject: page,
          aliases: [page, paths.repository(row.id)],
          links: [
            { rel: "http://webfinger.net/rel/profile-page", type: "text/html", href: page },
            { rel: "self", type: ACTIVITY_JSON, href: paths.repository(row.id) }
          ]
        }
      } else {
        return notFound(CORS)
      }
      return HttpServerResponse.text(JSON.stringify(jrd), { contentType: "application/jrd+json", headers: CORS })
    })

    // --- NodeInfo ---------------------------------------------------------------------------

    const nodeinfoLinks = Effect.succeed(
      HttpServerResponse.jsonUnsafe(
        { links: [{ rel: NODEINFO_SCHEMA, href: `${paths.root}api/v1/nodeinfo` }] },
        { headers: CORS }
      )
    )
    const nodeinfo = Effect.gen(function* () {
      const share = settings.federation.SHARE_USER_STATISTICS
      const usage = share ? yield* repo.usage() : undefined
      return HttpServerResponse.text(
        JSON.stringify({
          version: "2.1",
          software: { name: "hearth", version: VERSION, homepage: paths.root },
          protocols: ["activitypub"],
          services: { inbound: [], outbound: [] },
          openRegistrations: !settings.service.DISABLE_REGISTRATION,
          usage:
            usage === undefined
              ? { users: {}, localPosts: 0 }
              : {
                  users: { total: usage.users, activeMonth: usage.month, activeHalfyear: usage.halfYear },
                  localPosts: usage.repositories
                },
          metadata: {}
        }),
        { contentType: `application/json; profile="${NODEINFO_SCHEMA}#"`, headers: CORS }
      )
    })

    // --- Actors -----------------------------------------------------------------------------

    // Fedify writes a Person through JSON-LD compaction (~15 ms of CPU); the document changes only
    // with the account, so it is kept per account state (its keys never change).
    const persons = new Map<string, string>()
    const personKey = (user: UserRow) =>
      JSON.stringify([user.id, user.name, user.fullName, user.description, user.website, user.updatedAt.getTime()])

    /** The Person as Fedify writes it, whatever Accept the client sent (none, `*\/*`, JSON). */
    const personActor = (user: UserRow) =>
      Effect.gen(function* () {
        const key = personKey(user)
        let body = persons.get(key)
        if (body === undefined) {
          const { federation: fedify } = yield* federation.fedify
          const response = yield* Effect.promise(() =>
            fedify.fetch(new Request(paths.actor(user), { headers: { accept: ACTIVITY_JSON } }), {
              contextData: undefined,
              onNotFound: () => new Response(null, { status: 404 }),
              onNotAcceptable: () => new Response(null, { status: 406 })
            })
          )
          if (response.status !== 200) return notFound()
          body = yield* Effect.promise(() => response.text())
          if (persons.size >= 1_000) persons.delete(persons.keys().next().value!)
          persons.set(key, body)
        }
        return HttpServerResponse.text(body, { contentType: ACTIVITY_JSON })
      })

    /** The person a path names (`user/:name` or `user-id/:id`), if federated. */
    const personOf = Effect.gen(function* () {
      const p = yield* params
      const found =
        p.id !== undefined
          ? /^\d{1,15}$/.test(p.id)
            ? yield* federation.personById(Number(p.id))
            : Option.none()
          : yield* federation.person(p.name ?? "")
      return Option.getOrUndefined(found)
    })

    const repositoryOf = Effect.gen(function* () {
      const id = (yield* params).id ?? ""
      return /^\d{1,15}$/.test(id) ? Option.getOrUndefined(yield* federation.repository(Number(id))) : undefined
    })

    const repositoryActor = Effect.gen(function* () {
      const found = yield* repositoryOf
      if (found === undefined) return notFound()
      const { repo: row, owner } = found
      const id = paths.repository(row.id)
      return activityJson({
        "@context": CONTEXT,
        id,
        type: "Repository",
        name: row.name,
        summary: row.description,
        url: paths.repositoryPage(owner, row),
        ...(federatedUser(owner) ? { attributedTo: paths.actor(owner) } : {}),
        published: row.createdAt.toISOString(),
        inbox: `${id}/inbox`,
        outbox: `${id}/outbox`,
        followers: `${id}/followers`
      })
    })

    const instanceActor = Effect.gen(function* () {
      const { V, keyPairsOf, contextLoader } = yield* federation.fedify
      const document = yield* Effect.promise(async () => {
        const [rsa] = await keyPairsOf("instance")
        const id = new URL(paths.instance)
        return new V.Application({
          id,
          preferredUsername: "ghost",
          name: paths.host,
          url: new URL(paths.root),
          inbox: new URL(`${id.href}/inbox`),
          outbox: new URL(`${id.href}/outbox`),
          endpoints: new V.Endpoints({ sharedInbox: new URL(paths.sharedInbox) }),
          publicKey: new V.CryptographicKey({
            id: new URL(`${id.href}#main-key`),
            owner: id,
            publicKey: rsa!.publicKey
          })
        }).toJsonLd({ contextLoader } as never)
      })
      return activityJson(document)
    })

    // --- Collections ------------------------------------------------------------------------

    /** An OrderedCollection: its summary without `page`, one page of items with `?page=n`. */
    const collection = (
      id: string,
      total: number,
      items: (window: { limit: number; offset: number }) => Effect.Effect<ReadonlyArray<unknown>>
    ) =>
      Effect.gen(function* () {
        const pages = Math.max(1, Math.ceil(total / PAGE_SIZE))
        const pageParam = (yield* query).get("page")
        if (pageParam === null) {
          return activityJson({
            "@context": CONTEXT,
            id,
            type: "OrderedCollection",
            totalItems: total,
            first: `${id}?page=1`,
            last: `${id}?page=${pages}`
          })
        }
        const page = Number(pageParam)
        if (!Number.isSafeInteger(page) || page < 1) return errorBody(400, "page must be a positive whole number")
        const orderedItems = yield* items({ limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE })
        return activityJson({
          "@context": CONTEXT,
          id: `${id}?page=${page}`,
          type: "OrderedCollectionPage",
          partOf: id,
          totalItems: total,
          orderedItems,
          ...(page < pages ? { next: `${id}?page=${page + 1}` } : {}),
          ...(page > 1 ? { prev: `${id}?page=${page - 1}` } : {})
        })
      })

    const personCollection = (kind: "outbox" | "followers" | "following" | "liked") =>
      Effect.gen(function* () {
        const user = yield* personOf
        if (user === undefined) return notFound()
        const id = `${paths.actor(user)}/${kind}`
        const uris = <A extends { actor: { uri: string } }>(rows: Effect.Effect<ReadonlyArray<A>>) =>
          Effect.map(rows, (list) => list.map((row) => row.actor.uri))
        switch (kind) {
          case "outbox":
            return yield* collection(id, yield* repo.countOutbox(user.id), (w) => repo.outbox(user.id, w))
          case "followers":
            return yield* collection(id, yield* repo.countFollowers(user.id), (w) => uris(repo.followers(user.id, w)))
          case "following":
            return yield* collection(id, yield* repo.countFollowing(user.id), (w) => uris(repo.following(user.id, w)))
          case "liked":
            return yield* collection(id, yield* repo.countRemoteStars(user.id), (w) =>
              uris(repo.remoteStars(user.id, w))
            )
        }
      })

    /** One published activity (`…/activities/:activity`, also `…/activity`) or its note (`…/note`). */
    const published = (part: "activity" | "note") =>
      Effect.gen(function* () {
        const user = yield* personOf
        if (user === undefined) return notFound()
        const id = `${paths.actor(user)}/activities/${(yield* params).activity ?? ""}`
        const found = yield* repo.published(user.id, id)
        if (Option.isNone(found)) return notFound()
        const activity = found.value as Record<string, unknown>
        return activityJson(
          part === "activity" ? activity : { "@context": activity["@context"], ...(activity.object as object) }
        )
      })

    const repositoryCollection = (kind: "outbox" | "followers") =>
      Effect.gen(function* () {
        const found = yield* repositoryOf
        if (found === undefined) return notFound()
        return yield* collection(`${paths.repository(found.repo.id)}/${kind}`, 0, () => Effect.succeed([]))
      })

    // --- Inboxes ----------------------------------------------------------------------------

    const inbox = <R>(target: Effect.Effect<InboxTarget | undefined, never, R>) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const max = maxBytes(settings)
        const declared = Number(request.headers["content-length"] ?? "0")
        if (Number.isFinite(declared) && declared > max)
          return errorBody(413, `the activity is larger than ${max} bytes ([federation] MAX_SIZE)`)
        const resolved = yield* target
        if (resolved === undefined) return notFound()
        const body = yield* request.arrayBuffer.pipe(
          Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(max)),
          Effect.option
        )
        if (Option.isNone(body))
          return errorBody(413, `the activity is larger than ${max} bytes ([federation] MAX_SIZE)`)
        const headers = new Headers()
        for (const [name, value] of Object.entries(request.headers))
          if (typeof value === "string") headers.set(name, value)
        // The URL the sender signed: the request's target under ROOT_URL (which may have a path, when
        // a proxy serves Hearth under one and takes it off before passing requests on).
        const web = new Request(new URL(request.url.replace(/^\//, ""), paths.root), {
          method: "POST",
          headers,
          body: body.value
        })
        const answer = yield* receive(federation, resolved, web, Buffer.from(body.value).toString("utf8"))
        return answer.message === undefined
          ? HttpServerResponse.empty({ status: answer.status })
          : errorBody(answer.status, answer.message)
      })

    const personInbox = Effect.map(personOf, (user): InboxTarget | undefined =>
      user === undefined ? undefined : { kind: "user", user }
    )
    const repositoryInbox = Effect.map(repositoryOf, (found): InboxTarget | undefined =>
      found === undefined ? undefined : { kind: "repository", repoId: found.repo.id }
    )
    const sharedInbox = Effect.succeed<InboxTarget>({ kind: "shared" })

    // A person's actor URL opened in a browser (or followed from Mastodon's "open original page")
    // goes to the profile page; ActivityPub clients, and clients that name no preference, get the
    // Person. `Vary: Accept` keeps caches from serving one to the other.
    const actorRoute = Effect.gen(function* () {
      const user = yield* personOf
      if (user === undefined) return notFound()
      const request = yield* HttpServerRequest.HttpServerRequest
      if (prefersHtml(request.headers.accept)) {
        return HttpServerResponse.empty({ status: 302, headers: { location: paths.profile(user), vary: "Accept" } })
      }
      return HttpServerResponse.setHeader(yield* personActor(user), "vary", "Accept")
    })

    /**
     * A route whose defects are logged and answered 500 with the API's error body; a database outage
     * is answered 503 with Retry-After, as every other route answers it.
     */
    const add = <E, R>(
      operation: FederationOperation,
      handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    ) =>
      HttpRouter.add(
        operation.method,
        operation.path as HttpRouter.PathInput,
        handler.pipe(
          Effect.catchCause((cause) =>
            Cause.hasInterruptsOnly(cause)
              ? Effect.failCause(cause)
              : (answerOutage(cause, `${paths.root}api/swagger`) ??
                Effect.as(
                  Effect.logError(`federation request failed: ${operation.method} ${operation.path}`, cause),
                  errorBody(500, "internal server error")
                ))
          )
        )
      )
    /**
     * An actor URL by an old name of a renamed person (`user/{old}/…`, 404 otherwise): a 307 to the
     * same URL under the new name, as the API answers an old name (Forgejo's RedirectToUser).
     */
    const followRename = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
      Effect.flatMap(handler, (response) =>
        response.status !== 404
          ? Effect.succeed(response)
          : Effect.gen(function* () {
              const name = (yield* params).name
              if (name === undefined) return response
              const renamed = yield* federation.renamedPerson(name)
              if (Option.isNone(renamed)) return response
              const request = yield* HttpServerRequest.HttpServerRequest
              const old = `/activitypub/user/${encodeURIComponent(name)}`
              const url = request.url
              const at = url.toLowerCase().indexOf(old.toLowerCase())
              if (at < 0) return response
              const moved = `${url.slice(0, at)}/activitypub/user/${encodeURIComponent(renamed.value.name)}${url.slice(at + old.length)}`
              return HttpServerResponse.empty({
                status: 307,
                headers: { location: new URL(moved.replace(/^\//, ""), paths.root).toString(), ...CORS }
              })
            })
      )
    const person = (ops: typeof FederationOperations.personByName | typeof FederationOperations.personById) => {
      const byName = ops === FederationOperations.personByName
      const route = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
        byName ? followRename(handler) : handler
      return [
        add(ops.actor, route(actorRoute)),
        add(ops.inbox, route(inbox(personInbox))),
        add(ops.outbox, route(personCollection("outbox"))),
        add(ops.followers, route(personCollection("followers"))),
        add(ops.following, route(personCollection("following"))),
        add(ops.liked, route(personCollection("liked"))),
        add(ops.activity, route(published("activity"))),
        add(ops.activityAgain, route(published("activity"))),
        add(ops.note, route(published("note")))
      ] as const
    }
    const ops = FederationOperations
    return Layer.mergeAll(
      add(ops.webfinger, webfinger),
      add(ops.nodeinfoLinks, nodeinfoLinks),
      add(ops.nodeinfo, nodeinfo),
      add(ops.instanceActor, instanceActor),
      add(ops.instanceInbox, inbox(sharedInbox)),
      add(
        ops.instanceOutbox,
        collection(`${paths.instance}/outbox`, 0, () => Effect.succeed([]))
      ),
      add(ops.sharedInbox, inbox(sharedInbox)),
      add(ops.repository, repositoryActor),
      add(ops.repositoryOutbox, repositoryCollection("outbox")),
      add(ops.repositoryFollowers, repositoryCollection("followers")),
      add(ops.repositoryInbox, inbox(repositoryInbox)),
      ...person(ops.personByName),
      ...person(ops.personById)
    )
  })
)
