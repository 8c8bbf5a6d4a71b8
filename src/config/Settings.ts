// Settings by Forgejo's app.ini names. Sources, later wins: built-in defaults, an optional
// app.ini (`--config`), environment variables `HEARTH__<section>__<KEY>`, then explicit
// overrides (tests). An invalid value stops start-up with a message naming the key.
//
// Conventions, as Forgejo's:
// - Section names are matched case-insensitively, keys too (`[Server] http_port` works).
// - Sub-sections keep their dot: `[service.explore]`. In an environment variable name, where a dot
//   is awkward, Forgejo's escape `_0X2E_` stands for it: `HEARTH__service_0X2E_explore__KEY`
//   (any `_0X<hex>_` is decoded the same way).
// - Keys Hearth does not know are ignored, so a Forgejo app.ini can be reused as it is.
// - Booleans: true/false, 1/0, yes/no, on/off, t/f, y/n (any case).
//
// Hearth's own keys (not in Forgejo): `[server] MAX_REQUEST_BODY` (largest API request body, in
// bytes; larger ones get 413), the `[server]` bounds on slow or idle clients (READ_HEADER_TIMEOUT,
// BODY_IDLE_TIMEOUT, KEEP_ALIVE_TIMEOUT as Go durations, like every duration setting, read into
// seconds here once; KEEP_ALIVE_MAX_REQUESTS, MAX_CONNECTIONS),
// `[database] DB_TYPE = embedded` (PGlite under APP_DATA_PATH) and
// `DATABASE_URL` (also read from the bare DATABASE_URL environment variable; setting it implies
// DB_TYPE = postgres), `EMBEDDED_SHARED_BUFFERS` (the embedded database's shared_buffers),
// `[security] LOGIN_MAX_FAILURES` / `LOGIN_THROTTLE_SECONDS` (password throttling). `[log] LEVEL`
// is Forgejo's key and accepts its level names (Trace, Debug, Info, Warn, Error, Critical, Fatal,
// None); Hearth logs at most at Error, so Critical/Fatal mean Error.

import { randomBytes } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { Context, Data, Effect, Layer } from "effect"
import { cronSchedule } from "../lib/CronSchedule.ts"
import { parseGoDuration } from "../lib/Duration.ts"

