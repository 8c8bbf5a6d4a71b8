// Settings by Forgejo's app.ini names. Sources, later wins: built-in defaults, an optional
// app.ini (`--config`), environment variables `HEARTH__<section>__<KEY>`, then explicit
// overrides (tests). An invalid value stops start-up with a message naming the key.
import { Context, Data, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"

export interface SettingsShape {
  readonly server: {
    readonly HTTP_ADDR: string
    readonly HTTP_PORT: number
    readonly ROOT_URL: string
    readonly DOMAIN: string
    readonly APP_DATA_PATH: string
    readonly START_SSH_SERVER: boolean
    readonly SSH_PORT: number
    readonly SSH_LISTEN_PORT: number
    /** Largest request body accepted by the API, in bytes (Hearth's own key). */
    readonly MAX_REQUEST_BODY: number
  }
  readonly database: {
    readonly DB_TYPE: "embedded" | "postgres"
    /** Full connection URL; when empty it is built from HOST/NAME/USER/PASSWD. */
    readonly DATABASE_URL: string
    readonly HOST: string
    readonly NAME: string
    readonly USER: string
    readonly PASSWD: string
    readonly MAX_OPEN_CONNS: number
  }
  readonly security: {
    readonly DISABLE_QUERY_AUTH_TOKEN: boolean
    readonly SECRET_KEY: string
    /** Failed password sign-ins for one account before it is throttled. */
    readonly LOGIN_MAX_FAILURES: number
    /** Seconds an account stays throttled after LOGIN_MAX_FAILURES. */
    readonly LOGIN_THROTTLE_SECONDS: number
  }
  readonly api: {
    readonly DEFAULT_PAGING_NUM: number
    readonly MAX_RESPONSE_ITEMS: number
  }
  readonly ui: {
    readonly EXPLORE_PAGING_NUM: number
  }
  readonly service: {
    readonly REQUIRE_SIGNIN_VIEW: boolean
    readonly DISABLE_REGISTRATION: boolean
    readonly NO_REPLY_ADDRESS: string
  }
  readonly quota: { readonly ENABLED: boolean }
  readonly federation: { readonly ENABLED: boolean }
  readonly log: { readonly LEVEL: "Trace" | "Debug" | "Info" | "Warning" | "Error" | "None" }
}

export type SectionName = keyof SettingsShape

export class Settings extends Context.Service<Settings, SettingsShape>()("hearth/config/Settings") {}

export class SettingsError extends Data.TaggedError("SettingsError")<{ readonly message: string }> {}

/** Raw values as strings, `section -> KEY -> value`. */
export type RawSettings = Record<string, Record<string, string>>

type Kind = "string" | "int" | "port" | "bool" | { readonly oneOf: ReadonlyArray<string> }

// The recognised keys, their kind and default. `undefined` defaults are derived after parsing.
const schema: { readonly [S in SectionName]: Record<string, readonly [Kind, string | undefined]> } = {
  server: {
    HTTP_ADDR: ["string", "0.0.0.0"],
    HTTP_PORT: ["port", "3000"],
    ROOT_URL: ["string", undefined],
    DOMAIN: ["string", "localhost"],
    APP_DATA_PATH: ["string", "./data"],
    START_SSH_SERVER: ["bool", "false"],
    SSH_PORT: ["port", "22"],
    SSH_LISTEN_PORT: ["port", undefined],
    MAX_REQUEST_BODY: ["int", String(32 * 1024 * 1024)]
  },
  database: {
    DB_TYPE: [{ oneOf: ["embedded", "postgres"] }, undefined],
    DATABASE_URL: ["string", ""],
    HOST: ["string", "127.0.0.1:5432"],
    NAME: ["string", "hearth"],
    USER: ["string", "hearth"],
    PASSWD: ["string", ""],
    MAX_OPEN_CONNS: ["int", "10"]
  },
  security: {
    DISABLE_QUERY_AUTH_TOKEN: ["bool", "false"],
    SECRET_KEY: ["string", ""],
    LOGIN_MAX_FAILURES: ["int", "5"],
    LOGIN_THROTTLE_SECONDS: ["int", "60"]
  },
  api: { DEFAULT_PAGING_NUM: ["int", "30"], MAX_RESPONSE_ITEMS: ["int", "50"] },
  ui: { EXPLORE_PAGING_NUM: ["int", "50"] },
  service: {
    REQUIRE_SIGNIN_VIEW: ["bool", "false"],
    DISABLE_REGISTRATION: ["bool", "false"],
    NO_REPLY_ADDRESS: ["string", undefined]
  },
  quota: { ENABLED: ["bool", "false"] },
  federation: { ENABLED: ["bool", "false"] },
  log: { LEVEL: [{ oneOf: ["Trace", "Debug", "Info", "Warning", "Error", "None"] }, "Info"] }
}

/** Parses app.ini text: `[section]` headers, `KEY = value`, `;`/`#` comments, optional quotes. */
export const parseIni = (text: string): RawSettings => {
  const out: RawSettings = {}
  let section = "DEFAULT"
  for (const [index, rawLine] of text.split(/\r?\n/).entries()) {
    const line = rawLine.trim()
    if (line === "" || line.startsWith(";") || line.startsWith("#")) continue
    const header = /^\[([^\]]+)\]$/.exec(line)
    if (header) {
      section = header[1]!.trim()
      continue
    }
    const eq = line.indexOf("=")
    if (eq <= 0) throw new SettingsError({ message: `app.ini line ${index + 1}: expected "KEY = value", got "${line}"` })
    let value = line.slice(eq + 1).trim()
    if (value.length >= 2 && (value[0] === "\"" || value[0] === "`") && value.at(-1) === value[0]) {
      value = value.slice(1, -1)
    }
    ;(out[section] ??= {})[line.slice(0, eq).trim()] = value
  }
  return out
}

