// SQL for SSH public keys (user keys and the keys behind deploy keys) and deploy keys.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { type AlreadyExists, sqlBoundary, uniqueViolation } from "../db/Boundary.ts"

export interface PublicKeyRow {
  readonly id: number
  /** The user of a user key; null for the key behind deploy keys. */
  readonly ownerId: number | null
  readonly name: string
  readonly fingerprint: string
  readonly content: string
  readonly keyType: "user" | "deploy" | "principal"
  readonly createdAt: Date
}

export interface DeployKeyRow {
  readonly id: number
  readonly keyId: number
  readonly repoId: number
  readonly name: string
  readonly readOnly: boolean
  readonly fingerprint: string
  readonly content: string
  readonly createdAt: Date
}

const toKey = (r: Record<string, any>): PublicKeyRow => ({
  id: Number(r.id),
  ownerId: r.owner_id === null ? null : Number(r.owner_id),
  name: r.name,
  fingerprint: r.fingerprint,
  content: r.content,
  keyType: r.key_type,
  createdAt: r.created_at
})

const toDeploy = (r: Record<string, any>): DeployKeyRow => ({
  id: Number(r.id),
  keyId: Number(r.key_id),
  repoId: Number(r.repo_id),
  name: r.name,
  readOnly: Boolean(r.read_only),
  fingerprint: r.fingerprint,
  content: r.content,
  createdAt: r.created_at
})

type Rows<A> = Effect.Effect<{ rows: Array<A>; total: number }>

export class KeysRepo extends Context.Service<
  KeysRepo,
  {
    readonly insertUserKey: (k: {
      ownerId: number
      name: string
      fingerprint: string
      content: string
    }) => Effect.Effect<PublicKeyRow, AlreadyExists>
    readonly insertPrincipal: (ownerId: number, principal: string) => Effect.Effect<PublicKeyRow, AlreadyExists>
    readonly findPrincipal: (principal: string) => Effect.Effect<Option.Option<PublicKeyRow>>
    /** Drops the public key behind deploy keys whose repositories were all deleted. */
    readonly dropOrphanDeployKey: (fingerprint: string) => Effect.Effect<void>
    readonly findById: (id: number) => Effect.Effect<Option.Option<PublicKeyRow>>
    readonly findByFingerprint: (fingerprint: string) => Effect.Effect<Option.Option<PublicKeyRow>>
    readonly nameTaken: (ownerId: number, name: string) => Effect.Effect<boolean>
    readonly listByOwner: (ownerId: number, limit: number, offset: number) => Rows<PublicKeyRow>
    readonly remove: (id: number) => Effect.Effect<void>
    /** Adds a deploy key, creating its public key unless `keyId` names an existing deploy one. */
    readonly insertDeployKey: (k: {
      keyId: number | undefined
      repoId: number
      name: string
      readOnly: boolean
      fingerprint: string
      content: string
    }) => Effect.Effect<DeployKeyRow, AlreadyExists>
    readonly listDeploy: (
      repoId: number,
      filter: { fingerprint?: string | undefined; keyId?: number | undefined },
      limit: number,
      offset: number
    ) => Rows<DeployKeyRow>
    readonly findDeploy: (repoId: number, id: number) => Effect.Effect<Option.Option<DeployKeyRow>>
    readonly deployByKey: (keyId: number) => Effect.Effect<Array<DeployKeyRow>>
    readonly deployNameTaken: (repoId: number, name: string) => Effect.Effect<boolean>
    /** Removes a deploy key, and its public key once no repository uses it. */
    readonly removeDeploy: (row: DeployKeyRow) => Effect.Effect<void>
  }