export interface SettingsShape {
  readonly server: {
    readonly HTTP_ADDR: string
    readonly HTTP_PORT: number
    readonly ROOT_URL: string
    readonly DOMAIN: string
    /** Absolute (a relative value is resolved against the working directory). */
    readonly APP_DATA_PATH: string
    readonly START_SSH_SERVER: boolean
    readonly SSH_PORT: number
    readonly SSH_LISTEN_PORT: number
    /** Address the built-in SSH server listens on (START_SSH_SERVER). */
    readonly SSH_LISTEN_HOST: string
    /** The user name git clients connect to the built-in SSH server as. */
    readonly BUILTIN_SSH_SERVER_USER: string
    /** Largest request body accepted by the API, in bytes (Hearth's own key). */
    readonly MAX_REQUEST_BODY: number
    /** How long a client may take to send a request's headers, in seconds (Hearth's own key). */
    readonly READ_HEADER_TIMEOUT: number
    /**
     * Longest pause while a request body arrives, in seconds (Hearth's own key). The gap between
     * chunks is bounded, not the total: a long push that keeps sending is never cut.
     */
    readonly BODY_IDLE_TIMEOUT: number
    /** How long an idle keep-alive connection is kept open, in seconds (Hearth's own key). */
    readonly KEEP_ALIVE_TIMEOUT: number
    /** Requests one keep-alive connection may carry before it is closed; 0: no limit (Hearth's own key). */
    readonly KEEP_ALIVE_MAX_REQUESTS: number
    /** Open HTTP connections at most; more are closed at once (Hearth's own key). */
    readonly MAX_CONNECTIONS: number
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
    /**
     * The embedded database's shared_buffers, in PostgreSQL's syntax ("16MB"), normalized (Hearth's
     * own key). Resident for the life of the process: see src/db/Pglite.ts.
     */
    readonly EMBEDDED_SHARED_BUFFERS: string
  }
  readonly security: {
    readonly DISABLE_QUERY_AUTH_TOKEN: boolean
    readonly SECRET_KEY: string
    /** Failed password sign-ins for one account before it is throttled. */
    readonly LOGIN_MAX_FAILURES: number
    /** Seconds an account stays throttled after LOGIN_MAX_FAILURES. */
    readonly LOGIN_THROTTLE_SECONDS: number
    /** Turns webhooks off: nothing is queued, the hook routes (but /admin/hooks) answer 403. */
    readonly DISABLE_WEBHOOKS: boolean
  }
  /** Forgejo's [session]: SESSION_LIFE_TIME, seconds a web session lasts unused (src/sessions). */
  readonly session: { readonly SESSION_LIFE_TIME: number }
  readonly api: {
    readonly DEFAULT_PAGING_NUM: number
    readonly MAX_RESPONSE_ITEMS: number
    /** Bytes: `GET …/git/blobs/{sha}` leaves `content` empty for a larger blob (Forgejo's). */
    readonly DEFAULT_MAX_BLOB_SIZE: number
  }
  readonly ui: {
    readonly EXPLORE_PAGING_NUM: number
    /** The reactions users may give, comma-separated (Forgejo's default set). */
    readonly REACTIONS: ReadonlyArray<string>
    /** The web's colour themes a person may choose, and the one of those who chose none. */
    readonly THEMES: ReadonlyArray<string>
    readonly DEFAULT_THEME: string
  }
  /** Forgejo's [repository.issue]: MAX_PINNED pinned issues (and, apart, pull requests) per repository. */
  readonly "repository.issue": { readonly MAX_PINNED: number }
  /** Forgejo's [repository.release]: ALLOWED_TYPES of release assets (empty: anything); FILE_MAX_SIZE in MB. */
  readonly "repository.release": { readonly ALLOWED_TYPES: string; readonly FILE_MAX_SIZE: number }
  /**
   * Forgejo's [repository.pull-request]: RETARGET_CHILDREN_ON_MERGE moves the open pull requests
   * based on a merged pull request's head branch to its base when that branch is deleted after the
   * merge (each repository may also switch it off, `retarget_children_on_merge`).
   */
  readonly "repository.pull-request": { readonly RETARGET_CHILDREN_ON_MERGE: boolean }
  /**
   * Forgejo's [repository.signing]: the instance's commit-signing key. SIGNING_KEY `none` signs
   * nothing; `default` is a key Hearth generates once under `<APP_DATA_PATH>/signing`; else the
   * path of a private key file (FORMAT ssh) or of an armored OpenPGP secret key without passphrase
   * (FORMAT openpgp). SIGNING_NAME/SIGNING_EMAIL name the signer (defaults: `Hearth`,
   * `noreply@<DOMAIN>`). INITIAL_COMMIT, CRUD_ACTIONS (contents API, diffpatch), MERGES and WIKI
   * are Forgejo's comma-separated rules (SIGNING_RULES), all of which must hold: `never`, `always`,
   * `pubkey`, `twofa`, `parentsigned`, and for merges `basesigned`, `headsigned`, `commitssigned`,
   * `approved` (src/git/SigningRules.ts).
   */
  readonly "repository.signing": {
    readonly FORMAT: string
    readonly SIGNING_KEY: string
    readonly SIGNING_NAME: string
    readonly SIGNING_EMAIL: string
    readonly INITIAL_COMMIT: string
    readonly CRUD_ACTIONS: string
    readonly MERGES: string
    readonly WIKI: string
  }
  /**
   * Forgejo's [attachment]: files on issues and comments. MAX_SIZE in MB (MiB); ALLOWED_TYPES
   * comma-separated extensions (`.zip`), MIME types (`image/png`) or wildcards (`image/` + `*`);
   * empty, or the wildcard of every type, allows any file.
   */
  readonly attachment: {
    readonly ENABLED: boolean
    readonly MAX_SIZE: number
    readonly ALLOWED_TYPES: string
    /** How many files clients are told one upload may carry (`/settings/attachment`); not counted. */
    readonly MAX_FILES: number
  }
  /** Forgejo's [markdown] section; MAX_RENDER_SIZE (bytes of text one render accepts, larger: 413) is Hearth's own. */
  readonly markdown: { readonly MAX_RENDER_SIZE: number }
  /** Forgejo's [picture]: uploaded avatars, at most AVATAR_MAX_FILE_SIZE bytes and AVATAR_MAX_WIDTH × AVATAR_MAX_HEIGHT pixels. */
  readonly picture: {
    readonly AVATAR_MAX_FILE_SIZE: number
    readonly AVATAR_MAX_WIDTH: number
    readonly AVATAR_MAX_HEIGHT: number
  }
  readonly repository: {
    /** Where bare repositories live, `{ROOT}/{owner}/{name}.git`; absolute. */
    readonly ROOT: string
    /** How long (seconds) `POST …/forks` waits for the copy before answering with it still running (Hearth's own). */
    readonly FORK_WAIT_TIMEOUT: number
  }
  readonly service: {
    readonly REQUIRE_SIGNIN_VIEW: boolean
    readonly DISABLE_REGISTRATION: boolean
    readonly NO_REPLY_ADDRESS: string
    /** A new repository (also a fork or a migration) is watched by whoever created it. */
    readonly AUTO_WATCH_NEW_REPOS: boolean
    /** Time tracking on this forge at all; off: no repository tracks time (Forgejo's ENABLE_TIMETRACKING). */
    readonly ENABLE_TIMETRACKING: boolean
    /** The internal tracker settings of a repository that has not set them (Forgejo's DEFAULT_… keys). */
    readonly DEFAULT_ENABLE_TIMETRACKING: boolean
    readonly DEFAULT_ALLOW_ONLY_CONTRIBUTORS_TO_TRACK_TIME: boolean
    readonly DEFAULT_ENABLE_DEPENDENCIES: boolean
    /** An issue may depend on an issue of another repository. */
    readonly ALLOW_CROSS_REPOSITORY_DEPENDENCIES: boolean
  }
  /** Forgejo's explore settings (used by the user search, `GET /users/search`). */
  readonly "service.explore": {
    readonly REQUIRE_SIGNIN_VIEW: boolean
    readonly DISABLE_USERS_PAGE: boolean
  }
  /** Forgejo's [quota]: off by default; DEFAULT_GROUPS apply to accounts in no quota group. */
  readonly quota: { readonly ENABLED: boolean; readonly DEFAULT_GROUPS: ReadonlyArray<string> }
  /** Forgejo's [quota.default]: TOTAL (bytes, -1 unlimited) limits `size:all` of accounts with no group at all. */
  readonly "quota.default": { readonly TOTAL: number }
  /** Where migrations, pull mirrors and push mirrors may connect (Forgejo's [migrations]). */
  readonly migrations: {
    /** Also allow loopback and private addresses (off: only public ones). */
    readonly ALLOW_LOCALNETWORKS: boolean
    /** Comma-separated host globs, CIDRs or `external`/`private`/`loopback`/`*`; empty: any public host. */
    readonly ALLOWED_DOMAINS: string
    /** Same syntax; matching hosts are always refused. */
    readonly BLOCKED_DOMAINS: string
  }
  /** Pull and push mirrors (Forgejo's [mirror]); intervals in seconds (Go durations in app.ini: "8h", "10m"). */
  readonly mirror: {
    readonly ENABLED: boolean
    readonly MIN_INTERVAL: number
    readonly DEFAULT_INTERVAL: number
  }
  /** Comma-separated CA public keys (OpenSSH lines) whose user certificates sign API requests. */
  readonly ssh: { readonly TRUSTED_USER_CA_KEYS: string }
  /**
   * Forgejo's [federation]; MAX_SIZE in MiB. Hearth's own: ALLOW_LOCALNETWORKS lets peers be on
   * loopback/private addresses; DELIVERY_ATTEMPTS and DELIVERY_RETRY_DELAY (the first retry's
   * delay in seconds, doubling after) bound how long an undelivered activity is retried.
   */
  readonly federation: {
    readonly ENABLED: boolean
    readonly SHARE_USER_STATISTICS: boolean
    readonly MAX_SIZE: number
    readonly SIGNATURE_ALGORITHMS: string
    readonly SIGNATURE_ENFORCED: boolean
    readonly ALLOWED_HOSTS: string
    readonly BLOCKED_HOSTS: string
    readonly USE_INSECURE_HTTP: boolean
    readonly ALLOW_LOCALNETWORKS: boolean
    readonly DELIVERY_ATTEMPTS: number
    readonly DELIVERY_RETRY_DELAY: number
  }
  /**
   * Forgejo's [webhook] (src/webhooks): DELIVER_TIMEOUT in seconds, ALLOWED_HOST_LIST (host globs,
   * CIDRs, `external`/`private`/`loopback`/`*`; empty: `external`), SKIP_TLS_VERIFY, PROXY_URL for
   * the hosts PROXY_HOSTS lists, PAYLOAD_COMMIT_LIMIT, PAGING_NUM; QUEUE_LENGTH (Forgejo's hook
   * task queue length) bounds the deliveries a node holds claimed from the durable queue at once
   * (src/webhooks/Service.ts `claimBounds`: up to 16 hooks in flight, each with its next deliveries
   * claimed behind it; 1: one delivery at a time). Hearth's own: MAX_RETRIES (a delivery that met a network error or a 5xx is sent
   * again that many times, with the same delivery id; 0: never) and RETRY_DELAY (the first retry's
   * delay in seconds, doubling after).
   */
  readonly webhook: {
    readonly QUEUE_LENGTH: number
    readonly DELIVER_TIMEOUT: number
    readonly SKIP_TLS_VERIFY: boolean
    readonly ALLOWED_HOST_LIST: string
    readonly PAGING_NUM: number
    readonly PROXY_URL: string
    readonly PROXY_HOSTS: string
    readonly PAYLOAD_COMMIT_LIMIT: number
    readonly MAX_RETRIES: number
    readonly RETRY_DELAY: number
  }
  readonly log: { readonly LEVEL: "Trace" | "Debug" | "Info" | "Warning" | "Error" | "None" }
  /**
   * Forgejo's [cron.cleanup_hook_task_table] (src/webhooks): on SCHEDULE (Forgejo's cron syntax,
   * src/lib/CronSchedule.ts), delete delivered webhook deliveries older than OLDER_THAN seconds
   * (CLEANUP_TYPE OlderThan) or all but the newest NUMBER_TO_KEEP of each hook (PerWebhook); never
   * ones not yet delivered.
   */
  readonly "cron.cleanup_hook_task_table": {
    readonly ENABLED: boolean
    readonly SCHEDULE: string
    readonly CLEANUP_TYPE: "OlderThan" | "PerWebhook"
    readonly OLDER_THAN: number
    readonly NUMBER_TO_KEEP: number
  }
  /**
   * Forgejo's [storage]: where blobs (attachments, release assets, packages, avatars) are kept.
   * STORAGE_TYPE names Forgejo's back-ends; only `local` is implemented (src/storage). PATH is the
   * directory of Hearth's one content-addressed store, absolute; default `<APP_DATA_PATH>/storage`
   * (Forgejo's PATH is the parent of one directory per kind of file).
   */
  readonly storage: { readonly STORAGE_TYPE: "local" | "minio"; readonly PATH: string }
  /**
   * Forgejo's [packages] (modules/setting/packages.go): ENABLED off answers 404 on every registry
   * route and on /api/v1/packages. Sizes in bytes, -1 for no limit (LIMIT_SIZE_<TYPE> per file of a
   * type, LIMIT_TOTAL_OWNER_SIZE over an owner's files); LIMIT_TOTAL_OWNER_COUNT counts versions.
   * CHUNKED_UPLOAD_PATH (absolute; default `<APP_DATA_PATH>/tmp/package-upload`) is for chunked
   * container uploads.
   */
  readonly packages: {
    readonly ENABLED: boolean
    readonly CHUNKED_UPLOAD_PATH: string
    readonly LIMIT_TOTAL_OWNER_COUNT: number
    readonly LIMIT_TOTAL_OWNER_SIZE: number
  } & { readonly [K in `LIMIT_SIZE_${Uppercase<PackageTypeName>}`]: number }
}