/** Reads `HEARTH__<section>__<KEY>` variables; `DATABASE_URL` is accepted bare too. */
export const fromEnv = (env: NodeJS.ProcessEnv): RawSettings => {
  const out: RawSettings = {}
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue
    const m = /^HEARTH__([^_]+(?:_[^_]+)*)__(.+)$/.exec(name)
    if (m) (out[m[1]!] ??= {})[m[2]!] = value
  }
  if (env.DATABASE_URL !== undefined && env.DATABASE_URL !== "" && out.database?.DATABASE_URL === undefined) {
    ;(out.database ??= {}).DATABASE_URL = env.DATABASE_URL
  }
  return out
}

const merge = (...layers: ReadonlyArray<RawSettings>): RawSettings => {
  const out: RawSettings = {}
  for (const layer of layers) {
    for (const [section, values] of Object.entries(layer)) Object.assign(out[section] ??= {}, values)
  }
  return out
}

const convert = (key: string, kind: Kind, value: string): string | number | boolean => {
  const fail = (expected: string): never => {
    throw new SettingsError({ message: `invalid setting ${key} = "${value}": expected ${expected}` })
  }
  if (kind === "string") return value
  if (kind === "bool") {
    const v = value.toLowerCase()
    if (["true", "1", "yes", "on"].includes(v)) return true
    if (["false", "0", "no", "off"].includes(v)) return false
    return fail("true or false")
  }
  if (kind === "int" || kind === "port") {
    if (!/^\d+$/.test(value)) return fail(kind === "port" ? "a port number (0-65535)" : "a whole number")
    const n = Number(value)
    if (kind === "port" && n > 65535) return fail("a port number (0-65535)")
    return n
  }
  if (!kind.oneOf.includes(value)) return fail(`one of ${kind.oneOf.join(", ")}`)
  return value
}

