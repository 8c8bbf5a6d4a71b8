// Settings by Forgejo's app.ini names: defaults, app.ini, HEARTH__<section>__<KEY> variables,
// validation naming the key, and the generated SECRET_KEY.

import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Context, Effect, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import {
  layer,
  loadSettings,
  parseIni,
  type RawSettings,
  resolveSettings,
  Settings,
  SettingsError,
  withSecretKey
} from "../src/config/Settings.ts"

const scratch = mkdtempSync(join(tmpdir(), "hearth-settings-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const load = (env: NodeJS.ProcessEnv, configFile?: string, overrides?: RawSettings) =>
  Effect.runPromise(loadSettings({ env, configFile, overrides }))

/** The SettingsError's message for these inputs (fails the test when they are accepted). */
const errorOf = async (env: NodeJS.ProcessEnv, configFile?: string) => {
  const error = await Effect.runPromise(Effect.flip(loadSettings({ env, configFile })))
  expect(error).toBeInstanceOf(SettingsError)
  return error.message
}

describe("defaults", () => {
  it("match Forgejo's, with the data dir resolved", async () => {
    const s = await load({})
    expect(s.server).toEqual({
      HTTP_ADDR: "0.0.0.0",
      HTTP_PORT: 3000,
      ROOT_URL: "http://localhost:3000/",
      DOMAIN: "localhost",
      APP_DATA_PATH: resolve("./data"),
      START_SSH_SERVER: false,
      SSH_PORT: 22,
      SSH_LISTEN_HOST: "0.0.0.0",
      SSH_LISTEN_PORT: 22,
      BUILTIN_SSH_SERVER_USER: "git",
      MAX_REQUEST_BODY: 32 * 1024 * 1024,
      READ_HEADER_TIMEOUT: 30,
      BODY_IDLE_TIMEOUT: 60,
      KEEP_ALIVE_TIMEOUT: 15,
      KEEP_ALIVE_MAX_REQUESTS: 0,
      MAX_CONNECTIONS: 1000
    })
    expect(s.database.DB_TYPE).toBe("embedded")
    expect(s.database.MAX_OPEN_CONNS).toBe(10)
    expect(s.security).toEqual({
      DISABLE_QUERY_AUTH_TOKEN: false,
      SECRET_KEY: "",
      LOGIN_MAX_FAILURES: 5,
      LOGIN_THROTTLE_SECONDS: 60,
      DISABLE_WEBHOOKS: false
    })
    expect(s.webhook).toEqual({
      QUEUE_LENGTH: 1000,
      DELIVER_TIMEOUT: 5,
      SKIP_TLS_VERIFY: false,
      ALLOWED_HOST_LIST: "",
      PAGING_NUM: 10,
      PROXY_URL: "",
      PROXY_HOSTS: "",
      PAYLOAD_COMMIT_LIMIT: 15,
      MAX_RETRIES: 3,
      RETRY_DELAY: 10
    })
    expect(s["cron.cleanup_hook_task_table"]).toEqual({
      ENABLED: true,
      SCHEDULE: "@midnight",
      CLEANUP_TYPE: "OlderThan",
      OLDER_THAN: 168 * 3600,
      NUMBER_TO_KEEP: 10
    })
    expect(s.api).toEqual({ DEFAULT_PAGING_NUM: 30, MAX_RESPONSE_ITEMS: 50, DEFAULT_MAX_BLOB_SIZE: 10485760 })
    expect(s.ui).toEqual({
      EXPLORE_PAGING_NUM: 50,
      REACTIONS: ["+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes"],
      THEMES: ["auto", "light", "dark"],
      DEFAULT_THEME: "auto"
    })
    expect(s["repository.issue"]).toEqual({ MAX_PINNED: 3 })
    expect(s.attachment).toMatchObject({ ENABLED: true, MAX_SIZE: 2048, MAX_FILES: 5 })
    expect(s.attachment.ALLOWED_TYPES.split(",")).toEqual(
      expect.arrayContaining([".zip", ".png", ".txt", ".md", ".patch"])
    )
    expect(s.service).toEqual({
      REQUIRE_SIGNIN_VIEW: false,
      DISABLE_REGISTRATION: false,
      NO_REPLY_ADDRESS: "noreply.localhost",
      AUTO_WATCH_NEW_REPOS: true,
      ENABLE_TIMETRACKING: true,
      DEFAULT_ENABLE_TIMETRACKING: true,
      DEFAULT_ALLOW_ONLY_CONTRIBUTORS_TO_TRACK_TIME: true,
      DEFAULT_ENABLE_DEPENDENCIES: true,
      ALLOW_CROSS_REPOSITORY_DEPENDENCIES: true
    })
    expect(s["service.explore"]).toEqual({ REQUIRE_SIGNIN_VIEW: false, DISABLE_USERS_PAGE: false })
    expect(s.quota).toEqual({ ENABLED: false, DEFAULT_GROUPS: [] })
    expect(s["quota.default"]).toEqual({ TOTAL: -1 })
    expect(s.federation).toEqual({
      ENABLED: true,
      SHARE_USER_STATISTICS: true,
      MAX_SIZE: 4,
      SIGNATURE_ALGORITHMS: "rsa-sha256,rsa-sha512,ed25519",
      SIGNATURE_ENFORCED: true,
      ALLOWED_HOSTS: "",
      BLOCKED_HOSTS: "",
      USE_INSECURE_HTTP: false,
      ALLOW_LOCALNETWORKS: false,
      DELIVERY_ATTEMPTS: 10,
      DELIVERY_RETRY_DELAY: 60
    })
    expect(s.mirror).toEqual({ ENABLED: true, MIN_INTERVAL: 600, DEFAULT_INTERVAL: 28800 })
    expect(s.log).toEqual({ LEVEL: "Info" })
  })

  it("derive ROOT_URL from DOMAIN and HTTP_PORT, SSH_LISTEN_PORT from SSH_PORT, NO_REPLY_ADDRESS from DOMAIN", async () => {
    const s = await load({
      HEARTH__server__DOMAIN: "git.example.com",
      HEARTH__server__HTTP_PORT: "8080",
      HEARTH__server__SSH_PORT: "2222"
    })
    expect(s.server.ROOT_URL).toBe("http://git.example.com:8080/")
    expect(s.server.SSH_LISTEN_PORT).toBe(2222)
    expect(s.service.NO_REPLY_ADDRESS).toBe("noreply.git.example.com")
  })

  it("keep an explicit ROOT_URL, adding the trailing slash", async () => {
    const s = await load({
      HEARTH__server__ROOT_URL: "https://forge.example.org/sub",
      HEARTH__server__HTTP_PORT: "8080"
    })
    expect(s.server.ROOT_URL).toBe("https://forge.example.org/sub/")
  })

  it("resolve a relative APP_DATA_PATH against the working directory", async () => {
    expect((await load({ HEARTH__server__APP_DATA_PATH: "var/hearth" })).server.APP_DATA_PATH).toBe(
      resolve("var/hearth")
    )
    expect((await load({ HEARTH__server__APP_DATA_PATH: "/srv/hearth" })).server.APP_DATA_PATH).toBe("/srv/hearth")
  })
})

describe("app.ini", () => {
  const text = [
    "\uFEFF; Forgejo-style configuration",
    "APP_NAME = Hearth test",
    "RUN_MODE = prod",
    "",
    "# comments with either mark",
    "[server]",
    "HTTP_PORT   =   4000",
    'DOMAIN = "git.example.com"',
    "ROOT_URL = `https://git.example.com/`",
    "",
    "[database]",
    "DB_TYPE=postgres",
    'PASSWD = """p=a;ss#word"""',
    "NAME = forge ; part of the value, as in Forgejo",
    "",
    "[service.explore]",
    "REQUIRE_SIGNIN_VIEW = true",
    "[Security]",
    "disable_query_auth_token = TRUE",
    "[unknown.section]",
    "WHATEVER = 1\r",
    "[api]",
    "UNKNOWN_KEY = ignored"
  ].join("\n")

  it("parses sections, comments, quotes, and values containing = ; #", () => {
    const ini = parseIni(text)
    expect(ini.DEFAULT).toEqual({ APP_NAME: "Hearth test", RUN_MODE: "prod" })
    expect(ini.server).toEqual({ HTTP_PORT: "4000", DOMAIN: "git.example.com", ROOT_URL: "https://git.example.com/" })
    expect(ini.database).toEqual({
      DB_TYPE: "postgres",
      PASSWD: "p=a;ss#word",
      NAME: "forge ; part of the value, as in Forgejo"
    })
    expect(ini["service.explore"]).toEqual({ REQUIRE_SIGNIN_VIEW: "true" })
    expect(ini["unknown.section"]).toEqual({ WHATEVER: "1" })
  })

  it("is read with --config; sections and keys match in any case; unknown keys are ignored", async () => {
    const file = join(scratch, "app.ini")
    writeFileSync(file, text)
    const s = await load({}, file)
    expect(s.server.HTTP_PORT).toBe(4000)
    expect(s.server.DOMAIN).toBe("git.example.com")
    expect(s.server.ROOT_URL).toBe("https://git.example.com/")
    expect(s["service.explore"].REQUIRE_SIGNIN_VIEW).toBe(true)
    expect(s.security.DISABLE_QUERY_AUTH_TOKEN).toBe(true)
    expect(s.database.DB_TYPE).toBe("postgres")
    expect(s.database.PASSWD).toBe("p=a;ss#word")
  })

  it("refuses a line that is not KEY = value, naming the line", async () => {
    const file = join(scratch, "broken.ini")
    writeFileSync(file, "[server]\nHTTP_PORT = 1\njust some words\n")
    expect(await errorOf({}, file)).toBe(`app.ini line 3: expected "KEY = value", got "just some words"`)
  })

  it("reports a missing file", async () => {
    expect(await errorOf({}, join(scratch, "missing.ini"))).toBe(
      `config file not found: ${join(scratch, "missing.ini")}`
    )
  })
})

describe("environment variables", () => {
  it("HEARTH__<section>__<KEY> overrides the file, and explicit overrides win over both", async () => {
    const file = join(scratch, "override.ini")
    writeFileSync(file, "[server]\nHTTP_PORT = 4000\nHTTP_ADDR = 10.0.0.1\n[api]\nDEFAULT_PAGING_NUM = 10\n")
    const s = await load({ HEARTH__server__HTTP_PORT: "5000", HEARTH__api__DEFAULT_PAGING_NUM: "20" }, file, {
      api: { DEFAULT_PAGING_NUM: "25" }
    })
    expect(s.server.HTTP_PORT).toBe(5000)
    expect(s.server.HTTP_ADDR).toBe("10.0.0.1") // from the file, not overridden
    expect(s.api.DEFAULT_PAGING_NUM).toBe(25)
  })

  it("accept any case and Forgejo's _0X2E_ escape for a dot in a section name", async () => {
    const s = await load({
      HEARTH__SERVER__http_port: "3100",
      HEARTH__service_0X2E_explore__DISABLE_USERS_PAGE: "true",
      "HEARTH__service.explore__REQUIRE_SIGNIN_VIEW": "yes",
      HEARTH__ui__EXPLORE_PAGING_NUM: "12",
      HEARTHX__server__HTTP_PORT: "1", // not ours
      HTTP_PORT: "2"
    })
    expect(s.server.HTTP_PORT).toBe(3100)
    expect(s["service.explore"]).toEqual({ REQUIRE_SIGNIN_VIEW: true, DISABLE_USERS_PAGE: true })
    expect(s.ui.EXPLORE_PAGING_NUM).toBe(12)
  })

  it("read booleans in Forgejo's spellings", async () => {
    for (const [value, expected] of [
      ["true", true],
      ["1", true],
      ["Yes", true],
      ["ON", true],
      ["t", true],
      ["false", false],
      ["0", false],
      ["no", false],
      ["Off", false],
      ["F", false]
    ] as const) {
      expect((await load({ HEARTH__quota__ENABLED: value })).quota.ENABLED, value).toBe(expected)
    }
  })

  it("read [quota] DEFAULT_GROUPS as a comma-separated list", async () => {
    expect((await load({ HEARTH__quota__DEFAULT_GROUPS: " small, , big " })).quota.DEFAULT_GROUPS).toEqual([
      "small",
      "big"
    ])
  })

  it("read [quota.default] TOTAL as Forgejo does: bytes, thousands commas, units, negatives as unlimited", async () => {
    for (const [value, expected] of [
      ["0", 0],
      ["5000", 5000],
      ["12,345,678", 12_345_678],
      ["2k", 2000],
      ["2MiB", 2 * 1024 * 1024],
      ["500M", 500_000_000],
      ["3G", 3_000_000_000],
      ["3GiB", 3 * 1024 ** 3],
      ["9EB", 9_000_000_000_000_000_000],
      ["42EB", -1],
      ["-1", -1],
      ["-42", -1],
      ["-1MiB", -1]
    ] as const) {
      expect((await load({ HEARTH__quota_0X2E_default__TOTAL: value }))["quota.default"].TOTAL, value).toBe(expected)
    }
  })

  it("refuse a [quota.default] TOTAL that is no size, naming the key", async () => {
    expect(await errorOf({ HEARTH__quota_0X2E_default__TOTAL: "lots" })).toBe(
      'invalid setting [quota.default] TOTAL = "lots": expected a size such as 500M, 2GiB or 1000000, or -1 for unlimited'
    )
  })

  it("read [log] LEVEL in Forgejo's level names, in any case", async () => {
    for (const [value, expected] of [
      ["debug", "Debug"],
      ["Warn", "Warning"],
      ["WARNING", "Warning"],
      ["Critical", "Error"],
      ["none", "None"]
    ] as const) {
      expect((await load({ HEARTH__log__LEVEL: value })).log.LEVEL, value).toBe(expected)
    }
  })
})

describe("database", () => {
  it("DATABASE_URL in the environment implies PostgreSQL", async () => {
    const url = "postgres://hearth:secret@db.internal:5432/hearth"
    expect((await load({ DATABASE_URL: url })).database).toMatchObject({ DB_TYPE: "postgres", DATABASE_URL: url })
    expect((await load({ HEARTH__database__DATABASE_URL: url })).database).toMatchObject({
      DB_TYPE: "postgres",
      DATABASE_URL: url
    })
    // An explicit DB_TYPE still decides.
    expect((await load({ DATABASE_URL: url, HEARTH__database__DB_TYPE: "embedded" })).database.DB_TYPE).toBe("embedded")
  })

  it("HOST/NAME/USER/PASSWD build the URL (escaped), with the default port when HOST has none", async () => {
    const url = async (db: Record<string, string>) => {
      const env = Object.fromEntries(
        Object.entries({ DB_TYPE: "postgres", ...db }).map(([k, v]) => [`HEARTH__database__${k}`, v])
      )
      return (await load(env)).database.DATABASE_URL
    }
    expect(await url({})).toBe("postgres://hearth@127.0.0.1:5432/hearth")
    expect(await url({ HOST: "db.example:5433", NAME: "forge", USER: "git", PASSWD: "p@ss:w/rd%" })).toBe(
      "postgres://git:p%40ss%3Aw%2Frd%25@db.example:5433/forge"
    )
    expect(await url({ HOST: "db.example" })).toBe("postgres://hearth@db.example:5432/hearth")
    expect(await url({ HOST: "[::1]:6432" })).toBe("postgres://hearth@[::1]:6432/hearth")
    expect(await url({ HOST: "/var/run/postgresql" })).toBe(
      "postgres://hearth@localhost/hearth?host=%2Fvar%2Frun%2Fpostgresql"
    )
  })
})

describe("[server] client bounds (Hearth's own keys)", () => {
  it("take Go durations, as [mirror] intervals do, read once into seconds", () => {
    const s = resolveSettings({
      server: {
        READ_HEADER_TIMEOUT: "1m30s",
        BODY_IDLE_TIMEOUT: " 500ms ",
        KEEP_ALIVE_TIMEOUT: "2s",
        KEEP_ALIVE_MAX_REQUESTS: "0",
        MAX_CONNECTIONS: "5"
      }
    })
    expect(s.server).toMatchObject({
      READ_HEADER_TIMEOUT: 90,
      BODY_IDLE_TIMEOUT: 0.5,
      KEEP_ALIVE_TIMEOUT: 2,
      KEEP_ALIVE_MAX_REQUESTS: 0,
      MAX_CONNECTIONS: 5
    })
  })
})

describe("invalid values stop start-up with a message naming the key", () => {
  const cases: ReadonlyArray<readonly [Record<string, string>, string]> = [
    [
      { HEARTH__server__HTTP_PORT: "abc" },
      `invalid setting [server] HTTP_PORT = "abc": expected a port number (0-65535)`
    ],
    [
      { HEARTH__server__HTTP_PORT: "70000" },
      `invalid setting [server] HTTP_PORT = "70000": expected a port number (0-65535)`
    ],
    [{ HEARTH__server__SSH_PORT: "-1" }, `invalid setting [server] SSH_PORT = "-1": expected a port number (0-65535)`],
    [
      { HEARTH__security__DISABLE_QUERY_AUTH_TOKEN: "maybe" },
      `invalid setting [security] DISABLE_QUERY_AUTH_TOKEN = "maybe": expected true or false`
    ],
    [
      { HEARTH__database__DB_TYPE: "mysql" },
      `invalid setting [database] DB_TYPE = "mysql": expected one of embedded, postgres`
    ],
    [{ HEARTH__server__ROOT_URL: "ftp://x" }, `invalid setting [server] ROOT_URL = "ftp://x": expected an http(s) URL`],
    [
      { HEARTH__server__ROOT_URL: "localhost:3000" },
      `invalid setting [server] ROOT_URL = "localhost:3000": expected an http(s) URL`
    ],
    [{ HEARTH__api__DEFAULT_PAGING_NUM: "0" }, `invalid setting [api] DEFAULT_PAGING_NUM = "0": must be at least 1`],
    [
      { HEARTH__api__MAX_RESPONSE_ITEMS: "ten" },
      `invalid setting [api] MAX_RESPONSE_ITEMS = "ten": expected a whole number`
    ],
    [{ HEARTH__ui__EXPLORE_PAGING_NUM: "0" }, `invalid setting [ui] EXPLORE_PAGING_NUM = "0": must be at least 1`],
    [
      { HEARTH__attachment__MAX_SIZE: "0" },
      `invalid setting [attachment] MAX_SIZE = "0": expected the largest attachment in MB, at least 1`
    ],
    [
      { HEARTH__server__MAX_REQUEST_BODY: "1.5" },
      `invalid setting [server] MAX_REQUEST_BODY = "1.5": expected a whole number`
    ],
    [
      { HEARTH__log__LEVEL: "loud" },
      `invalid setting [log] LEVEL = "loud": expected one of Trace, Debug, Info, Warning, Error, None`
    ],
    [
      { HEARTH__database__DB_TYPE: "postgres", HEARTH__database__HOST: "bad host:5432" },
      `invalid setting [database] HOST = "bad host:5432": expected host[:port]`
    ],
    [{ HEARTH__database__MAX_OPEN_CONNS: "0" }, `invalid setting [database] MAX_OPEN_CONNS = "0": must be at least 1`],
    [{ HEARTH__federation__MAX_SIZE: "0" }, `invalid setting [federation] MAX_SIZE = "0": must be at least 1`],
    [
      { HEARTH__federation__DELIVERY_ATTEMPTS: "0" },
      `invalid setting [federation] DELIVERY_ATTEMPTS = "0": must be at least 1`
    ],
    [{ HEARTH__webhook__DELIVER_TIMEOUT: "0" }, `invalid setting [webhook] DELIVER_TIMEOUT = "0": must be at least 1`],
    [{ HEARTH__webhook__MAX_RETRIES: "-1" }, `invalid setting [webhook] MAX_RETRIES = "-1": expected a whole number`],
    [
      { HEARTH__webhook__RETRY_DELAY: "soon" },
      `invalid setting [webhook] RETRY_DELAY = "soon": expected a duration such as 10s or 1m`
    ],
    [
      { HEARTH__cron_0X2E_cleanup_hook_task_table__SCHEDULE: "sometimes" },
      `invalid setting [cron.cleanup_hook_task_table] SCHEDULE = "sometimes": expected a cron schedule such as @midnight, @every 24h or "0 3 * * *"`
    ],
    [
      { HEARTH__cron_0X2E_cleanup_hook_task_table__CLEANUP_TYPE: "Never" },
      `invalid setting [cron.cleanup_hook_task_table] CLEANUP_TYPE = "Never": expected one of OlderThan, PerWebhook`
    ],
    [
      { HEARTH__mirror__MIN_INTERVAL: "10" },
      `invalid setting [mirror] MIN_INTERVAL = "10": expected a duration such as 10m or 8h`
    ],
    [
      { HEARTH__mirror__DEFAULT_INTERVAL: "1d" },
      `invalid setting [mirror] DEFAULT_INTERVAL = "1d": expected a duration such as 10m or 8h`
    ],
    [
      { HEARTH__federation__DELIVERY_RETRY_DELAY: "soon" },
      `invalid setting [federation] DELIVERY_RETRY_DELAY = "soon": expected a duration such as 30s or 1m`
    ],
    [
      { HEARTH__server__READ_HEADER_TIMEOUT: "30" },
      `invalid setting [server] READ_HEADER_TIMEOUT = "30": expected a duration such as 30s or 1m`
    ],
    [
      { HEARTH__server__BODY_IDLE_TIMEOUT: "0s" },
      `invalid setting [server] BODY_IDLE_TIMEOUT = "0s": expected a duration such as 30s or 1m`
    ],
    [
      { HEARTH__server__KEEP_ALIVE_TIMEOUT: "-5s" },
      `invalid setting [server] KEEP_ALIVE_TIMEOUT = "-5s": expected a duration such as 5s or 1m`
    ],
    [
      { HEARTH__server__KEEP_ALIVE_MAX_REQUESTS: "many" },
      `invalid setting [server] KEEP_ALIVE_MAX_REQUESTS = "many": expected a whole number`
    ],
    [{ HEARTH__server__MAX_CONNECTIONS: "0" }, `invalid setting [server] MAX_CONNECTIONS = "0": must be at least 1`],
    [
      { HEARTH__federation__SIGNATURE_ALGORITHMS: "rsa-sha256,md5" },
      `invalid setting [federation] SIGNATURE_ALGORITHMS = "rsa-sha256,md5": expected a comma-separated list of rsa-sha256, rsa-sha512, ed25519, rsa-pss-sha512, ecdsa-p256-sha256, ecdsa-p384-sha384`
    ]
  ]
  it.each(cases)("%o", async (env, message) => {
    expect(await errorOf(env)).toBe(message)
  })

  it("never echoes a secret value", async () => {
    const message = await errorOf({ DATABASE_URL: "mysql://root:hunter2@db/x" })
    expect(message).toBe("invalid setting [database] DATABASE_URL: expected a postgres:// URL")
    expect(message).not.toContain("hunter2")
  })

  it("resolveSettings throws the same SettingsError", () => {
    expect(() => resolveSettings({ server: { HTTP_PORT: "abc" } })).toThrow(SettingsError)
  })
})

describe("SECRET_KEY", () => {
  it("is generated into the data dir once (private file) and reused on every later start", async () => {
    const dir = join(scratch, "data-secret")
    const settings = resolveSettings({ server: { APP_DATA_PATH: dir } })
    const first = withSecretKey(settings)
    expect(first.security.SECRET_KEY).toMatch(/^[0-9a-f]{64}$/)
    expect(readFileSync(join(dir, "secret_key"), "utf8").trim()).toBe(first.security.SECRET_KEY)
    expect(statSync(join(dir, "secret_key")).mode & 0o777).toBe(0o600)
    expect(withSecretKey(settings).security.SECRET_KEY).toBe(first.security.SECRET_KEY)
    // Through the layer, as `serve` loads it.
    const env = { HEARTH__server__APP_DATA_PATH: dir }
    const fromLayer = await Effect.runPromise(
      Effect.map(Layer.build(layer({ env })), (context) => Context.get(context, Settings).security.SECRET_KEY).pipe(
        Effect.scoped
      )
    )
    expect(fromLayer).toBe(first.security.SECRET_KEY)
  })

  it("is taken from the setting when given, and then nothing is written", () => {
    const dir = join(scratch, "data-configured")
    const s = withSecretKey(resolveSettings({ server: { APP_DATA_PATH: dir }, security: { SECRET_KEY: "configured" } }))
    expect(s.security.SECRET_KEY).toBe("configured")
    expect(() => statSync(join(dir, "secret_key"))).toThrow()
  })

  it("refuses an empty secret_key file instead of using an empty or new key", () => {
    const dir = join(scratch, "data-empty")
    withSecretKey(resolveSettings({ server: { APP_DATA_PATH: dir } }))
    writeFileSync(join(dir, "secret_key"), "\n")
    expect(() => withSecretKey(resolveSettings({ server: { APP_DATA_PATH: dir } }))).toThrow(/secret_key is empty/)
  })
})
