// The federation service: which local users and repositories are ActivityPub actors, remote
// actors as this server knows them (looked up by handle through WebFinger, or by URL, and
// recorded), signed delivery of activities through the durable queue, and the publishing of local
// users' public activity to their remote followers.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { signInProhibited } from "../src/auth/AccountState.ts"
import { Settings, type SettingsShape } from "../src/config/Settings.ts"
import type { Event } from "../src/events/Events.ts"
import { EventHub } from "../src/events/Hub.ts"
import * as Errors from "../src/http/Errors.ts"
import { DeliveryQueue } from "../src/jobs/Queue.ts"
import { type RepoRow, ReposRepo } from "../src/repos/Repo.ts"
import { type UserRow, UsersRepo } from "../src/users/Repo.ts"
import * as Activities from "./Activities.ts"
import { type Loaded, makeFedify } from "./Fedify.ts"
import { type Paths, pathsOf } from "./Paths.ts"
import { noteAuthor, type RepositoryEvent, repositoryNote } from "./Publish.ts"
import { asObject, checkUrl, type Documents, fetchJson, idOf, makeDocuments, RemoteError, typeOf } from "./Remote.ts"
import { FederationRepo, type RemoteActor } from "./Repo.ts"
import { FEDERATION_TOPIC, SqlKvStore } from "./Store.ts"

/** A local account that is an ActivityPub Person: an active, public, individual user. */
export const federatedUser = (user: UserRow) =>
  user.type === "user" && user.visibility === "public" && !signInProhibited(user)

/** A local repository that is a ForgeFed Repository actor: public, ready, of a public owner. */
export const federatedRepository = (repo: RepoRow, owner: UserRow) =>
  !repo.isPrivate && repo.status === "ready" && owner.visibility === "public" && owner.isActive

/** The actor types Hearth follows and stars (ForgeFed's Repository included). */
const ACTOR_TYPES = new Set(["Person", "Service", "Application", "Group", "Organization", "Repository"])

/** A remote failure as the local request's answer (what the caller can act on). */
export const toApiError = (error: RemoteError) => Errors.refusal(error.reason, error.message)

export class Federation extends Context.Service<
  Federation,
  {
    readonly enabled: boolean
    readonly settings: SettingsShape
    readonly paths: Paths
    readonly repo: (typeof FederationRepo)["Service"]
    readonly documents: Documents
    /** The key-value store Fedify and the inboxes share (in the database). */
    readonly kv: SqlKvStore
    /** Fedify, imported and built on first use. */
    readonly fedify: Effect.Effect<Loaded>
    /**
     * Resumes the deliveries an earlier run left queued (loading Fedify only when there are any).
     * Called by `serve` once the server listens: a remote inbox verifies a delivery by fetching the
     * sender's key from this server, and one sent before it answers fails there (some servers then
     * keep the failed key fetch and refuse the sender for a while). Commands never call it.
     */
    readonly resumeDeliveries: Effect.Effect<void>
    /** The local user named (any letter case), when it is a federated Person. */
    readonly person: (name: string) => Effect.Effect<Option.Option<UserRow>>
    readonly personById: (id: number) => Effect.Effect<Option.Option<UserRow>>
    /**
     * The federated Person that was called `name` before a rename (src/users/Rename.ts), when no
     * account holds the name now: its old actor URLs redirect there and WebFinger for the old
     * `acct:` answers it.
     */
    readonly renamedPerson: (name: string) => Effect.Effect<Option.Option<UserRow>>
    /** The local repository with this id and its owner, when it is a federated Repository. */
    readonly repository: (
      id: number
    ) => Effect.Effect<Option.Option<{ readonly repo: RepoRow; readonly owner: UserRow }>>
    /** Fetches a remote actor (cached a minute unless `fresh`) and records it. */
    readonly remember: (uri: string, options?: { readonly fresh?: boolean }) => Effect.Effect<RemoteActor, RemoteError>
    /**
     * A remote actor by handle (`user@host`, `@user@host`, `acct:user@host`) or by URL; `known`
     * takes the one recorded under that handle without asking its server again.
     */
    readonly lookup: (handle: string, options?: { readonly known?: boolean }) => Effect.Effect<RemoteActor, RemoteError>
    /** A remote repository by its owner's handle and its name (WebFinger on its page's URL). */
    readonly lookupRepository: (
      ownerHandle: string,
      name: string,
      options?: { readonly known?: boolean }
    ) => Effect.Effect<RemoteActor, RemoteError>
    /** Fails (403) when this server may not deliver to the actor's inbox (BLOCKED_HOSTS, a local address…). */
    readonly deliverable: (actor: RemoteActor) => Effect.Effect<void, RemoteError>
    /** Signs and queues an activity of a local user for remote actors (delivered in order, retried). */
    readonly send: (
      sender: UserRow,
      recipients: ReadonlyArray<RemoteActor>,
      activity: Activities.Activity
    ) => Effect.Effect<void, RemoteError>
    /**
     * Publishes a user's public activity: kept in their outbox, and sent to their remote followers
     * in the background (the caller never waits for it). Nothing when the user is not federated.
     */
    readonly publish: (user: UserRow, note: { readonly text: string; readonly url: string }) => Effect.Effect<void>
    /**
     * Publishes a repository event as its doer's activity (Publish.ts says which ones and how),
     * waiting until it is queued for the followers; fails with why it could not be.
     */
    readonly announce: (event: RepositoryEvent, key?: string) => Effect.Effect<void, string>
  }