/** Forgejo's package types (models/packages/package.go `Type*`), each with a LIMIT_SIZE_<TYPE>. */
export const PACKAGE_TYPES = [
  "alpine",
  "arch",
  "cargo",
  "chef",
  "composer",
  "conan",
  "conda",
  "container",
  "cran",
  "debian",
  "generic",
  "go",
  "helm",
  "maven",
  "npm",
  "nuget",
  "pub",
  "pypi",
  "rpm",
  "alt",
  "rubygems",
  "swift",
  "vagrant"
] as const
export type PackageTypeName = (typeof PACKAGE_TYPES)[number]

export type SectionName = keyof SettingsShape

export class Settings extends Context.Service<Settings, SettingsShape>()("hearth/config/Settings") {}

/**
 * The colour mode of a web theme: `auto` follows the system's light or dark preference. Forgejo's
 * theme names (`forgejo-auto`, `gitea-dark`, …) are taken by their suffix, so an app.ini brought
 * from Forgejo keeps working.
 */
export const themeColorMode = (theme: string): "auto" | "light" | "dark" | undefined => {
  const mode = /(?:^|-)(auto|light|dark)$/.exec(theme)?.[1]
  return mode as "auto" | "light" | "dark" | undefined
}

export class SettingsError extends Data.TaggedError("SettingsError")<{ readonly message: string }> {}

/** Raw values as strings, `section -> KEY -> value`. */
export type RawSettings = Record<string, Record<string, string>>

