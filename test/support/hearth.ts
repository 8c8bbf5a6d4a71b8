// Starts a real Hearth server for a test file: a fresh database (embedded PGlite in a temp data
// dir by default; a fresh PostgreSQL database when TEST_DATABASE_URL is set), real HTTP on a
// free loopback port. `run` executes an effect against the running app's services.

import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { inspect } from "node:util"
import { type Context, Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { inject } from "vitest"
import * as Settings from "../../src/config/Settings.ts"
import { ServeLayer } from "../../src/main.ts"
import type { NewAccount } from "../../src/users/Service.ts"
import { UsersService } from "../../src/users/Service.ts"
import { freshPostgresDatabase } from "./postgres.ts"

export { freshPostgresDatabase }

export interface Hearth {
  /** e.g. http://127.0.0.1:40123 (no trailing slash) */
  readonly base: string
  readonly settings: Settings.SettingsShape
  /** Absolute URL of an API path: api("/version") → base + "/api/v1/version". */
  readonly api: (path: string) => string
  readonly run: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<A>
  /** Runs `f` with the server's own database client (PGlite or PostgreSQL, as the server uses). */
  readonly sql: <A>(f: (sql: SqlClient) => Effect.Effect<A, unknown>) => Promise<A>
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

/** The run's migrated database to start from (test/support/globalSetup.ts), if there is one. */
export const templateOf = (key: "embeddedTemplate" | "postgresTemplate") => {
  try {
    const value = inject(key)
    return value === undefined || value === "" ? undefined : value
  } catch {
    return undefined // outside a vitest worker (a benchmark using this file)
  }
}

/** Another process may take the free port before the server listens on it: then a new port. */
const addressInUse = (e: unknown) => /EADDRINUSE/.test(inspect(e, { depth: 6 }))

/** What a test adds to the server's layer, e.g. a tracer of its own (`Layer.succeed(Tracer.Tracer)(…)`). */
export interface StartOptions {
  readonly layer?: Layer.Layer<never>
}

export const startHearth = async (
  overrides: Settings.RawSettings = {},
  options: StartOptions = {}
): Promise<Hearth> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startHearthOn(await freePort(), overrides, options)
    } catch (e) {
      if (attempt >= 5 || !addressInUse(e)) throw e
    }
  }
}

const startHearthOn = async (port: number, overrides: Settings.RawSettings, options: StartOptions): Promise<Hearth> => {
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-test-"))
  const scope = Effect.runSync(Scope.make())
  const testDatabaseUrl = process.env.TEST_DATABASE_URL
  // A file that chooses its own database or data directory starts from nothing, as a new forge does.
  const fromTemplate = overrides.database === undefined && overrides.server?.APP_DATA_PATH === undefined
  try {
    const postgres = testDatabaseUrl !== undefined && testDatabaseUrl !== ""
    const template = fromTemplate ? templateOf(postgres ? "postgresTemplate" : "embeddedTemplate") : undefined
    if (!postgres && template !== undefined) cpSync(join(template, "db"), join(dataDir, "db"), { recursive: true })
    const database = postgres
      ? {
          DB_TYPE: "postgres",
          DATABASE_URL: await Effect.runPromise(
            Scope.provide(freshPostgresDatabase(testDatabaseUrl, template === undefined ? {} : { template }), scope)
          )
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
      Layer.buildWithScope(
        ServeLayer.pipe(Layer.provide(Settings.layerValue(settings)), Layer.provide(options.layer ?? Layer.empty)),
        scope
      )
    )
    const base = `http://127.0.0.1:${port}`
    const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
      Effect.runPromise(Effect.provideContext(effect, context as Context.Context<any>))
    return {
      base,
      settings,
      api: (path) => `${base}/api/v1${path}`,
      run,
      sql: (f) => run(Effect.flatMap(SqlClient, f)),
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

/**
 * An API request as `user` (password auth) that must succeed (status < 300): its JSON, or undefined
 * for a 204. Any other answer fails the test with the method, path, status and body.
 */
export const apiAs = async (hearth: Hearth, method: string, path: string, user: string, body?: unknown) => {
  const res = await request(hearth, method, path, basic(user), body)
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
  return res.status === 204 ? undefined : json(res)
}

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
