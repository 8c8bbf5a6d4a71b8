// Starts a real Hearth server for a test file: a fresh database (embedded PGlite in a temp data
// dir by default; a fresh PostgreSQL database when TEST_DATABASE_URL is set), real HTTP on a
// free loopback port. `run` executes an effect against the running app's services.

import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Context, Effect, Exit, Layer, Redacted, Scope } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Settings from "../../src/config/Settings.ts"
import { ServeLayer } from "../../src/main.ts"
import type { NewAccount } from "../../src/users/Service.ts"
import { UsersService } from "../../src/users/Service.ts"

export interface Hearth {
  /** e.g. http://127.0.0.1:40123 (no trailing slash) */
  readonly base: string
  readonly settings: Settings.SettingsShape
  /** Absolute URL of an API path: api("/version") → base + "/api/v1/version". */
  readonly api: (path: string) => string
  readonly run: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<A>
  readonly close: () => Promise<void>
}

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** A fresh PostgreSQL database on TEST_DATABASE_URL's server, dropped when the scope closes. */
/**
 * A database of its own on the server at `adminUrl`, dropped when the scope closes; with
 * `create: false`, only a fresh name (for a test that has Hearth create it), dropped all the same.
 */
export const freshPostgresDatabase = (adminUrl: string, options: { readonly create?: boolean } = {}) =>
  Effect.gen(function* () {
    const name = `hearth_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
    const admin = (statement: (sql: SqlClient) => Effect.Effect<unknown, unknown>) =>
      Effect.scoped(
        Effect.gen(function* () {
          const context = yield* Layer.build(PgClient.layer({ url: Redacted.make(adminUrl), maxConnections: 1 }))
          yield* statement(Context.get(context, SqlClient))
        })
      )
    yield* Effect.acquireRelease(
      options.create === false ? Effect.void : admin((sql) => sql`CREATE DATABASE ${sql(name)}`),
      () => admin((sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`).pipe(Effect.ignore)
    )
    const url = new URL(adminUrl)
    url.pathname = `/${name}`
    return url.toString()
  })

export const startHearth = async (overrides: Settings.RawSettings = {}): Promise<Hearth> => {
  const port = await freePort()
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-test-"))
  const scope = Effect.runSync(Scope.make())
  const testDatabaseUrl = process.env.TEST_DATABASE_URL
  try {
    const database =
      testDatabaseUrl !== undefined && testDatabaseUrl !== ""
        ? {
            DB_TYPE: "postgres",
            DATABASE_URL: await Effect.runPromise(Scope.provide(freshPostgresDatabase(testDatabaseUrl), scope))
          }
        : { DB_TYPE: "embedded" }
    const raw: Settings.RawSettings = {
      ...overrides,
      server: {
        HTTP_ADDR: "127.0.0.1",
        HTTP_PORT: String(port),
        ROOT_URL: `http://127.0.0.1:${port}/`,
        APP_DATA_PATH: dataDir,
        ...overrides.server
      },
      database: { ...database, ...overrides.database },
      log: { LEVEL: "Error", ...overrides.log }
    }
    const settings = Settings.withSecretKey(Settings.resolveSettings(raw))
    const context = await Effect.runPromise(
      Layer.buildWithScope(ServeLayer.pipe(Layer.provide(Settings.layerValue(settings))), scope)
    )
    const base = `http://127.0.0.1:${port}`
    return {
      base,
      settings,
      api: (path) => `${base}/api/v1${path}`,
      run: (effect) => Effect.runPromise(Effect.provideContext(effect, context as Context.Context<any>)),
      close: async () => {
        await Effect.runPromise(Scope.close(scope, Exit.void))
        rmSync(dataDir, { recursive: true, force: true })
      }
    }
  } catch (e) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    rmSync(dataDir, { recursive: true, force: true })
    throw e
  }
}

let counter = 0
/** Creates an account directly through the users service (as the CLI does). */
export const createUser = (hearth: Hearth, input: Partial<NewAccount> & { username?: string } = {}) => {
  const username = input.username ?? `user${++counter}`
  return hearth.run(
    Effect.gen(function* () {
      const users = yield* UsersService
      return yield* users.create({
        email: `${username.toLowerCase()}@example.com`,
        password: "password123",
        ...input,
        username
      })
    })
  )
}

export const basic = (username: string, password = "password123") =>
  `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`

/** Creates an access token over the API with the account's password; returns the token. */
export const createToken = async (
  hearth: Hearth,
  username: string,
  scopes: ReadonlyArray<string> = ["all"],
  password = "password123"
): Promise<string> => {
  const res = await fetch(hearth.api(`/users/${username}/tokens`), {
    method: "POST",
    headers: { authorization: basic(username, password), "content-type": "application/json" },
    body: JSON.stringify({ name: `t-${Math.random().toString(36).slice(2, 10)}`, scopes })
  })
  if (res.status !== 201) throw new Error(`token creation failed: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { sha1: string }).sha1
}

/** The JSON body of a response, untyped (tests assert on its shape). */
export const json = async (res: Response): Promise<any> => res.json()

/** One API request: `auth` is the Authorization header value; a non-string body is sent as JSON. */
export const request = (hearth: Hearth, method: string, path: string, auth?: string, body?: unknown) =>
  fetch(hearth.api(path), {
    method,
    headers: {
      ...(auth === undefined ? {} : { authorization: auth }),
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
  })