type Kind =
  | "string"
  | "int"
  | "port"
  | "bool"
  /**
   * A Go duration ("30s", "8h", "1m30s"), not zero, read once into seconds; `example` is shown
   * when the value is not one (Forgejo reads these with `setting.Key.Duration`).
   */
  | { readonly duration: string }
  /** Allowed values, matched case-insensitively; `aliases` maps further spellings to one of them. */
  | { readonly oneOf: ReadonlyArray<string>; readonly aliases?: Readonly<Record<string, string>> }

interface Key {
  readonly kind: Kind
  /** `undefined`: derived after parsing. */
  readonly fallback: string | undefined
  /** Never echoed in messages. */
  readonly secret?: boolean
}

const key = (kind: Kind, fallback: string | undefined, secret = false): Key => ({ kind, fallback, secret })

// The recognised keys, their kind and default.
const schema: { readonly [S in SectionName]: Record<string, Key> } = {
  server: {
    HTTP_ADDR: key("string", "0.0.0.0"),
    HTTP_PORT: key("port", "3000"),
    ROOT_URL: key("string", undefined),
    DOMAIN: key("string", "localhost"),
    APP_DATA_PATH: key("string", "./data"),
    START_SSH_SERVER: key("bool", "false"),
    SSH_PORT: key("port", "22"),
    SSH_LISTEN_PORT: key("port", undefined),
    SSH_LISTEN_HOST: key("string", "0.0.0.0"),
    BUILTIN_SSH_SERVER_USER: key("string", "git"),
    MAX_REQUEST_BODY: key("int", String(32 * 1024 * 1024)),
    READ_HEADER_TIMEOUT: key({ duration: "30s or 1m" }, "30s"),
    BODY_IDLE_TIMEOUT: key({ duration: "30s or 1m" }, "60s"),
    KEEP_ALIVE_TIMEOUT: key({ duration: "5s or 1m" }, "15s"),
    KEEP_ALIVE_MAX_REQUESTS: key("int", "0"),
    MAX_CONNECTIONS: key("int", "1000")
  },
  database: {
    DB_TYPE: key({ oneOf: ["embedded", "postgres"] }, undefined),
    DATABASE_URL: key("string", "", true),
    HOST: key("string", "127.0.0.1:5432"),
    NAME: key("string", "hearth"),
    USER: key("string", "hearth"),
    PASSWD: key("string", "", true),
    MAX_OPEN_CONNS: key("int", "10"),
    EMBEDDED_SHARED_BUFFERS: key("string", "auto")
  },
  security: {
    DISABLE_QUERY_AUTH_TOKEN: key("bool", "false"),
    SECRET_KEY: key("string", "", true),
    LOGIN_MAX_FAILURES: key("int", "5"),
    LOGIN_THROTTLE_SECONDS: key("int", "60"),
    DISABLE_WEBHOOKS: key("bool", "false")
  },
  session: { SESSION_LIFE_TIME: key("int", "86400") },
  api: {
    DEFAULT_PAGING_NUM: key("int", "30"),
    MAX_RESPONSE_ITEMS: key("int", "50"),
    DEFAULT_MAX_BLOB_SIZE: key("int", "10485760")
  },
  ui: {
    EXPLORE_PAGING_NUM: key("int", "50"),
    REACTIONS: key("string", "+1, -1, laugh, hooray, confused, heart, rocket, eyes"),
    THEMES: key("string", "auto, light, dark"),
    DEFAULT_THEME: key("string", "auto")
  },
  "repository.issue": { MAX_PINNED: key("int", "3") },
  "repository.release": { ALLOWED_TYPES: key("string", ""), FILE_MAX_SIZE: key("int", "2048") },
  "repository.pull-request": { RETARGET_CHILDREN_ON_MERGE: key("bool", "true") },
  "repository.signing": {
    FORMAT: key({ oneOf: ["openpgp", "ssh"] }, "openpgp"),
    SIGNING_KEY: key("string", "none"),
    SIGNING_NAME: key("string", "Hearth"),
    SIGNING_EMAIL: key("string", undefined),
    INITIAL_COMMIT: key("string", "always"),
    CRUD_ACTIONS: key("string", "pubkey, twofa, parentsigned"),
    MERGES: key("string", "pubkey, twofa, basesigned, commitssigned"),
    WIKI: key("string", "never")
  },
  attachment: {
    ENABLED: key("bool", "true"),
    MAX_SIZE: key("int", "2048"),
    ALLOWED_TYPES: key(
      "string",
      ".avif,.cpuprofile,.csv,.dmp,.docx,.fodg,.fodp,.fods,.fodt,.gif,.gz,.jpeg,.jpg,.json,.jsonc,.log,.md,.mov,.mp4,.odf,.odg,.odp,.ods,.odt,.patch,.pdf,.png,.pptx,.svg,.tgz,.txt,.webm,.webp,.xls,.xlsx,.zip"
    ),
    MAX_FILES: key("int", "5")
  },
  markdown: { MAX_RENDER_SIZE: key("int", String(512 * 1024)) },
  picture: {
    AVATAR_MAX_FILE_SIZE: key("int", "1048576"),
    AVATAR_MAX_WIDTH: key("int", "4096"),
    AVATAR_MAX_HEIGHT: key("int", "4096")
  },
  repository: { ROOT: key("string", ""), FORK_WAIT_TIMEOUT: key({ duration: "30s or 1m" }, "30s") },
  service: {
    REQUIRE_SIGNIN_VIEW: key("bool", "false"),
    DISABLE_REGISTRATION: key("bool", "false"),
    NO_REPLY_ADDRESS: key("string", undefined),
    AUTO_WATCH_NEW_REPOS: key("bool", "true"),
    ENABLE_TIMETRACKING: key("bool", "true"),
    DEFAULT_ENABLE_TIMETRACKING: key("bool", "true"),
    DEFAULT_ALLOW_ONLY_CONTRIBUTORS_TO_TRACK_TIME: key("bool", "true"),
    DEFAULT_ENABLE_DEPENDENCIES: key("bool", "true"),
    ALLOW_CROSS_REPOSITORY_DEPENDENCIES: key("bool", "true")
  },
  "service.explore": {
    REQUIRE_SIGNIN_VIEW: key("bool", "false"),
    DISABLE_USERS_PAGE: key("bool", "false")
  },
  quota: { ENABLED: key("bool", "false"), DEFAULT_GROUPS: key("string", "") },
  "quota.default": { TOTAL: key("string", "-1") },
  migrations: {
    ALLOW_LOCALNETWORKS: key("bool", "false"),
    ALLOWED_DOMAINS: key("string", ""),
    BLOCKED_DOMAINS: key("string", "")
  },
  mirror: {
    ENABLED: key("bool", "true"),
    MIN_INTERVAL: key({ duration: "10m or 8h" }, "10m"),
    DEFAULT_INTERVAL: key({ duration: "10m or 8h" }, "8h")
  },
  ssh: { TRUSTED_USER_CA_KEYS: key("string", "") },
  federation: {
    ENABLED: key("bool", "true"),
    SHARE_USER_STATISTICS: key("bool", "true"),
    MAX_SIZE: key("int", "4"),
    SIGNATURE_ALGORITHMS: key("string", "rsa-sha256,rsa-sha512,ed25519"),
    SIGNATURE_ENFORCED: key("bool", "true"),
    ALLOWED_HOSTS: key("string", ""),
    BLOCKED_HOSTS: key("string", ""),
    USE_INSECURE_HTTP: key("bool", "false"),
    ALLOW_LOCALNETWORKS: key("bool", "false"),
    DELIVERY_ATTEMPTS: key("int", "10"),
    DELIVERY_RETRY_DELAY: key({ duration: "30s or 1m" }, "1m")
  },
  webhook: {
    QUEUE_LENGTH: key("int", "1000"),
    DELIVER_TIMEOUT: key("int", "5"),
    SKIP_TLS_VERIFY: key("bool", "false"),
    ALLOWED_HOST_LIST: key("string", ""),
    PAGING_NUM: key("int", "10"),
    PROXY_URL: key("string", ""),
    PROXY_HOSTS: key("string", ""),
    PAYLOAD_COMMIT_LIMIT: key("int", "15"),
    MAX_RETRIES: key("int", "3"),
    RETRY_DELAY: key({ duration: "10s or 1m" }, "10s")
  },
  "cron.cleanup_hook_task_table": {
    ENABLED: key("bool", "true"),
    SCHEDULE: key("string", "@midnight"),
    CLEANUP_TYPE: key({ oneOf: ["OlderThan", "PerWebhook"] }, "OlderThan"),
    OLDER_THAN: key({ duration: "168h or 30m" }, "168h"),
    NUMBER_TO_KEEP: key("int", "10")
  },
  log: {
    LEVEL: key(
      {
        oneOf: ["Trace", "Debug", "Info", "Warning", "Error", "None"],
        aliases: { warn: "Warning", critical: "Error", fatal: "Error" }
      },
      "Info"
    )
  },
  storage: { STORAGE_TYPE: key({ oneOf: ["local", "minio"] }, "local"), PATH: key("string", "") },
  packages: {
    ENABLED: key("bool", "true"),
    CHUNKED_UPLOAD_PATH: key("string", "tmp/package-upload"),
    LIMIT_TOTAL_OWNER_COUNT: key("string", "-1"),
    LIMIT_TOTAL_OWNER_SIZE: key("string", "-1"),
    ...Object.fromEntries(PACKAGE_TYPES.map((t) => [`LIMIT_SIZE_${t.toUpperCase()}`, key("string", "-1")]))
  }
}