>()("hearth/keys/KeysRepo") {
  static readonly layer = Layer.effect(
    KeysRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const deploySelect = sql.literal(
        "SELECT d.*, k.fingerprint, k.content FROM deploy_keys d JOIN public_keys k ON k.id = d.key_id"
      )
      return KeysRepo.of(
        sqlBoundary({
          insertUserKey: ({ content, fingerprint, name, ownerId }) =>
            uniqueViolation(
              Effect.map(
                sql`INSERT INTO public_keys ${sql.insert({ owner_id: ownerId, name, fingerprint, content, key_type: "user" })} RETURNING *`,
                (rows) => toKey(rows[0]!)
              )
            ),
          insertPrincipal: (ownerId, principal) =>
            uniqueViolation(
              Effect.map(
                sql`INSERT INTO public_keys ${sql.insert({
                  owner_id: ownerId,
                  name: principal,
                  fingerprint: `principal:${principal}`,
                  content: principal,
                  key_type: "principal"
                })} RETURNING *`,
                (rows) => toKey(rows[0]!)
              )
            ),
          findPrincipal: (principal) =>
            Effect.map(
              sql`SELECT * FROM public_keys WHERE key_type = 'principal' AND fingerprint = ${`principal:${principal}`}`,
              (rows) => Option.map(Option.fromNullishOr(rows[0]), toKey)
            ),
          dropOrphanDeployKey: (fingerprint) =>
            Effect.asVoid(sql`DELETE FROM public_keys WHERE fingerprint = ${fingerprint} AND key_type = 'deploy'
            AND NOT EXISTS (SELECT 1 FROM deploy_keys d WHERE d.key_id = public_keys.id)`),
          findById: (id) =>
            Effect.map(sql`SELECT * FROM public_keys WHERE id = ${id}`, (rows) =>
              Option.map(Option.fromNullishOr(rows[0]), toKey)
            ),
          findByFingerprint: (fingerprint) =>
            Effect.map(sql`SELECT * FROM public_keys WHERE fingerprint = ${fingerprint}`, (rows) =>
              Option.map(Option.fromNullishOr(rows[0]), toKey)
            ),
          nameTaken: (ownerId, name) =>
            Effect.map(
              sql`SELECT 1 FROM public_keys WHERE owner_id = ${ownerId} AND key_type = 'user' AND name = ${name}`,
              (rows) => rows.length > 0
            ),
          listByOwner: (ownerId, limit, offset) =>
            Effect.gen(function* () {
              const [count] =
                yield* sql`SELECT count(*) AS n FROM public_keys WHERE owner_id = ${ownerId} AND key_type = 'user'`
              const rows = yield* sql`SELECT * FROM public_keys WHERE owner_id = ${ownerId} AND key_type = 'user'
              ORDER BY id LIMIT ${limit} OFFSET ${offset}`
              return { rows: rows.map(toKey), total: Number(count!.n) }
            }),
          remove: (id) => Effect.asVoid(sql`DELETE FROM public_keys WHERE id = ${id}`),
          insertDeployKey: ({ content, fingerprint, keyId, name, readOnly, repoId }) =>
            uniqueViolation(
              sql.withTransaction(
                Effect.gen(function* () {
                  let id = keyId
                  if (id === undefined) {
                    const [key] = yield* sql`INSERT INTO public_keys ${sql.insert({
                      owner_id: null,
                      name,
                      fingerprint,
                      content,
                      key_type: "deploy"
                    })} RETURNING id`
                    id = Number(key!.id)
                  }
                  const [row] = yield* sql`INSERT INTO deploy_keys ${sql.insert({
                    key_id: id,
                    repo_id: repoId,
                    name,
                    read_only: readOnly
                  })} RETURNING id`
                  const [full] = yield* sql`${deploySelect} WHERE d.id = ${row!.id}`
                  return toDeploy(full!)
                })
              )
            ),
          listDeploy: (repoId, filter, limit, offset) =>
            Effect.gen(function* () {
              const where = sql.and([
                sql`d.repo_id = ${repoId}`,
                ...(filter.fingerprint !== undefined ? [sql`k.fingerprint = ${filter.fingerprint}`] : []),
                ...(filter.keyId !== undefined ? [sql`d.key_id = ${filter.keyId}`] : [])
              ])
              const [count] =
                yield* sql`SELECT count(*) AS n FROM deploy_keys d JOIN public_keys k ON k.id = d.key_id WHERE ${where}`
              const rows = yield* sql`${deploySelect} WHERE ${where} ORDER BY d.id LIMIT ${limit} OFFSET ${offset}`
              return { rows: rows.map(toDeploy), total: Number(count!.n) }
            }),
          findDeploy: (repoId, id) =>
            Effect.map(sql`${deploySelect} WHERE d.repo_id = ${repoId} AND d.id = ${id}`, (rows) =>
              Option.map(Option.fromNullishOr(rows[0]), toDeploy)
            ),
          deployByKey: (keyId) =>
            Effect.map(sql`${deploySelect} WHERE d.key_id = ${keyId}`, (rows) => rows.map(toDeploy)),
          deployNameTaken: (repoId, name) =>
            Effect.map(
              sql`SELECT 1 FROM deploy_keys WHERE repo_id = ${repoId} AND name = ${name}`,
              (rows) => rows.length > 0
            ),
          removeDeploy: (row) =>
            sql.withTransaction(
              Effect.gen(function* () {
                yield* sql`DELETE FROM deploy_keys WHERE id = ${row.id}`
                yield* sql`DELETE FROM public_keys WHERE id = ${row.keyId} AND key_type = 'deploy'
              AND NOT EXISTS (SELECT 1 FROM deploy_keys WHERE key_id = ${row.keyId})`
              })
            )
        })
      )
    })
  )
}
