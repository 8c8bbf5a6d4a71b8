// Fedify, imported on first use (it costs ~0.4 s and ~30 MB, which a server that never federates
// should not pay) and built from Hearth's settings: its key-value store and delivery queue in the
// database (Store.ts), every remote document it reads fetched through Remote.ts (host policy,
// time-out, MAX_SIZE, a minute's cache), the key pairs of local actors (RSA for HTTP signatures as `#main-key`,
// Ed25519 for object proofs; made once, kept sealed), and the Person actor it answers.

import { webcrypto } from "node:crypto"
import type { Federation as FedifyFederation } from "@fedify/fedify"
import { Effect } from "effect"
import type { SettingsShape } from "../src/config/Settings.ts"
import type { DeliveryQueue } from "../src/jobs/Queue.ts"
import { sealer } from "../src/lib/Sealer.ts"
import type { UserRow } from "../src/users/Repo.ts"
import type { Paths } from "./Paths.ts"
import { type Documents, deliveryFetch } from "./Remote.ts"
import type { FederationRepo } from "./Repo.ts"
import { type Run, reportDeliveryError, type SqlKvStore, SqlMessageQueue } from "./Store.ts"

/** Text for HTML (a profile field's value is HTML). */
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** A user's website as a `PropertyValue` field (none when it is no http(s) URL). */
const websiteField = (V: Vocab, website: string) => {
  let url: URL
  try {
    url = new URL(website)
  } catch {
    return []
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return []
  return [
    new V.PropertyValue({
      name: "Website",
      value: `<a href="${escapeHtml(url.href)}" rel="me nofollow noopener noreferrer" target="_blank">${escapeHtml(website)}</a>`
    })
  ]
}

export type FedifyModule = typeof import("@fedify/fedify")
export type Vocab = typeof import("@fedify/fedify/vocab")

export interface RemoteDocument {
  readonly contextUrl: string | null
  readonly documentUrl: string
  readonly document: unknown
}

export interface Loaded {
  readonly F: FedifyModule
  readonly V: Vocab
  readonly federation: FedifyFederation<void>
  /** Remote documents for Fedify (signature keys, objects), through Remote.ts. */
  readonly documentLoader: (url: string) => Promise<RemoteDocument>
  /** JSON-LD contexts: Fedify's preloaded ones, never fetched. */
  readonly contextLoader: (url: string) => Promise<RemoteDocument>
  /** A local owner's key pairs ("user:<id>" or "instance"), RSA first. */
  readonly keyPairsOf: (owner: string) => Promise<ReadonlyArray<webcrypto.CryptoKeyPair>>
  /** Ends the delivery loop (at shutdown). */
  readonly stop: () => void
}

export interface FedifyDeps {
  readonly settings: SettingsShape
  readonly paths: Paths
  readonly repo: (typeof FederationRepo)["Service"]
  readonly queue: (typeof DeliveryQueue)["Service"]
  readonly run: Run
  readonly kv: SqlKvStore
  readonly documents: Documents
  /** The local user a Person request names, if it may be federated. */
  readonly person: (identifier: string) => Promise<UserRow | undefined>
}

/**
 * A new key pair: RSA of 2048 bits (what Mastodon and Forgejo use; Fedify's own generator makes
 * 4096-bit keys, which take a second or more to make on first use), or Ed25519.
 */
const generate = (algorithm: "rsa" | "ed25519"): Promise<webcrypto.CryptoKeyPair> =>
  algorithm === "rsa"
    ? webcrypto.subtle.generateKey(
        { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
        true,
        ["sign", "verify"]
      )
    : (webcrypto.subtle.generateKey({ name: "Ed25519" }, true, [
        "sign",
        "verify"
      ]) as unknown as Promise<webcrypto.CryptoKeyPair>)

/** Builds the loader: the first call imports and builds Fedify, later ones share it. */
export const makeFedify = (deps: FedifyDeps): (() => Promise<Loaded>) => {
  const { settings, paths, repo, run } = deps
  const keys = sealer(settings.security.SECRET_KEY, "federation-keys")
  const abort = new AbortController()
  let loaded: Promise<Loaded> | undefined

  const build = async (): Promise<Loaded> => {
    const [F, V] = await Promise.all([import("@fedify/fedify"), import("@fedify/fedify/vocab")])

    const documentLoader = async (url: string): Promise<RemoteDocument> => ({
      contextUrl: null,
      documentUrl: url.replace(/#.*$/, ""),
      document: await Effect.runPromise(deps.documents.fetch(url))
    })
    const contexts = F.preloadedContexts as Record<string, unknown>
    const contextLoader = async (url: string): Promise<RemoteDocument> => {
      const preloaded = contexts[url]
      if (preloaded === undefined) throw new Error(`the JSON-LD context ${url} is not one this server knows`)
      return { contextUrl: null, documentUrl: url, document: preloaded }
    }

    const pairs = new Map<string, Promise<ReadonlyArray<webcrypto.CryptoKeyPair>>>()
    const keyPairsOf = (owner: string) => {
      let found = pairs.get(owner)
      if (found === undefined) {
        found = (async () => {
          let rows = await run(repo.keys(owner))
          for (const algorithm of ["rsa", "ed25519"] as const) {
            if (rows.some((row) => row.algorithm === algorithm)) continue
            const pair = await generate(algorithm)
            const privateJwk = keys.seal(JSON.stringify(await F.exportJwk(pair.privateKey)))
            await run(repo.insertKey(owner, algorithm, privateJwk, await F.exportJwk(pair.publicKey)))
          }
          // Read back: when two requests made keys at once, the stored ones are the ones.
          rows = await run(repo.keys(owner))
          return Promise.all(
            rows.map(async (row) => ({
              privateKey: await F.importJwk(JSON.parse(keys.open(row.privateJwk)), "private"),
              publicKey: await F.importJwk(row.publicJwk, "public")
            }))
          )
        })()
        found.catch(() => pairs.delete(owner))
        pairs.set(owner, found)
      }
      return found
    }

    const queue = new SqlMessageQueue(deps.queue, run, {
      attempts: settings.federation.DELIVERY_ATTEMPTS,
      retryDelayMs: settings.federation.DELIVERY_RETRY_DELAY * 1000,
      seal: keys.seal,
      open: keys.open,
      // Deliveries follow [federation]'s host policy, time-out and size cap like every other fetch.
      fetch: deliveryFetch(settings)
    })
    const federation = F.createFederation<void>({
      kv: deps.kv,
      queue,
      manuallyStartQueue: true,
      origin: paths.origin,
      // Every fetch goes through Remote.ts, which applies [federation]'s host policy itself.
      documentLoaderFactory: () => documentLoader as never,
      contextLoaderFactory: () => contextLoader as never,
      // Retries and holding are the queue's (it keeps deliveries to an inbox in order).
      circuitBreaker: false,
      // The queue tells a failure Fedify only reports (a 404 or 410 inbox) from a success.
      onOutboxError: (error) => reportDeliveryError(error)
    })

    federation
      // Under ROOT_URL's path, if it has one (a server behind a proxy at https://example.com/git/).
      .setActorDispatcher(
        `${new URL(paths.root).pathname}api/v1/activitypub/user/{identifier}` as `/${string}{identifier}${string}`,
        async (ctx, identifier) => {
          const user = await deps.person(identifier)
          if (user === undefined) return null
          const id = new URL(paths.actor(user))
          const actorKeys = await ctx.getActorKeyPairs(identifier)
          return new V.Person({
            id,
            preferredUsername: user.name,
            name: user.fullName !== "" ? user.fullName : user.name,
            summary: user.description !== "" ? user.description : null,
            url: new URL(paths.profile(user)),
            icon: new V.Image({ mediaType: "image/png", url: new URL(paths.avatar(user)) }),
            // The website as a profile field, as Mastodon writes one: Mastodon shows it, and marks it
            // verified when that page links back with rel="me" (the profile page does the same).
            attachments: websiteField(V, user.website),
            inbox: new URL(`${id.href}/inbox`),
            outbox: new URL(`${id.href}/outbox`),
            followers: new URL(`${id.href}/followers`),
            following: new URL(`${id.href}/following`),
            liked: new URL(`${id.href}/liked`),
            endpoints: new V.Endpoints({ sharedInbox: new URL(paths.sharedInbox) }),
            publicKey: actorKeys[0]?.cryptographicKey ?? null,
            assertionMethods: actorKeys.map((key) => key.multikey)
          })
        }
      )
      .setKeyPairsDispatcher(async (_ctx, identifier) => {
        const user = await deps.person(identifier)
        return user === undefined ? [] : [...(await keyPairsOf(`user:${user.id}`))]
      })

    // Deliveries left in the queue by an earlier run resume now, with the new ones.
    void federation.startQueue(undefined, { signal: abort.signal }).catch(() => undefined)
    return {
      F,
      V,
      federation,
      documentLoader,
      contextLoader,
      keyPairsOf,
      stop: () => abort.abort()
    }
  }

  return () => {
    loaded ??= build()
    loaded.catch(() => {
      loaded = undefined
    })
    return loaded
  }
}