const unquote = (value: string): string => {
  for (const quote of ['"""', '"', "`", "'"]) {
    if (value.length >= 2 * quote.length && value.startsWith(quote) && value.endsWith(quote)) {
      return value.slice(quote.length, -quote.length)
    }
  }
  return value
}

/**
 * Parses app.ini text: `[section]` headers (keys before the first one are in `DEFAULT`),
 * `KEY = value` (the first `=` splits; values may contain `=`), whole-line `;`/`#` comments,
 * optional surrounding quotes. As in Forgejo, `#` or `;` after a value is part of the value.
 */
export const parseIni = (text: string): RawSettings => {
  const out: RawSettings = {}
  let section = "DEFAULT"
  for (const [index, rawLine] of text
    .replace(/^\uFEFF/, "")
    .split(/\r?\n/)
    .entries()) {
    const line = rawLine.trim()
    if (line === "" || line.startsWith(";") || line.startsWith("#")) continue
    const header = /^\[([^\]]+)\]$/.exec(line)
    if (header) {
      section = header[1]!.trim()
      continue
    }
    const eq = line.indexOf("=")
    if (eq <= 0)
      throw new SettingsError({ message: `app.ini line ${index + 1}: expected "KEY = value", got "${line}"` })
    ;(out[section] ??= {})[line.slice(0, eq).trim()] = unquote(line.slice(eq + 1).trim())
  }
  return out
}

/** Forgejo's escape for characters not allowed in variable names: `_0X2E_` is ".". */
const decodeEnvName = (name: string): string =>
  name.replace(/_0X([0-9A-F]+)_/gi, (_m, hex: string) => String.fromCodePoint(parseInt(hex, 16)))

/** Reads `HEARTH__<section>__<KEY>` variables; `DATABASE_URL` is accepted bare too. */
export const fromEnv = (env: NodeJS.ProcessEnv): RawSettings => {
  const out: RawSettings = {}
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue
    const m = /^HEARTH__(.+?)__(.+)$/.exec(name)
    if (m) (out[decodeEnvName(m[1]!)] ??= {})[decodeEnvName(m[2]!)] = value
  }
  if (env.DATABASE_URL !== undefined && env.DATABASE_URL !== "" && out.database?.DATABASE_URL === undefined) {
    ;(out.database ??= {}).DATABASE_URL = env.DATABASE_URL
  }
  return out
}

