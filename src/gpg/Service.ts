// GPG key rules (Forgejo's models/asymkey/gpg_key_add.go, gpg_key_verify.go). A key is added when one of its identities' e-mails is an
// activated address of the caller, or, failing that, with a detached signature over the
// caller's verification token (then only the signing key is added, marked verified). Key ids
// are unique on the whole instance. `emails` is worked out when read, against the owner's
// activated addresses at that time, and is hidden from others when the owner keeps e-mail private.

import { createHash } from "node:crypto"
import { Context, Effect, Layer, Option } from "effect"
import { EmailsService } from "../emails/Service.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { formatTime } from "../http/Json.ts"
import type { Page } from "../http/Pagination.ts"
import { AccountPolicy } from "../users/Policy.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { mayReadEmail } from "../users/Schema.ts"
import type { GPGKey, GPGSubkey } from "./Api.ts"
import type { ParsedEntity } from "./Keys.ts"
import { type GpgKeyRow, GpgRepo } from "./Repo.ts"

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
const two = (n: number) => String(n).padStart(2, "0")
/** Go's time.RFC1123Z in UTC, e.g. "Mon, 02 Jan 2006 15:04:05 +0000". */
const rfc1123z = (d: Date) =>
  `${DAYS[d.getUTCDay()]}, ${two(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ` +
  `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`

/**
 * Forgejo's verification token: SHA-256 (hex) of the minute (`minutes` ahead of the current one)
 * and the account's creation time, name, e-mail and id. The token shown is the one for the next
 * minute; it is accepted during this minute and the next (as `minutes` 1 and 0).
 */
export const verificationToken = (user: UserRow, minutes: number, now = Date.now()): string => {
  const at = new Date(Math.floor(now / 60_000) * 60_000 + minutes * 60_000)
  return createHash("sha256")
    .update(`${rfc1123z(at)}:${rfc1123z(user.createdAt)}:${user.name}:${user.email}:${user.id}`)
    .digest("hex")
}

const EXPORT_EMPTY_NOTE = "This user hasn't uploaded any GPG keys."

/** A key id as Forgejo shows it: 16 upper-case hex characters, zero-padded. */
const paddedKeyId = (id: string) => id.toUpperCase().padStart(16, "0")

// openpgp (~40 ms to load) is loaded when a key is first read, not at every start.
let keysModule: Promise<typeof import("./Keys.ts")> | undefined
const loadKeys = () => (keysModule ??= import("./Keys.ts"))

export class GpgService extends Context.Service<
  GpgService,
  {
    readonly list: (
      viewer: Principal,
      owner: UserRow,
      page: Page
    ) => Effect.Effect<{ rows: Array<GPGKey>; total: number }>
    readonly get: (me: Principal, id: string) => Effect.Effect<GPGKey | GPGSubkey, Errors.NotFound>
    readonly add: (
      me: Principal,
      armored: string,
      signature: string | undefined
    ) => Effect.Effect<GPGKey, Errors.ValidationFailed>
    readonly remove: (
      me: Principal,
      id: string
    ) => Effect.Effect<void, Errors.NotFound | Errors.Forbidden | Errors.ValidationFailed>
    readonly token: (user: UserRow) => string
    readonly verify: (
      me: Principal,
      keyId: string,
      signature: string | undefined
    ) => Effect.Effect<GPGKey, Errors.NotFound | Errors.ValidationFailed>
    /** The owner's keys as one armored block (`{user}.gpg`). */
    readonly exportArmored: (owner: UserRow) => Effect.Effect<string>
  }
