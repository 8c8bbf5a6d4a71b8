// SQL for GPG keys: one row per key (primary keys and subkeys) and the armored import of each
// primary key, kept for the `{user}.gpg` export.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { type AlreadyExists, sqlBoundary, uniqueViolation } from "../db/Boundary.ts"
import type { ParsedKey } from "./Keys.ts"

export interface GpgKeyRow {
  readonly id: number
  readonly ownerId: number
  readonly keyId: string
  readonly primaryKeyId: string
  readonly content: string
  readonly emails: ReadonlyArray<string>
  readonly createdAt: Date
  readonly expiresAt: Date | null
  readonly canSign: boolean
  readonly canEncryptComms: boolean
  readonly canEncryptStorage: boolean
  readonly canCertify: boolean
  readonly verified: boolean
}

const toRow = (r: Record<string, any>): GpgKeyRow => ({
  id: Number(r.id),
  ownerId: Number(r.owner_id),
  keyId: r.key_id,
  primaryKeyId: r.primary_key_id,
  content: r.content,
  emails: r.emails === "" ? [] : JSON.parse(r.emails),
  createdAt: r.created_at,
  expiresAt: r.expires_at ?? null,
  canSign: r.can_sign,
  canEncryptComms: r.can_encrypt_comms,
  canEncryptStorage: r.can_encrypt_storage,
  canCertify: r.can_certify,
  verified: r.verified
})

const toColumns = (ownerId: number, key: ParsedKey, verified: boolean): Record<string, unknown> => ({
  owner_id: ownerId,
  key_id: key.keyId,
  primary_key_id: key.primaryKeyId,
  content: key.content,
  emails: key.emails.length === 0 ? "" : JSON.stringify(key.emails),
  created_at: key.created,
  expires_at: key.expires,
  can_sign: key.canSign,
  can_encrypt_comms: key.canEncryptComms,
  can_encrypt_storage: key.canEncryptStorage,
  can_certify: key.canCertify,
  verified
})

export class GpgRepo extends Context.Service<
  GpgRepo,
  {
    /** Which of these key ids are stored already (for anyone). */
    readonly existing: (keyIds: ReadonlyArray<string>) => Effect.Effect<Array<string>>
    /** Stores a primary key, its subkeys and its armored import; answers the primary's row. */
    readonly insert: (
      ownerId: number,
      primary: ParsedKey,
      subkeys: ReadonlyArray<ParsedKey>,
      armored: string,
      verified: boolean
    ) => Effect.Effect<GpgKeyRow, AlreadyExists>
    readonly listPrimary: (
      ownerId: number,
      limit: number,
      offset: number
    ) => Effect.Effect<{ rows: Array<GpgKeyRow>; total: number }>
    readonly subkeysOf: (ownerId: number, primaryKeyIds: ReadonlyArray<string>) => Effect.Effect<Array<GpgKeyRow>>
    readonly findById: (id: number) => Effect.Effect<Option.Option<GpgKeyRow>>
    readonly findPrimary: (ownerId: number, keyId: string) => Effect.Effect<Option.Option<GpgKeyRow>>
    /** The stored key or subkey with this id, whoever owns it (signature verification). */
    readonly findByKeyId: (keyId: string) => Effect.Effect<Option.Option<GpgKeyRow>>
    /** Removes a primary key with its subkeys and import. */
    readonly remove: (ownerId: number, keyId: string) => Effect.Effect<void>
    readonly markVerified: (id: number) => Effect.Effect<void>
    readonly importOf: (keyId: string) => Effect.Effect<Option.Option<string>>
    /** The armored imports of all the owner's primary keys, oldest first. */
    readonly importsOf: (ownerId: number) => Effect.Effect<Array<string>>
  }
>()("hearth/gpg/GpgRepo") {
  static readonly layer = Layer.effect(
    GpgRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const one = (rows: ReadonlyArray<Record<string, any>>) => Option.map(Option.fromNullishOr(rows[0]), toRow)
      return GpgRepo.of(
        sqlBoundary({
          existing: (keyIds) =>
            keyIds.length === 0
              ? Effect.succeed([])
              : Effect.map(sql`SELECT key_id FROM gpg_keys WHERE key_id IN ${sql.in(keyIds)}`, (rows) =>
                  rows.map((r) => r.key_id as string)
                ),
          insert: (ownerId, primary, subkeys, armored, verified) =>
            uniqueViolation(
              sql.withTransaction(
                Effect.gen(function* () {
                  const [row] =
                    yield* sql`INSERT INTO gpg_keys ${sql.insert(toColumns(ownerId, primary, verified))} RETURNING *`
                  for (const subkey of subkeys) {
                    yield* sql`INSERT INTO gpg_keys ${sql.insert(toColumns(ownerId, subkey, false))}`
                  }
                  yield* sql`INSERT INTO gpg_key_imports ${sql.insert({ key_id: primary.keyId, content: armored })}`
                  return toRow(row!)
                })
              )
            ),
          listPrimary: (ownerId, limit, offset) =>
            Effect.gen(function* () {
              const [count] =
                yield* sql`SELECT count(*) AS n FROM gpg_keys WHERE owner_id = ${ownerId} AND primary_key_id = ''`
              const rows = yield* sql`SELECT * FROM gpg_keys WHERE owner_id = ${ownerId} AND primary_key_id = ''
              ORDER BY id LIMIT ${limit} OFFSET ${offset}`
              return { rows: rows.map(toRow), total: Number(count!.n) }
            }),
          subkeysOf: (ownerId, primaryKeyIds) =>
            primaryKeyIds.length === 0
              ? Effect.succeed([])
              : Effect.map(
                  sql`SELECT * FROM gpg_keys WHERE owner_id = ${ownerId} AND primary_key_id IN ${sql.in(primaryKeyIds)}
              ORDER BY id`,
                  (rows) => rows.map(toRow)
                ),
          findById: (id) => Effect.map(sql`SELECT * FROM gpg_keys WHERE id = ${id}`, one),
          findPrimary: (ownerId, keyId) =>
            Effect.map(
              sql`SELECT * FROM gpg_keys WHERE owner_id = ${ownerId} AND key_id = ${keyId} AND primary_key_id = ''`,
              one
            ),
          findByKeyId: (keyId) =>
            Effect.map(sql`SELECT * FROM gpg_keys WHERE key_id = ${keyId} ORDER BY id LIMIT 1`, one),
          remove: (ownerId, keyId) =>
            Effect.asVoid(
              sql`DELETE FROM gpg_keys WHERE owner_id = ${ownerId} AND (key_id = ${keyId} OR primary_key_id = ${keyId})`
            ),
          markVerified: (id) => Effect.asVoid(sql`UPDATE gpg_keys SET verified = true WHERE id = ${id}`),
          importOf: (keyId) =>
            Effect.map(sql`SELECT content FROM gpg_key_imports WHERE key_id = ${keyId}`, (rows) =>
              Option.map(Option.fromNullishOr(rows[0]), (r) => r.content as string)
            ),
          importsOf: (ownerId) =>
            Effect.map(
              sql`SELECT i.content FROM gpg_key_imports i JOIN gpg_keys k ON k.key_id = i.key_id
              WHERE k.owner_id = ${ownerId} ORDER BY k.id`,
              (rows) => rows.map((r) => r.content as string)
            )
        })
      )
    })
  )
}