/** Merges sources (later wins), with section names lower-cased and keys upper-cased. */
const merge = (...layers: ReadonlyArray<RawSettings>): RawSettings => {
  const out: RawSettings = {}
  for (const layer of layers) {
    for (const [section, values] of Object.entries(layer)) {
      const target = (out[section.toLowerCase()] ??= {})
      for (const [name, value] of Object.entries(values)) target[name.toUpperCase()] = value
    }
  }
  return out
}

const invalid = (name: string, spec: Key, value: string, expected: string): never => {
  throw new SettingsError({
    message:
      spec.secret === true
        ? `invalid setting ${name}: expected ${expected}`
        : `invalid setting ${name} = "${value}": expected ${expected}`
  })
}

const trueWords = ["true", "1", "yes", "on", "t", "y"]
const falseWords = ["false", "0", "no", "off", "f", "n"]

const convert = (name: string, spec: Key, raw: string): string | number | boolean => {
  const kind = spec.kind
  if (kind === "string") return raw
  const value = raw.trim()
  if (kind === "bool") {
    const v = value.toLowerCase()
    if (trueWords.includes(v)) return true
    if (falseWords.includes(v)) return false
    return invalid(name, spec, raw, "true or false")
  }
  if (kind === "int" || kind === "port") {
    const expected = kind === "port" ? "a port number (0-65535)" : "a whole number"
    if (!/^\d+$/.test(value)) return invalid(name, spec, raw, expected)
    const n = Number(value)
    if (!Number.isSafeInteger(n) || (kind === "port" && n > 65535)) return invalid(name, spec, raw, expected)
    return n
  }
  if ("duration" in kind) {
    // Hearth allows less than Forgejo's floors (e.g. MIN_INTERVAL under 1m), which tests use.
    const seconds = /^(?:\d+(?:\.\d+)?(?:h|m|s|ms))+$/.test(value) ? parseGoDuration(value) : undefined
    return seconds === undefined || seconds <= 0
      ? invalid(name, spec, raw, `a duration such as ${kind.duration}`)
      : seconds
  }
  const v = value.toLowerCase()
  const match = kind.oneOf.find((option) => option.toLowerCase() === v) ?? kind.aliases?.[v]
  return match ?? invalid(name, spec, raw, `one of ${kind.oneOf.join(", ")}`)
}

/** `host[:port]`, `[v6]:port` or a unix socket directory → a postgres:// URL. */
const postgresUrl = (db: Record<string, unknown>): string => {
  const host = String(db.HOST).trim()
  const url = new URL("postgres://localhost")
  if (host.startsWith("/")) {
    url.searchParams.set("host", host)
  } else {
    const m = /^(\[[^\]]+\]|[^:]*)(?::(\d+))?$/.exec(host)
    if (!m || m[1] === "")
      throw new SettingsError({ message: `invalid setting [database] HOST = "${host}": expected host[:port]` })
    url.hostname = m[1]!
    // The setter ignores a name it cannot use instead of failing.
    if (!m[1]!.startsWith("[") && url.hostname !== m[1]!.toLowerCase()) {
      throw new SettingsError({ message: `invalid setting [database] HOST = "${host}": expected host[:port]` })
    }
    url.port = m[2] ?? "5432"
  }
  url.username = encodeURIComponent(String(db.USER))
  url.password = encodeURIComponent(String(db.PASSWD))
  url.pathname = `/${encodeURIComponent(String(db.NAME))}`
  return url.toString()
}

/** The words of [repository.signing]'s rules (Forgejo's services/asymkey/sign.go signing modes). */
export const SIGNING_RULES = [
  "never",
  "always",
  "pubkey",
  "twofa",
  "parentsigned",
  "basesigned",
  "headsigned",
  "commitssigned",
  "approved"
] as const

/** The signature algorithms [federation] SIGNATURE_ALGORITHMS may name (Forgejo's, and RFC 9421's others). */
export const SIGNATURE_ALGORITHMS = [
  "rsa-sha256",
  "rsa-sha512",
  "ed25519",
  "rsa-pss-sha512",
  "ecdsa-p256-sha256",
  "ecdsa-p384-sha384"
]

const BYTE_UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  t: 1e12,
  tb: 1e12,
  p: 1e15,
  pb: 1e15,
  e: 1e18,
  eb: 1e18,
  ki: 2 ** 10,
  kib: 2 ** 10,
  mi: 2 ** 20,
  mib: 2 ** 20,
  gi: 2 ** 30,
  gib: 2 ** 30,
  ti: 2 ** 40,
  tib: 2 ** 40,
  pi: 2 ** 50,
  pib: 2 ** 50,
  ei: 2 ** 60,
  eib: 2 ** 60
}

/**
 * A size as Forgejo reads [quota.default] TOTAL: bytes, with thousands commas and a unit if
 * wanted (`2k` = 2000, `2MiB` = 2·1024², `3G`); any negative size is -1 (unlimited), as is a
 * size too large for an int64. `undefined` for text that is no size (Forgejo silently reads it
 * as unlimited; Hearth refuses to start instead).
 */
export const parseByteSize = (text: string): number | undefined => {
  const m = /^(-?)\s*(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.replace(/[,\s]/g, ""))
  if (m === null) return undefined
  const unit = BYTE_UNITS[m[3]!.toLowerCase()]
  if (unit === undefined) return undefined
  if (m[1] === "-") return -1
  const bytes = Math.floor(Number(m[2]) * unit)
  return bytes > 2 ** 63 - 1 ? -1 : bytes
}

const PG_MEMORY_UNITS: Record<string, readonly [name: string, kB: number]> = {
  kb: ["kB", 1],
  mb: ["MB", 1024],
  gb: ["GB", 1024 * 1024]
}

/**
 * `[database] EMBEDDED_SHARED_BUFFERS`: a size in PostgreSQL's units (kB, MB, GB, powers of 1024;
 * any case), between PostgreSQL's minimum of 128kB and 1GB (the WASM memory holds at most 2 GB, and
 * PostgreSQL needs room beside its buffers). Returned as PostgreSQL spells it; or `auto` (the
 * default: sized by the database when it opens, src/db/Pglite.ts `autoSharedBuffers`).
 */
