// Key rules (Forgejo's models/asymkey/ssh_key*.go): one key per fingerprint on the whole instance, unique titles per user
// (and per repository for deploy keys), only the owner or an admin deletes a user key; deploy
// keys are managed by the repository's admins. Also answers the SSH server: whose key is this?
import { Context, Effect, Layer, Option } from "effect"
import { onAlreadyExists } from "../db/Boundary.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import type { Page } from "../http/Pagination.ts"
import type { RepoRow } from "../repos/Repo.ts"
import type { UserRow } from "../users/Repo.ts"
import { UsersRepo } from "../users/Repo.ts"
import { KeyRejected, type ParsedKey, parsePublicKey } from "./Parse.ts"
import { type DeployKeyRow, KeysRepo, type PublicKeyRow } from "./Repo.ts"

export const KEY_USED = "Key content has been used as non-deploy key"
export const TITLE_USED = "Key title has been used"
export const DEPLOY_KEY_ON_REPO = "This key has already been added to this repository"
export const DEPLOY_TITLE_USED = "A key with the same name already exists"

export interface KeyInput {
  readonly title: string
  readonly key: string
  readonly read_only?: boolean | undefined
}

/** Who an SSH key authenticates. */
export type KeyIdentity =
  | { readonly kind: "user"; readonly key: PublicKeyRow; readonly user: UserRow }
  | { readonly kind: "deploy"; readonly key: PublicKeyRow; readonly deployments: ReadonlyArray<DeployKeyRow> }

type Listed<A> = { rows: Array<A>; total: number }

export class KeysService extends Context.Service<
  KeysService,
  {
    readonly create: (caller: Principal, input: KeyInput) => Effect.Effect<PublicKeyRow, Errors.ValidationFailed>
    readonly listOf: (owner: UserRow, page: Page) => Effect.Effect<Listed<PublicKeyRow>>
    /** The key with this fingerprint (of `owner` only, when given), as a list of at most one. */
    readonly lookup: (fingerprint: string, owner?: UserRow) => Effect.Effect<Array<PublicKeyRow>>
    /** One of the caller's own keys (any user's for an admin); 404 for every other id. */
    readonly get: (caller: Principal, id: string) => Effect.Effect<PublicKeyRow, Errors.NotFound>
    readonly remove: (caller: Principal, id: string) => Effect.Effect<void, Errors.NotFound | Errors.Forbidden>
    /** The owner of a user key (for its JSON). */
    readonly ownerOf: (key: PublicKeyRow) => Effect.Effect<Option.Option<UserRow>>
    readonly listDeploy: (
      repo: RepoRow,
      filter: { fingerprint?: string | undefined; keyId?: string | undefined },
      page: Page
    ) => Effect.Effect<Listed<DeployKeyRow>>
    readonly createDeploy: (repo: RepoRow, input: KeyInput) => Effect.Effect<DeployKeyRow, Errors.ValidationFailed>
    readonly getDeploy: (repo: RepoRow, id: string) => Effect.Effect<DeployKeyRow, Errors.NotFound>
    readonly removeDeploy: (repo: RepoRow, id: string) => Effect.Effect<void, Errors.NotFound>
    /**
     * Registers an SSH-certificate principal for `user` (Forgejo's principal keys; like Forgejo, no
     * API route adds them). 422 when another account has it.
     */
    readonly addPrincipal: (user: UserRow, principal: string) => Effect.Effect<PublicKeyRow, Errors.ValidationFailed>
    /** Who presents a key with this fingerprint over SSH, if anyone. */
    readonly identify: (fingerprint: string) => Effect.Effect<Option.Option<KeyIdentity>>
  }
