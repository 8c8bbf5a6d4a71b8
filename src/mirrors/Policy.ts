// Where Hearth may fetch from and push to (migrations, pull and push mirrors), and how the
// credentials for it are given to git. As Forgejo's migrations.IsMigrateURLAllowed: http(s) only,
// never a local path; the host is resolved and every address it has must be allowed by the
// outbound host policy (src/lib/HostPolicy.ts) with [migrations]'s settings (public addresses by
// default; loopback and private ones with ALLOW_LOCALNETWORKS; ALLOWED_DOMAINS / BLOCKED_DOMAINS).
// Git is then pinned to the checked addresses (http.curloptResolve) and never follows a
// redirect, so neither a DNS change nor a redirect can lead it elsewhere. Credentials go to git
// in an `Authorization` header through the environment, never in a URL or an argument; they are
// stored sealed (src/lib/Sealer.ts).

import { isIP } from "node:net"
import { Effect } from "effect"
import type { SettingsShape } from "../config/Settings.ts"
import { checkHost, type HostPolicy, type RemoteRefused, refused } from "../lib/HostPolicy.ts"

export interface Credentials {
  readonly username: string
  readonly password: string
  readonly token: string
}

export interface Remote {
  readonly _tag: "Remote"
  /** The address without credentials (what is stored and shown). */
  readonly url: string
  readonly credentials: Credentials
}

export const LOCAL_REFUSED = "You are not allowed to import local repositories."
export const HOST_REFUSED = "You can not import from disallowed hosts."

/**
 * Parses a clone or push address; credentials in it are taken out (the form's fields win).
 * Only http and https: `file://`, local paths, `ssh://`, `git://` and `user@host:path` are refused.
 */
export const parseRemote = (
  raw: string,
  given: {
    readonly username?: string | undefined
    readonly password?: string | undefined
    readonly token?: string | undefined
  } = {}
): Remote | RemoteRefused => {
  const address = raw.trim()
  if (address === "") return refused("[CloneAddr]: Required")
  if (address.startsWith("/") || address.startsWith("./") || address.startsWith("../") || /^file:/i.test(address)) {
    return refused(LOCAL_REFUSED)
  }
  let url: URL
  try {
    url = new URL(address)
  } catch {
    // `git@host:owner/repo` (scp-like ssh) and other non-URLs.
    const host = /^[^@/]+@([^:/]+):/.exec(address)?.[1] ?? "<invalid>"
    return refused(`migration/cloning from '${host}' is not allowed: the provided url is invalid`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return refused(
      `migration/cloning from '${url.host}' is not allowed: the provided url protocol is not allowed (use http or https)`
    )
  }
  if (url.hostname === "") return refused(`migration/cloning from '' is not allowed: the provided url is invalid`)
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s)
    } catch {
      return s
    }
  }
  const credentials = {
    username: given.username !== undefined && given.username !== "" ? given.username : decode(url.username),
    password: given.password !== undefined && given.password !== "" ? given.password : decode(url.password),
    token: given.token ?? ""
  }
  url.username = ""
  url.password = ""
  url.hash = ""
  return { _tag: "Remote", url: url.toString(), credentials }
}

export const migrationsPolicy = (settings: SettingsShape): HostPolicy => ({
  allowLocalNetworks: settings.migrations.ALLOW_LOCALNETWORKS,
  allowed: settings.migrations.ALLOWED_DOMAINS,
  blocked: settings.migrations.BLOCKED_DOMAINS,
  refusal: HOST_REFUSED,
  hints: {
    local: " (it is on a local network; an administrator may allow that with [migrations] ALLOW_LOCALNETWORKS = true)",
    lists: " (see [migrations] ALLOWED_DOMAINS and BLOCKED_DOMAINS)"
  }
})

/**
 * Checks the remote's addresses ([migrations]); the answer is the git configuration that pins git
 * to those addresses and keeps it from following redirects.
 */
export const checkRemote = (
  settings: SettingsShape,
  remoteUrl: string
): Effect.Effect<Array<{ key: string; value: string }>, RemoteRefused> =>
  Effect.map(checkHost(migrationsPolicy(settings), remoteUrl), (addresses) => {
    const url = new URL(remoteUrl)
    const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase()
    // A remote that stops sending for 5 minutes is given up (it would hold the repository's writes).
    const config = [
      { key: "http.followRedirects", value: "false" },
      { key: "http.lowSpeedLimit", value: "1" },
      { key: "http.lowSpeedTime", value: "300" }
    ]
    if (isIP(host) === 0) {
      const port = url.port !== "" ? url.port : url.protocol === "https:" ? "443" : "80"
      const pinned = addresses.map((a) => (isIP(a) === 6 ? `[${a}]` : a)).join(",")
      config.push({ key: "http.curloptResolve", value: `${host}:${port}:${pinned}` })
    }
    return config
  })

/** The `Authorization` header git sends, or "" without credentials (a token goes as Basic password). */
export const authorizationHeader = (credentials: Credentials): string => {
  const { username, password, token } = credentials
  if (token !== "")
    return `Authorization: Basic ${Buffer.from(`${username === "" ? "oauth2" : username}:${token}`).toString("base64")}`
  if (username === "" && password === "") return ""
  return `Authorization: Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`
}

/** The git configuration for one fetch or push: the pin, and the credentials if any. */
export const gitConfig = (pin: ReadonlyArray<{ key: string; value: string }>, header: string) =>
  header === "" ? [...pin] : [...pin, { key: "http.extraHeader", value: header }]

/** Git's messages with any `user:password@` taken out of URLs (a remote may echo them). */
export const sanitize = (text: string) => text.replace(/(\w+:\/\/)[^/\s@]*@/g, "$1")
