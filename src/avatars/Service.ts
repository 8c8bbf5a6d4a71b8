// Avatars of accounts (users and organizations) and repositories (Forgejo's `UploadAvatar`,
// `DeleteAvatar`): the picture is checked and made a PNG (Image.ts), stored in the blob storage
// under its sha256, and the row points at it; the blob's reference moves with the row in one
// transaction (src/storage/Service.ts), so replacing or deleting an avatar frees the old file.
// Served back by Routes.ts, resized copies kept in memory.
import { Readable } from "node:stream"
import { Context, Effect, Layer, Option } from "effect"
import { Settings } from "../config/Settings.ts"
import type * as Errors from "../http/Errors.ts"
import type { RepoRow } from "../repos/Repo.ts"
import { ReposRepo } from "../repos/Repo.ts"
import { BlobStorage } from "../storage/Service.ts"
import type { UserRow } from "../users/Repo.ts"
import { UsersRepo } from "../users/Repo.ts"
import { identiconPng, prepareAvatar, resizedPng } from "./Image.ts"
import { type AvatarOwner, AvatarsRepo } from "./Repo.ts"
import { AVATAR_SIZE } from "./Url.ts"

/** Resized avatars and identicons kept in memory (each a few KiB). */
const CACHE_MAX = 512

const SHA256 = /^[0-9a-f]{64}$/

export class AvatarsService extends Context.Service<
  AvatarsService,
  {
    /** Replaces the avatar of an account (user or organization); 422 for what is no usable picture. */
    readonly setAccount: (account: UserRow, data: Uint8Array) => Effect.Effect<void, Errors.ValidationFailed>
    readonly removeAccount: (account: UserRow) => Effect.Effect<void>
    readonly setRepo: (repo: RepoRow, data: Uint8Array) => Effect.Effect<void, Errors.ValidationFailed>
    readonly removeRepo: (repo: RepoRow) => Effect.Effect<void>
    /** A stored avatar as PNG, at most `size` pixels wide; none when no row of `owner` has it. */
    readonly read: (owner: AvatarOwner, hash: string, size: number) => Effect.Effect<Option.Option<Uint8Array>>
    /** The identicon of a name as PNG, `size` pixels wide. */
    readonly identicon: (name: string, size: number) => Effect.Effect<Uint8Array>
  }
>()("hearth/avatars/AvatarsService") {
  static readonly layer = Layer.effect(
    AvatarsService,
    Effect.gen(function* () {
      const settings = yield* Settings
      const storage = yield* BlobStorage
      const avatars = yield* AvatarsRepo
      const users = yield* UsersRepo
      const repos = yield* ReposRepo

      const cache = new Map<string, Uint8Array>()
      const cached = (key: string, make: Effect.Effect<Uint8Array>) =>
        Effect.suspend(() => {
          const hit = cache.get(key)
          if (hit !== undefined) return Effect.succeed(hit)
          return Effect.tap(make, (png) =>
            Effect.sync(() => {
              if (cache.size >= CACHE_MAX) cache.clear()
              cache.set(key, png)
            })
          )
        })

      /** Stores the picture and points the row at it, giving the old one's reference back. */
      const replace = (owner: AvatarOwner, id: number, data: Uint8Array | undefined) =>
        Effect.gen(function* () {
          const png = data === undefined ? undefined : yield* prepareAvatar(settings, data)
          // Outside the transaction, as the storage asks; held until the row's acquire.
          const blob =
            png === undefined
              ? undefined
              : yield* Effect.orDie(storage.put(Readable.from([png]), { maxSize: png.length, length: png.length }))
          yield* avatars.transaction(
            Effect.gen(function* () {
              const old = yield* avatars.lockCurrent(owner, id)
              const hash = blob?.sha256 ?? ""
              if (owner === "user") yield* Effect.orDie(users.update(id, { avatar: hash }))
              else yield* Effect.orDie(repos.update(id, { avatar: hash }))
              if (blob !== undefined) yield* Effect.orDie(storage.acquire(blob))
              if (old !== "") yield* Effect.orDie(storage.release(old))
            })
          )
        })

      const readStored = (hash: string) =>
        Effect.gen(function* () {
          const opened = yield* Effect.orDie(storage.open(hash))
          const chunks: Array<Buffer> = []
          yield* Effect.promise(async () => {
            for await (const chunk of opened.readable()) chunks.push(chunk as Buffer)
          })
          return Buffer.concat(chunks) as Uint8Array
        })

      return AvatarsService.of({
        setAccount: (account, data) => replace("user", account.id, data),
        removeAccount: (account) => replace("user", account.id, undefined) as Effect.Effect<void>,
        setRepo: (repo, data) => replace("repo", repo.id, data),
        removeRepo: (repo) => replace("repo", repo.id, undefined) as Effect.Effect<void>,
        read: (owner, hash, size) =>
          Effect.gen(function* () {
            if (!SHA256.test(hash) || !(yield* avatars.inUse(owner, hash))) return Option.none()
            // The stored file is read each time (the blob storage's); only resized copies are kept.
            const original = yield* readStored(hash)
            if (size >= AVATAR_SIZE) return Option.some(original)
            return Option.some(yield* cached(`${hash}/${size}`, resizedPng(original, size)))
          }),
        identicon: (name, size) => cached(`identicon/${name.toLowerCase()}/${size}`, identiconPng(name, size))
      })
    })
  )
}