>()("hearth/federation/Federation") {
  static readonly layer = Layer.effect(
    Federation,
    Effect.gen(function* () {
      const settings = yield* Settings
      const sql = yield* SqlClient
      const users = yield* UsersRepo
      const repos = yield* ReposRepo
      const queue = yield* DeliveryQueue
      const repo = yield* FederationRepo
      const paths = pathsOf(settings)
      const enabled = settings.federation.ENABLED
      const documents = makeDocuments(settings)
      const context = yield* Effect.context<never>()
      const run = <A>(effect: Effect.Effect<A, unknown>) => Effect.runPromiseWith(context)(effect)
      const kv = new SqlKvStore(sql, run)

      const person = (name: string) => Effect.map(users.findByName(name), Option.filter(federatedUser))
      const personById = (id: number) => Effect.map(users.findById(id), Option.filter(federatedUser))
      const renamedPerson = (name: string) =>
        Effect.gen(function* () {
          if (Option.isSome(yield* users.findByName(name))) return Option.none<UserRow>()
          const id = yield* users.redirectOf(name)
          return Option.isNone(id) ? Option.none<UserRow>() : yield* personById(id.value)
        })

      const load = makeFedify({
        settings,
        paths,
        repo,
        queue,
        run,
        kv,
        documents,
        person: (identifier) => run(person(identifier)).then(Option.getOrUndefined)
      })
      const fedify = Effect.promise(load)
      // Deliveries stop with the server; the ones still queued resume at the next start.
      let started = false
      yield* Effect.addFinalizer(() =>
        started
          ? Effect.promise(() =>
              load().then(
                (f) => f.stop(),
                () => undefined
              )
            )
          : Effect.void
      )
      const fedifyStarted = Effect.suspend(() => {
        started = true
        return fedify
      })

      const repository = (id: number) =>
        Effect.gen(function* () {
          const found = yield* repos.findById(id)
          if (Option.isNone(found)) return Option.none()
          const owner = yield* users.findById(found.value.ownerId)
          if (Option.isNone(owner) || !federatedRepository(found.value, owner.value)) return Option.none()
          return Option.some({ repo: found.value, owner: owner.value })
        })

      // The row recorded for each document fetched: a document served again from the minute's
      // cache (every activity of a busy sender) is not written again.
      const recorded = new WeakMap<object, RemoteActor>()

      const remember = (uri: string, options: { readonly fresh?: boolean } = {}) =>
        Effect.gen(function* () {
          const document = asObject(yield* documents.fetch(uri, options))
          const known = document === undefined ? undefined : recorded.get(document)
          if (known !== undefined) return known
          const id = idOf(document)
          if (document === undefined || id === undefined || !URL.canParse(id)) {
            return yield* new RemoteError({ message: `${uri} is not an ActivityPub object`, reason: "remote-failed" })
          }
          // A server speaks only for its own objects.
          if (new URL(id).origin !== new URL(uri).origin) {
            return yield* new RemoteError({
              message: `${uri} answered an object of another server`,
              reason: "remote-failed"
            })
          }
          const type = typeOf(document) ?? ""
          if (!ACTOR_TYPES.has(type))
            return yield* new RemoteError({
              message: `${uri} is a ${type || "thing"}, not an actor`,
              reason: "invalid"
            })
          const inbox = idOf(document.inbox)
          if (inbox === undefined || !URL.canParse(inbox)) {
            return yield* new RemoteError({ message: `${uri} has no inbox`, reason: "remote-failed" })
          }
          const text = (value: unknown) => (typeof value === "string" ? value : "")
          const sharedInbox = idOf(asObject(document.endpoints)?.sharedInbox) ?? ""
          const url = idOf(Array.isArray(document.url) ? document.url[0] : document.url) ?? ""
          const actor = yield* repo.upsertActor({
            uri: id,
            host: new URL(id).host,
            type,
            preferredUsername: text(document.preferredUsername),
            name: text(document.name),
            inbox,
            sharedInbox: URL.canParse(sharedInbox) ? sharedInbox : "",
            url: URL.canParse(url) ? url : ""
          })
          recorded.set(document, actor)
          return actor
        })

      const scheme = settings.federation.USE_INSECURE_HTTP ? "http" : "https"

      /** The `self` link of a WebFinger resource at `host`: the ActivityPub id it names. */
      const webfinger = (host: string, resource: string) =>
        Effect.gen(function* () {
          const jrd = asObject(
            yield* fetchJson(
              settings,
              `${scheme}://${host}/.well-known/webfinger?resource=${encodeURIComponent(resource)}`,
              "application/jrd+json, application/json"
            )
          )
          const links = Array.isArray(jrd?.links) ? jrd.links.map(asObject) : []
          const self = links.find(
            (link) =>
              link?.rel === "self" &&
              typeof link.href === "string" &&
              (link.type === "application/activity+json" || String(link.type ?? "").startsWith("application/ld+json"))
          )
          if (self === undefined)
            return yield* new RemoteError({ message: `${resource} has no ActivityPub actor`, reason: "not-found" })
          return self.href as string
        })

      // The host is a name or an address with an optional port, and nothing that would change the URL made of it.
      const HANDLE = /^(?:acct:)?@?([^@\s/]+)@([\p{L}\p{N}.-]+(?::\d{1,5})?|\[[0-9A-Fa-f:.]+\](?::\d{1,5})?)$/u

      /** The recorded actor of a handle, or what `find` looks up (then recorded under it). */
      const byHandle = (handle: string, known: boolean, find: Effect.Effect<RemoteActor, RemoteError>) =>
        Effect.gen(function* () {
          if (known) {
            const recorded = yield* repo.actorByHandle(handle)
            if (Option.isSome(recorded)) return recorded.value
          }
          const actor = yield* find
          yield* repo.setHandle(actor.id, handle)
          return actor
        })

      const lookup = (handle: string, options: { readonly known?: boolean } = {}) =>
        Effect.gen(function* () {
          const text = handle.trim()
          if (/^https?:\/\//i.test(text)) {
            const recorded = options.known === true ? yield* repo.actorByUri(text) : Option.none()
            return Option.isSome(recorded) ? recorded.value : yield* remember(text)
          }
          const match = HANDLE.exec(text)
          if (match === null) {
            return yield* new RemoteError({
              message: `"${handle}" is neither a handle like user@host nor an actor URL`,
              reason: "invalid"
            })
          }
          const [, name, host] = match
          if (host!.toLowerCase() === paths.host.toLowerCase()) {
            return yield* new RemoteError({ message: `${text} is an account of this server`, reason: "invalid" })
          }
          return yield* byHandle(
            `${name}@${host}`.toLowerCase(),
            options.known === true,
            Effect.flatMap(webfinger(host!, `acct:${name}@${host}`), (uri) => remember(uri))
          )
        })

      const lookupRepository = (ownerHandle: string, name: string, options: { readonly known?: boolean } = {}) =>
        Effect.gen(function* () {
          const owner = yield* lookup(ownerHandle, options)
          const handle = `${ownerHandle.trim().replace(/^(?:acct:)?@/, "")}/${name}`.toLowerCase()
          const page = `${(owner.url !== "" ? owner.url : owner.uri).replace(/\/$/, "")}/${encodeURIComponent(name)}`
          const found = yield* byHandle(
            handle,
            options.known === true,
            Effect.flatMap(webfinger(owner.host, page), (uri) => remember(uri))
          )
          if (found.type !== "Repository") {
            return yield* new RemoteError({ message: `${ownerHandle}/${name} is not a repository`, reason: "invalid" })
          }
          return found
        })

      const deliverable = (actor: RemoteActor) =>
        Effect.asVoid(
          Effect.mapError(
            checkUrl(settings, actor.sharedInbox || actor.inbox),
            (error) =>
              new RemoteError({ message: `${actor.uri} cannot be delivered to: ${error.message}`, reason: "forbidden" })
          )
        )

      const send = (sender: UserRow, recipients: ReadonlyArray<RemoteActor>, activity: Activities.Activity) =>
        Effect.gen(function* () {
          // An actor's inbox is its server's word: it must be a place this server may deliver to.
          const allowed: Array<RemoteActor> = []
          for (const recipient of recipients) {
            const checked = yield* Effect.result(deliverable(recipient))
            if (checked._tag === "Success") allowed.push(recipient)
            else yield* Effect.logWarning(checked.failure.message)
          }
          if (allowed.length === 0) return
          const { V, federation, documentLoader, contextLoader } = yield* fedifyStarted
          yield* Effect.promise(async () => {
            const object = await V.Activity.fromJsonLd(activity, { documentLoader, contextLoader } as never)
            const ctx = federation.createContext(new URL(paths.root), undefined)
            await ctx.sendActivity(
              { identifier: sender.name },
              allowed.map((r) => ({
                id: new URL(r.uri),
                inboxId: new URL(r.inbox),
                endpoints: r.sharedInbox === "" ? null : { sharedInbox: new URL(r.sharedInbox) }
              })),
              object,
              // One queue row per inbox, in order per sender and server (Like before its Undo).
              { preferSharedInbox: true, fanout: "skip", orderingKey: paths.actor(sender) }
            )
          })
        })

      /** The note in the user's outbox and queued for its followers (the caller waits for both). */
      const publishNow = (user: UserRow, note: { readonly text: string; readonly url: string }, key?: string) =>
        !enabled || !federatedUser(user)
          ? Effect.void
          : Effect.gen(function* () {
              const activity = Activities.createNote(paths.actor(user), note, key)
              // Published again after a crash (the same key): kept once, and sent once (the queue
              // takes one activity once per inbox).
              if (Option.isNone(yield* repo.published(user.id, activity.id as string)))
                yield* repo.addOutbox(user.id, activity)
              const followers = yield* repo.followerActors(user.id)
              if (followers.length === 0) return
              yield* send(user, followers, activity)
            })

      const publish = (user: UserRow, note: { readonly text: string; readonly url: string }) =>
        publishNow(user, note).pipe(
          Effect.catchCause((cause) => Effect.logWarning(`could not publish an activity of ${user.name}`, cause)),
          Effect.forkDetach,
          Effect.asVoid
        )

      const announce = (event: RepositoryEvent, key?: string) => {
        const note = repositoryNote(paths, event)
        return note === undefined ? Effect.void : publishNow(noteAuthor(event), note, key)
      }

      /**
       * A renamed person's followers get an Update of the Person under its new name (its actor id
       * is by name: the old one answers a redirect, Routes.ts). As it is now: a rename undone or an
       * account no longer federated since sends nothing.
       */
      const renamed = (userId: number, oldName: string, key: string) =>
        Effect.gen(function* () {
          const user = yield* personById(userId)
          if (Option.isNone(user) || user.value.name === oldName) return
          const followers = yield* repo.followerActors(userId)
          if (followers.length === 0) return
          const actor = paths.actor(user.value)
          const activity = {
            ...Activities.updatePerson(actor, {
              name: user.value.name,
              fullName: user.value.fullName,
              profile: paths.profile(user.value),
              formerly: paths.actor({ name: oldName })
            }),
            // Named after the queued event: a repeat after a crash is the same activity.
            id: `${actor}#update-${key}`
          }
          yield* send(user.value, followers, activity)
        })

      // Repository events become notes of their doer (Publish.ts), through the event hub's durable
      // queue: a note is never lost to a crash between the change and its delivery.
      if (enabled) {
        const hub = yield* EventHub
        yield* hub.subscribeDurable({
          name: "federation",
          accepts: (event) =>
            (event._tag === "RenameUser" && !event.isOrganization) ||
            ("repo" in event &&
              !event.repo.private &&
              (event._tag === "CreateRepository" ||
                event._tag === "ForkRepository" ||
                (event._tag === "PushCommits" && (event.via === "http" || event.via === "ssh")) ||
                (event._tag === "Release" && event.action === "published"))),
          handle: (event: Event, key: string) =>
            Effect.gen(function* () {
              if (event._tag === "RenameUser") return yield* renamed(event.user.id, event.oldName, key)
              if (!("repo" in event)) return
              // As they are now: a repository deleted or made private since makes no note.
              const found = yield* Effect.orDie(repos.findById(event.repo.id))
              if (Option.isNone(found)) return
              const owner = yield* Effect.orDie(users.findById(found.value.ownerId))
              const doer = yield* Effect.orDie(users.findById(event.doer.id))
              if (Option.isNone(owner) || Option.isNone(doer)) return
              const about = { doer: doer.value, owner: owner.value, repo: found.value }
              yield* announce(
                event._tag === "ForkRepository"
                  ? { kind: "forked", ...about, source: event.source.fullName }
                  : event._tag === "Release"
                    ? { kind: "released", ...about, tag: event.release.tagName, title: event.release.title }
                    : { kind: event._tag === "CreateRepository" ? "created" : "pushed", ...about },
                key
              )
            }),
          attempts: settings.federation.DELIVERY_ATTEMPTS,
          retryDelayMs: settings.federation.DELIVERY_RETRY_DELAY * 1000
        })
      }

      const resumeDeliveries = Effect.gen(function* () {
        if (!enabled) return
        if (yield* queue.pending(FEDERATION_TOPIC)) yield* Effect.forkDetach(Effect.ignore(fedifyStarted))
      })

      return Federation.of({
        enabled,
        settings,
        paths,
        repo,
        documents,
        kv,
        fedify: fedifyStarted,
        resumeDeliveries,
        person,
        personById,
        renamedPerson,
        repository,
        remember,
        lookup,
        lookupRepository,
        deliverable,
        send,
        publish,
        announce
      })
    })
  )
}