/** Validates raw settings into a complete `SettingsShape`; throws `SettingsError` naming the key. */
export const resolveSettings = (raw: RawSettings): SettingsShape => {
  const out: Record<string, Record<string, unknown>> = {}
  for (const [section, keys] of Object.entries(schema)) {
    const given = raw[section] ?? {}
    const values: Record<string, unknown> = {}
    for (const [key, [kind, fallback]] of Object.entries(keys)) {
      const value = given[key] ?? fallback
      if (value !== undefined) values[key] = convert(`[${section}] ${key}`, kind, value)
    }
    out[section] = values
  }
  const server = out.server!
  const db = out.database!
  const port = server.HTTP_PORT as number
  server.ROOT_URL ??= `http://${server.DOMAIN === "" ? "localhost" : server.DOMAIN}:${port}/`
  if (!/^https?:\/\/[^/]+/.test(server.ROOT_URL as string)) {
    throw new SettingsError({ message: `invalid setting [server] ROOT_URL = "${server.ROOT_URL}": expected an http(s) URL` })
  }
  if (!(server.ROOT_URL as string).endsWith("/")) server.ROOT_URL = `${server.ROOT_URL}/`
  server.SSH_LISTEN_PORT ??= server.SSH_PORT
  server.APP_DATA_PATH = resolve(server.APP_DATA_PATH as string)
  db.DB_TYPE ??= db.DATABASE_URL === "" ? "embedded" : "postgres"
  if (db.DB_TYPE === "postgres" && db.DATABASE_URL === "") {
    const [host, hostPort] = (db.HOST as string).split(":")
    const auth = db.PASSWD === ""
      ? encodeURIComponent(db.USER as string)
      : `${encodeURIComponent(db.USER as string)}:${encodeURIComponent(db.PASSWD as string)}`
    db.DATABASE_URL = `postgres://${auth}@${host}:${hostPort ?? "5432"}/${encodeURIComponent(db.NAME as string)}`
  }
  const service = out.service!
  service.NO_REPLY_ADDRESS ??= `noreply.${server.DOMAIN}`
  const api = out.api!
  if ((api.MAX_RESPONSE_ITEMS as number) < 1) {
    throw new SettingsError({ message: "invalid setting [api] MAX_RESPONSE_ITEMS: must be at least 1" })
  }
  return out as unknown as SettingsShape
}

export interface LoadOptions {
  /** Path of an app.ini file. */
  readonly configFile?: string | undefined
  readonly env?: NodeJS.ProcessEnv | undefined
  readonly overrides?: RawSettings | undefined
}

/** Reads the config file (if any), the environment and overrides, and validates them. */
export const loadSettings = (options: LoadOptions = {}): Effect.Effect<SettingsShape, SettingsError> =>
  Effect.try({
    try: () => {
      let ini: RawSettings = {}
      if (options.configFile !== undefined) {
        if (!existsSync(options.configFile)) {
          throw new SettingsError({ message: `config file not found: ${options.configFile}` })
        }
        ini = parseIni(readFileSync(options.configFile, "utf8"))
      }
      return resolveSettings(merge(ini, fromEnv(options.env ?? process.env), options.overrides ?? {}))
    },
    catch: (e) => e instanceof SettingsError ? e : new SettingsError({ message: String(e) })
  })

/**
 * Fills in SECRET_KEY when it was not configured: read from `<data>/secret_key`, or generated
 * there on first start, so that every later start uses the same key.
 */
export const withSecretKey = (settings: SettingsShape): SettingsShape => {
  if (settings.security.SECRET_KEY !== "") return settings
  const dir = settings.server.APP_DATA_PATH
  const file = join(dir, "secret_key")
  mkdirSync(dir, { recursive: true })
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString("hex") + "\n", { mode: 0o600 })
  const key = readFileSync(file, "utf8").trim()
  return { ...settings, security: { ...settings.security, SECRET_KEY: key } }
}

export const layer = (options: LoadOptions = {}): Layer.Layer<Settings, SettingsError> =>
  Layer.effect(Settings, Effect.map(loadSettings(options), withSecretKey))

export const layerValue = (settings: SettingsShape): Layer.Layer<Settings> => Layer.succeed(Settings, settings)