>()("hearth/gpg/GpgService") {
  static readonly layer = Layer.effect(
    GpgService,
    Effect.gen(function* () {
      const repo = yield* GpgRepo
      const emails = yield* EmailsService
      const users = yield* UsersRepo
      const policy = yield* AccountPolicy
      const invalid = (message: string) => Effect.fail(Errors.validationFailed(message))
      const promise = <A>(f: (keys: typeof import("./Keys.ts")) => Promise<A>) =>
        Effect.tryPromise({
          try: () => loadKeys().then(f),
          catch: (e) =>
            e instanceof Error && e.name === "KeyParseError"
              ? Errors.validationFailed(`failed to parse gpg key: ${e.message}`)
              : e
        }).pipe(Effect.catch((e) => (e instanceof Errors.ValidationFailed ? Effect.fail(e) : Effect.die(e))))

      const baseOf = (row: GpgKeyRow) => ({
        id: row.id,
        primary_key_id: row.primaryKeyId,
        key_id: row.keyId,
        public_key: row.content,
        can_sign: row.canSign,
        can_encrypt_comms: row.canEncryptComms,
        can_encrypt_storage: row.canEncryptStorage,
        can_certify: row.canCertify,
        created_at: formatTime(row.createdAt),
        expires_at: formatTime(row.expiresAt)
      })
      const presentSubkey = (row: GpgKeyRow): GPGSubkey => ({
        ...baseOf(row),
        emails: [],
        subkeys: [],
        verified: false
      })

      /** Full objects for primary rows; `activated` undefined hides the e-mails. */
      const present = (ownerId: number, rows: ReadonlyArray<GpgKeyRow>, activated: ReadonlySet<string> | undefined) =>
        Effect.gen(function* () {
          const subkeys = yield* repo.subkeysOf(
            ownerId,
            rows.map((r) => r.keyId)
          )
          return rows.map(
            (row): GPGKey => ({
              ...baseOf(row),
              emails:
                activated === undefined
                  ? []
                  : row.emails
                      .filter((email) => activated.has(email.toLowerCase()))
                      .map((email) => ({ email, verified: true })),
              subkeys: subkeys.filter((s) => s.primaryKeyId === row.keyId).map(presentSubkey),
              verified: row.verified
            })
          )
        })

      const presentOne = (owner: UserRow, row: GpgKeyRow) =>
        Effect.gen(function* () {
          const activated = yield* emails.activated(owner.id)
          return (yield* present(owner.id, [row], activated))[0]!
        })

      const parseId = (id: string) => {
        const n = /^\d{1,18}$/.test(id) ? Number(id) : 0
        return n > 0 && Number.isSafeInteger(n) ? Effect.succeed(n) : Effect.fail(Errors.notFound())
      }
      const tokensOf = (user: UserRow) => [verificationToken(user, 1), verificationToken(user, 0)]

      const store = (me: UserRow, entity: ParsedEntity, verified: boolean) =>
        repo.insert(me.id, entity.primary, entity.subkeys, entity.key.armor(), verified).pipe(
          // Someone added the same key meanwhile: the unique index answers for it.
          Effect.catchTag("AlreadyExists", () => invalid("A key with the same id already exists"))
        )

      return GpgService.of({
        list: (viewer, owner, page) =>
          Effect.gen(function* () {
            const { rows, total } = yield* repo.listPrimary(owner.id, page.limit, page.offset)
            // A key's identities are its owner's addresses: shown to whoever may read the owner's e-mail.
            const activated = mayReadEmail(owner, viewer) ? yield* emails.activated(owner.id) : undefined
            return { rows: yield* present(owner.id, rows, activated), total }
          }),
        get: (me, id) =>
          Effect.gen(function* () {
            const found = yield* repo.findById(yield* parseId(id))
            if (Option.isNone(found) || found.value.ownerId !== me.user.id) return yield* Errors.notFound()
            const row = found.value
            return row.primaryKeyId === "" ? yield* presentOne(me.user, row) : presentSubkey(row)
          }),
        add: (me, armored, signature) =>
          Effect.gen(function* () {
            const keys = yield* promise((k) => k.readArmoredKeys(armored))
            let entities = yield* promise((k) => Promise.all(keys.map(k.describe)))
            const token = verificationToken(me.user, 1)
            let verified = false
            if (signature !== undefined && signature.trim() !== "") {
              const signer = yield* promise((k) => k.findSigner(keys, signature, tokensOf(me.user)))
              if (signer === undefined) {
                return yield* invalid(
                  "The provided GPG key, signature and token do not match or token is out of date. " +
                    `Provide a valid signature for the token: ${token}`
                )
              }
              entities = entities.filter((e) => e.key === signer)
              verified = true
            } else {
              const activated = yield* emails.activated(me.user.id)
              const unproven = entities.find((e) => !e.primary.emails.some((m) => activated.has(m.toLowerCase())))
              if (unproven !== undefined) {
                return yield* invalid(
                  "None of the emails attached to the GPG key could be found. " +
                    `It may still be added if you provide a valid signature for the token: ${token}`
                )
              }
            }
            const ids = entities.flatMap((e) => [e.primary.keyId, ...e.subkeys.map((s) => s.keyId)])
            if (new Set(ids).size !== ids.length || (yield* repo.existing(ids)).length > 0) {
              return yield* invalid("A key with the same id already exists")
            }
            const rows: Array<GpgKeyRow> = []
            // One transaction per key: a failure part-way leaves the keys before it (as Forgejo).
            for (const entity of entities) rows.push(yield* store(me.user, entity, verified))
            return yield* presentOne(me.user, rows[0]!)
          }),
        remove: (me, id) =>
          Effect.gen(function* () {
            const found = yield* repo.findById(yield* parseId(id))
            if (Option.isNone(found)) return yield* Errors.notFound()
            const row = found.value
            if (row.ownerId !== me.user.id) {
              // Another account's key: 403 if the caller may see that account (its keys are listed), else 404.
              const owner = yield* users.findById(row.ownerId)
              if (Option.isNone(owner) || !(yield* policy.canSee(me, owner.value))) return yield* Errors.notFound()
              return yield* Effect.fail(Errors.forbidden("You do not have access to this key"))
            }
            if (row.primaryKeyId !== "") {
              return yield* invalid(
                `${row.keyId} is a subkey of ${row.primaryKeyId}: delete the primary key to remove it`
              )
            }
            yield* repo.remove(me.user.id, row.keyId)
          }),
        token: (user) => verificationToken(user, 1),
        verify: (me, keyId, signature) =>
          Effect.gen(function* () {
            // Forgejo's quirk: leading zeros are ignored; nothing left names no key.
            const stripped = keyId.trim().toUpperCase().replace(/^0+/, "")
            if (stripped === "" || !/^[0-9A-F]{1,16}$/.test(stripped)) return yield* Errors.notFound()
            const found = yield* repo.findPrimary(me.user.id, paddedKeyId(stripped))
            if (Option.isNone(found)) return yield* Errors.notFound()
            const row = found.value
            const invalidSignature = invalid(
              "The provided GPG key, signature and token do not match or token is out of date. " +
                `Provide a valid signature for the token: ${verificationToken(me.user, 1)}`
            )
            if (signature === undefined || signature.trim() === "") return yield* invalidSignature
            const armored = yield* repo.importOf(row.keyId)
            if (Option.isNone(armored)) return yield* Errors.notFound()
            const keys = yield* promise((k) => k.readArmoredKeys(armored.value))
            const signer = yield* promise((k) => k.findSigner(keys, signature, tokensOf(me.user)))
            if (signer === undefined) return yield* invalidSignature
            yield* repo.markVerified(row.id)
            return yield* presentOne(me.user, { ...row, verified: true })
          }),
        exportArmored: (owner) =>
          Effect.gen(function* () {
            const imports = yield* repo.importsOf(owner.id)
            const k = yield* Effect.promise(loadKeys)
            if (imports.length === 0) return k.armorKeys([], EXPORT_EMPTY_NOTE)
            const keys = yield* Effect.promise(() =>
              Promise.all(imports.map(k.readArmoredKeys)).then((all) => all.flat())
            )
            return k.armorKeys(keys)
          })
      })
    })
  )
}