const sharedBuffers = (text: string): string => {
  if (text.trim().toLowerCase() === "auto") return "auto"
  const m = /^(\d+)\s*([a-z]{2})$/i.exec(text.trim())
  const unit = m === null ? undefined : PG_MEMORY_UNITS[m[2]!.toLowerCase()]
  const kB = m === null || unit === undefined ? NaN : Number(m[1]) * unit[1]
  if (unit === undefined || !(kB >= 128 && kB <= 1024 * 1024)) {
    throw new SettingsError({
      message: `invalid setting [database] EMBEDDED_SHARED_BUFFERS = "${text}": expected auto, or a size in kB, MB or GB from 128kB to 1GB, such as 16MB`
    })
  }
  return `${Number(m![1])}${unit[0]}`
}

/** Validates raw settings into a complete `SettingsShape`; throws `SettingsError` naming the key. */
export const resolveSettings = (rawInput: RawSettings): SettingsShape => {
  const raw = merge(rawInput)
  const out: Record<string, Record<string, unknown>> = {}
  for (const [section, keys] of Object.entries(schema)) {
    const given = raw[section] ?? {}
    const values: Record<string, unknown> = {}
    for (const [name, spec] of Object.entries(keys)) {
      const value = given[name] ?? spec.fallback
      if (value !== undefined) values[name] = convert(`[${section}] ${name}`, spec, value)
    }
    out[section] = values
  }
  const server = out.server!
  const db = out.database!
  const port = server.HTTP_PORT as number
  server.ROOT_URL ??= `http://${server.DOMAIN === "" ? "localhost" : server.DOMAIN}:${port}/`
  const rootUrl = server.ROOT_URL as string
  if (!/^https?:\/\/[^/]+/i.test(rootUrl) || !URL.canParse(rootUrl)) {
    throw new SettingsError({ message: `invalid setting [server] ROOT_URL = "${rootUrl}": expected an http(s) URL` })
  }
  if (!rootUrl.endsWith("/")) server.ROOT_URL = `${rootUrl}/`
  server.SSH_LISTEN_PORT ??= server.SSH_PORT
  server.APP_DATA_PATH = resolve(server.APP_DATA_PATH as string)
  const repository = out.repository!
  repository.ROOT =
    repository.ROOT === "" ? join(server.APP_DATA_PATH as string, "repositories") : resolve(repository.ROOT as string)
  const storage = out.storage!
  storage.PATH = storage.PATH === "" ? join(server.APP_DATA_PATH as string, "storage") : resolve(storage.PATH as string)
  db.DB_TYPE ??= db.DATABASE_URL === "" ? "embedded" : "postgres"
  if (db.DB_TYPE === "postgres") {
    if (db.DATABASE_URL === "") db.DATABASE_URL = postgresUrl(db)
    const url = URL.canParse(db.DATABASE_URL as string) ? new URL(db.DATABASE_URL as string) : undefined
    if (url === undefined || (url.protocol !== "postgres:" && url.protocol !== "postgresql:")) {
      throw new SettingsError({ message: "invalid setting [database] DATABASE_URL: expected a postgres:// URL" })
    }
  }
  if ((db.MAX_OPEN_CONNS as number) < 1) {
    throw new SettingsError({
      message: `invalid setting [database] MAX_OPEN_CONNS = "${db.MAX_OPEN_CONNS}": must be at least 1`
    })
  }
  db.EMBEDDED_SHARED_BUFFERS = sharedBuffers(String(db.EMBEDDED_SHARED_BUFFERS))
  const service = out.service!
  service.NO_REPLY_ADDRESS ??= `noreply.${server.DOMAIN}`
  const signing = out["repository.signing"]!
  signing.SIGNING_EMAIL ??= `noreply@${server.DOMAIN === "" ? "localhost" : server.DOMAIN}`
  // A misspelt rule would silently sign less (or more) than meant: refused at start.
  for (const name of ["INITIAL_COMMIT", "CRUD_ACTIONS", "MERGES", "WIKI"] as const) {
    const unknownRule = String(signing[name])
      .split(",")
      .map((w) => w.trim().toLowerCase())
      .find((w) => w !== "" && !(SIGNING_RULES as ReadonlyArray<string>).includes(w))
    if (unknownRule !== undefined) {
      throw new SettingsError({
        message: `invalid setting [repository.signing] ${name} = "${signing[name]}": "${unknownRule}" is not a signing rule; expected a comma-separated list of ${SIGNING_RULES.join(", ")}`
      })
    }
  }
  const api = out.api!
  for (const name of ["DEFAULT_PAGING_NUM", "MAX_RESPONSE_ITEMS"] as const) {
    if ((api[name] as number) < 1) {
      throw new SettingsError({ message: `invalid setting [api] ${name} = "${api[name]}": must be at least 1` })
    }
  }
  if ((out.ui!.EXPLORE_PAGING_NUM as number) < 1) {
    throw new SettingsError({
      message: `invalid setting [ui] EXPLORE_PAGING_NUM = "${out.ui!.EXPLORE_PAGING_NUM}": must be at least 1`
    })
  }
  out.ui!.REACTIONS = String(out.ui!.REACTIONS)
    .split(",")
    .map((r) => r.trim())
    .filter((r) => r !== "")
  const themes = String(out.ui!.THEMES)
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "")
  const strange = themes.filter((t) => themeColorMode(t) === undefined)
  if (themes.length === 0 || strange.length > 0) {
    throw new SettingsError({
      message: `invalid setting [ui] THEMES = "${out.ui!.THEMES}": each theme is auto, light or dark (or a name ending in -auto, -light or -dark, as Forgejo's forgejo-auto)`
    })
  }
  out.ui!.THEMES = themes
  if (!themes.includes(String(out.ui!.DEFAULT_THEME))) {
    throw new SettingsError({
      message: `invalid setting [ui] DEFAULT_THEME = "${out.ui!.DEFAULT_THEME}": must be one of [ui] THEMES (${themes.join(", ")})`
    })
  }
  if ((out.attachment!.MAX_SIZE as number) < 1) {
    throw new SettingsError({
      message: `invalid setting [attachment] MAX_SIZE = "${out.attachment!.MAX_SIZE}": expected the largest attachment in MB, at least 1`
    })
  }
  const quota = out.quota!
  quota.DEFAULT_GROUPS = String(quota.DEFAULT_GROUPS)
    .split(",")
    .map((g) => g.trim())
    .filter((g) => g !== "")
  const quotaDefault = out["quota.default"]!
  const total = parseByteSize(String(quotaDefault.TOTAL))
  if (total === undefined) {
    throw new SettingsError({
      message: `invalid setting [quota.default] TOTAL = "${quotaDefault.TOTAL}": expected a size such as 500M, 2GiB or 1000000, or -1 for unlimited`
    })
  }
  quotaDefault.TOTAL = total
  if ((server.MAX_CONNECTIONS as number) < 1) {
    throw new SettingsError({
      message: `invalid setting [server] MAX_CONNECTIONS = "${server.MAX_CONNECTIONS}": must be at least 1`
    })
  }
  const federation = out.federation!
  for (const name of ["MAX_SIZE", "DELIVERY_ATTEMPTS"] as const) {
    if ((federation[name] as number) < 1) {
      throw new SettingsError({
        message: `invalid setting [federation] ${name} = "${federation[name]}": must be at least 1`
      })
    }
  }
  const webhook = out.webhook!
  for (const name of ["DELIVER_TIMEOUT", "PAYLOAD_COMMIT_LIMIT"] as const) {
    if ((webhook[name] as number) < 1) {
      throw new SettingsError({ message: `invalid setting [webhook] ${name} = "${webhook[name]}": must be at least 1` })
    }
  }
  const hookTasks = out["cron.cleanup_hook_task_table"]!
  if (cronSchedule(String(hookTasks.SCHEDULE)) === undefined) {
    throw new SettingsError({
      message: `invalid setting [cron.cleanup_hook_task_table] SCHEDULE = "${hookTasks.SCHEDULE}": expected a cron schedule such as @midnight, @every 24h or "0 3 * * *"`
    })
  }
  const algorithms = String(federation.SIGNATURE_ALGORITHMS)
    .split(",")
    .map((a) => a.trim().toLowerCase())
    .filter((a) => a !== "")
  const unknown = algorithms.find((a) => !SIGNATURE_ALGORITHMS.includes(a))
  if (algorithms.length === 0 || unknown !== undefined) {
    throw new SettingsError({
      message: `invalid setting [federation] SIGNATURE_ALGORITHMS = "${federation.SIGNATURE_ALGORITHMS}": expected a comma-separated list of ${SIGNATURE_ALGORITHMS.join(", ")}`
    })
  }
  federation.SIGNATURE_ALGORITHMS = algorithms.join(",")
  const packages = out.packages!
  // Sizes as Forgejo reads them (humanize: 1000, 1 MB, 1 MiB); empty is no limit, as in Forgejo,
  // but text that is no size stops the start instead of silently meaning "no limit".
  for (const name of ["LIMIT_TOTAL_OWNER_SIZE", ...PACKAGE_TYPES.map((t) => `LIMIT_SIZE_${t.toUpperCase()}`)]) {
    const text = String(packages[name]).trim()
    const size = text === "" ? -1 : parseByteSize(text)
    if (size === undefined) {
      throw new SettingsError({
        message: `invalid setting [packages] ${name} = "${text}": expected a size such as 500M, 2GiB or 1000000, or -1 for no limit`
      })
    }
    packages[name] = size
  }
  const count = String(packages.LIMIT_TOTAL_OWNER_COUNT).trim()
  if (count !== "" && !/^-?\d+$/.test(count)) {
    throw new SettingsError({
      message: `invalid setting [packages] LIMIT_TOTAL_OWNER_COUNT = "${count}": expected a whole number, or -1 for no limit`
    })
  }
  packages.LIMIT_TOTAL_OWNER_COUNT = count === "" || Number(count) < 0 ? -1 : Number(count)
  packages.CHUNKED_UPLOAD_PATH = resolve(server.APP_DATA_PATH as string, packages.CHUNKED_UPLOAD_PATH as string)
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
    catch: (e) => (e instanceof SettingsError ? e : new SettingsError({ message: String(e) }))
  })