>()("hearth/keys/KeysService") {
  static readonly layer = Layer.effect(
    KeysService,
    Effect.gen(function* () {
      const keys = yield* KeysRepo
      const users = yield* UsersRepo

      const idOf = (id: string) => (/^\d{1,15}$/.test(id) ? Option.some(Number(id)) : Option.none<number>())

      const parsed = (input: KeyInput) =>
        Effect.gen(function* () {
          const title = input.title.trim()
          if (title === "") return yield* Errors.validationFailed("[Title]: Required")
          if (input.key.trim() === "") return yield* Errors.validationFailed("[Key]: Required")
          const key = yield* Effect.try({
            try: () => parsePublicKey(input.key),
            catch: (e) => Errors.validationFailed(e instanceof KeyRejected ? e.message : "Unable to verify key content")
          })
          return { title, key } satisfies { title: string; key: ParsedKey }
        })

      /** A unique violation raced past the checks: the same answer the check would have given. */
      const onUnique = (message: string) => onAlreadyExists(() => Errors.validationFailed(message))

      return KeysService.of({
        create: (caller, input) =>
          Effect.gen(function* () {
            const { key, title } = yield* parsed(input)
            // A deleted repository takes its deploy keys along (cascade), not the key they shared.
            yield* keys.dropOrphanDeployKey(key.fingerprint)
            if (Option.isSome(yield* keys.findByFingerprint(key.fingerprint))) {
              return yield* Errors.validationFailed(KEY_USED)
            }
            if (yield* keys.nameTaken(caller.user.id, title)) return yield* Errors.validationFailed(TITLE_USED)
            return yield* keys
              .insertUserKey({
                ownerId: caller.user.id,
                name: title,
                fingerprint: key.fingerprint,
                content: key.content
              })
              .pipe(onUnique(KEY_USED))
          }),
        listOf: (owner, page) => keys.listByOwner(owner.id, page.limit, page.offset),
        lookup: (fingerprint, owner) =>
          Effect.map(keys.findByFingerprint(fingerprint), (found) =>
            Option.isSome(found) &&
            found.value.keyType === "user" &&
            (owner === undefined || found.value.ownerId === owner.id)
              ? [found.value]
              : []
          ),
        // Forgejo answers any key by id (owner fields hidden); Hearth answers only the caller's
        // own keys (`/user/…` is about the caller, admins included), so no key is confirmed to exist.
        get: (caller, id) =>
          Effect.gen(function* () {
            const n = idOf(id)
            const found = Option.isNone(n) ? Option.none() : yield* keys.findById(n.value)
            if (Option.isNone(found) || found.value.keyType !== "user") return yield* Errors.notFound()
            if (found.value.ownerId !== caller.user.id) return yield* Errors.notFound()
            return found.value
          }),
        remove: (caller, id) =>
          Effect.gen(function* () {
            const n = idOf(id)
            const found = Option.isNone(n) ? Option.none() : yield* keys.findById(n.value)
            if (Option.isNone(found)) return yield* Errors.notFound()
            if (found.value.ownerId !== caller.user.id && !caller.user.isAdmin) {
              return yield* Errors.forbidden("You do not have access to this key")
            }
            yield* keys.remove(found.value.id)
          }),
        ownerOf: (key) => (key.ownerId === null ? Effect.succeed(Option.none()) : users.findById(key.ownerId)),
        listDeploy: (repo, filter, page) => {
          const keyId =
            filter.keyId === undefined || filter.keyId === "" ? undefined : Number.parseInt(filter.keyId, 10)
          return keys.listDeploy(
            repo.id,
            {
              fingerprint: filter.fingerprint === "" ? undefined : filter.fingerprint,
              keyId: keyId === undefined || Number.isNaN(keyId) ? undefined : keyId
            },
            page.limit,
            page.offset
          )
        },
        createDeploy: (repo, input) =>
          Effect.gen(function* () {
            const { key, title } = yield* parsed(input)
            const existing = yield* keys.findByFingerprint(key.fingerprint)
            if (Option.isSome(existing) && existing.value.keyType === "user")
              return yield* Errors.validationFailed(KEY_USED)
            if (Option.isSome(existing)) {
              const onRepos = yield* keys.deployByKey(existing.value.id)
              if (onRepos.some((d) => d.repoId === repo.id)) return yield* Errors.validationFailed(DEPLOY_KEY_ON_REPO)
            }
            if (yield* keys.deployNameTaken(repo.id, title)) return yield* Errors.validationFailed(DEPLOY_TITLE_USED)
            return yield* keys
              .insertDeployKey({
                keyId: Option.isSome(existing) ? existing.value.id : undefined,
                repoId: repo.id,
                name: title,
                readOnly: input.read_only ?? false,
                fingerprint: key.fingerprint,
                content: key.content
              })
              .pipe(onUnique(DEPLOY_KEY_ON_REPO))
          }),
        getDeploy: (repo, id) =>
          Effect.gen(function* () {
            const n = idOf(id)
            const found = Option.isNone(n) ? Option.none() : yield* keys.findDeploy(repo.id, n.value)
            if (Option.isNone(found)) return yield* Errors.notFound()
            return found.value
          }),
        removeDeploy: (repo, id) =>
          Effect.gen(function* () {
            const n = idOf(id)
            const found = Option.isNone(n) ? Option.none() : yield* keys.findDeploy(repo.id, n.value)
            if (Option.isNone(found)) return yield* Errors.notFound()
            yield* keys.removeDeploy(found.value)
          }),
        addPrincipal: (user, principal) => {
          const name = principal.trim()
          if (name === "" || /[\s,]/.test(name))
            return Effect.fail(Errors.validationFailed("Invalid principal: one name without spaces or commas"))
          return keys.insertPrincipal(user.id, name).pipe(onUnique("Principal has been used"))
        },
        identify: (fingerprint) =>
          Effect.gen(function* () {
            const found = yield* keys.findByFingerprint(fingerprint)
            if (Option.isNone(found)) return Option.none()
            const key = found.value
            if (key.keyType === "deploy") {
              return Option.some({
                kind: "deploy" as const,
                key,
                deployments: yield* keys.deployByKey(key.id)
              })
            }
            const user = key.ownerId === null ? Option.none() : yield* users.findById(key.ownerId)
            return Option.map(user, (user) => ({ kind: "user" as const, key, user }))
          })
      })
    })
  )
}