/**
 * Fills in SECRET_KEY when it was not configured: read from `<data>/secret_key`, or generated
 * there on first start, so that every later start uses the same key. Throws `SettingsError`.
 */
export const withSecretKey = (settings: SettingsShape): SettingsShape => {
  if (settings.security.SECRET_KEY !== "") return settings
  const dir = settings.server.APP_DATA_PATH
  const file = join(dir, "secret_key")
  try {
    mkdirSync(dir, { recursive: true })
    // "wx": never overwrite a key another process has just written.
    if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString("hex") + "\n", { mode: 0o600, flag: "wx" })
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") {
      throw new SettingsError({ message: `cannot create ${file} ([security] SECRET_KEY): ${(e as Error).message}` })
    }
  }
  const key = readFileSync(file, "utf8").trim()
  // An empty file must not silently become an empty key (or a new one, for existing data).
  if (key === "") throw new SettingsError({ message: `${file} is empty: restore it, or set [security] SECRET_KEY` })
  return { ...settings, security: { ...settings.security, SECRET_KEY: key } }
}

export const layer = (options: LoadOptions = {}): Layer.Layer<Settings, SettingsError> =>
  Layer.effect(
    Settings,
    Effect.flatMap(loadSettings(options), (settings) =>
      Effect.try({
        try: () => withSecretKey(settings),
        catch: (e) => (e instanceof SettingsError ? e : new SettingsError({ message: String(e) }))
      })
    )
  )

export const layerValue = (settings: SettingsShape): Layer.Layer<Settings> => Layer.succeed(Settings, settings)
