// The outbound host policy: where a kind of outbound traffic (migrations and mirrors, federation,
// webhooks) may go, as Forgejo's modules/hostmatcher (`HostMatchList`, with the builtins
// `external`, `private`, `loopback` and `*`) and its ALLOW_LOCALNETWORKS switches. Each feature
// gives its own lists, switch and words (`HostPolicy`); the host is resolved and every address it
// has must be allowed, and the answer is the checked addresses, for the caller to pin its
// connection to, so that neither a DNS change nor a redirect leads elsewhere.

import { lookup } from "node:dns/promises"
import { isIP } from "node:net"
import { Effect } from "effect"

/** Why an address is refused; `local`/`host` are refusals of where, `url` of how it is written. */
export interface RemoteRefused {
  readonly _tag: "RemoteRefused"
  readonly message: string
}

export const refused = (message: string): RemoteRefused => ({ _tag: "RemoteRefused", message })

type Kind = "loopback" | "private" | "external" | "never"

const v4Kind = (b: ReadonlyArray<number>): Kind => {
  const [a, c] = [b[0]!, b[1]!]
  if (a === 127) return "loopback"
  if (a === 10 || (a === 172 && c >= 16 && c < 32) || (a === 192 && c === 168) || (a === 100 && c >= 64 && c < 128))
    return "private"
  // "This network" (0.0.0.0/8 reaches the local host), link-local (cloud metadata), multicast, reserved, broadcast.
  if (a === 0 || (a === 169 && c === 254) || a >= 224) return "never"
  return "external"
}

/** The 16 bytes of an IPv6 address (with an embedded IPv4 tail if written so). */
const v6Bytes = (text: string): Array<number> | undefined => {
  let address = text.split("%")[0]!.toLowerCase()
  const tail: Array<number> = []
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(address)
  if (v4 !== null) {
    tail.push(...v4[1]!.split(".").map(Number))
    address = address.slice(0, -v4[1]!.length) + "0:0"
  }
  const [head, rest] = address.split("::")
  const part = (s: string | undefined) => (s === undefined || s === "" ? [] : s.split(":"))
  const left = part(head)
  const right = part(rest)
  const fill = address.includes("::") ? 8 - left.length - right.length : 0
  const groups = [...left, ...Array(fill).fill("0"), ...right]
  if (groups.length !== 8) return undefined
  const bytes = groups.flatMap((g) => {
    const n = parseInt(g, 16)
    return [n >> 8, n & 0xff]
  })
  if (tail.length === 4) bytes.splice(12, 4, ...tail)
  return bytes
}

const v6Kind = (b: ReadonlyArray<number>): Kind => {
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0)
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d): the IPv4 rules.
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4Kind(b.slice(12))
  if (zero(0, 12)) {
    if (zero(12, 15) && b[15] === 1) return "loopback"
    if (zero(12, 16)) return "never"
    return v4Kind(b.slice(12))
  }
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12)) return v4Kind(b.slice(12))
  // 6to4 (2002:a.b.c.d::/48).
  if (b[0] === 0x20 && b[1] === 0x02) return v4Kind(b.slice(2, 6))
  if ((b[0]! & 0xfe) === 0xfc || (b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0)) return "private"
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return "never" // link-local
  if (b[0] === 0xff) return "never" // multicast
  return "external"
}

/** The address as bytes and its kind. */
const classify = (address: string): { readonly bytes: Array<number>; readonly kind: Kind } | undefined => {
  const family = isIP(address)
  if (family === 4) {
    const bytes = address.split(".").map(Number)
    return { bytes, kind: v4Kind(bytes) }
  }
  if (family === 6) {
    const bytes = v6Bytes(address)
    return bytes === undefined ? undefined : { bytes, kind: v6Kind(bytes) }
  }
  return undefined
}

export interface Matcher {
  readonly builtins: ReadonlySet<string>
  readonly globs: ReadonlyArray<RegExp>
  readonly cidrs: ReadonlyArray<{ readonly bytes: Array<number>; readonly bits: number }>
}

/** A comma-separated list of host globs, CIDRs and builtins (external, private, loopback, *). */
export const parseMatchList = (text: string): Matcher => {
  const builtins = new Set<string>()
  const globs: Array<RegExp> = []
  const cidrs: Array<{ bytes: Array<number>; bits: number }> = []
  for (const raw of text.split(",")) {
    const item = raw.trim().toLowerCase()
    if (item === "") continue
    if (["external", "private", "loopback", "*"].includes(item)) {
      builtins.add(item)
      continue
    }
    const slash = item.indexOf("/")
    if (slash > 0) {
      const ip = classify(item.slice(0, slash))
      const bits = Number(item.slice(slash + 1))
      if (ip !== undefined && Number.isInteger(bits)) {
        cidrs.push({ bytes: ip.bytes, bits })
        continue
      }
    }
    const pattern = item
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".")
    globs.push(new RegExp(`^${pattern}$`))
  }
  return { builtins, globs, cidrs }
}

const isEmpty = (m: Matcher) => m.builtins.size === 0 && m.globs.length === 0 && m.cidrs.length === 0

const matchesHost = (m: Matcher, host: string) => m.builtins.has("*") || m.globs.some((g) => g.test(host))

const matchesAddress = (m: Matcher, ip: { readonly bytes: Array<number>; readonly kind: Kind }) => {
  if (m.builtins.has("*")) return true
  if (ip.kind !== "never" && m.builtins.has(ip.kind)) return true
  return m.cidrs.some(({ bytes, bits }) => {
    if (bytes.length !== ip.bytes.length) return false
    for (let i = 0; i < bits; i++) {
      const bit = (b: Array<number>) => (b[i >> 3]! >> (7 - (i & 7))) & 1
      if (bit(bytes) !== bit(ip.bytes)) return false
    }
    return true
  })
}

/** Where a kind of outbound traffic may go: the settings of [migrations], [federation] or [webhook]. */
export interface HostPolicy {
  readonly allowLocalNetworks: boolean
  readonly allowed: string
  readonly blocked: string
  /** The refusal, in the words of the feature ("You can not import from disallowed hosts."). */
  readonly refusal: string
  /** Appended to a refusal: which settings change it. */
  readonly hints: { readonly local: string; readonly lists: string }
}

/**
 * Resolves the URL's host and checks every address it has against the policy; the answer is the
 * checked addresses (to pin the connection to), or why not.
 */
export const checkHost = (policy: HostPolicy, remoteUrl: string): Effect.Effect<Array<string>, RemoteRefused> =>
  Effect.gen(function* () {
    const url = new URL(remoteUrl)
    const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase()
    const blocked = parseMatchList(policy.blocked)
    const allowed = parseMatchList(policy.allowed)
    const allow = isEmpty(allowed) ? parseMatchList("external") : allowed
    const builtins = new Set(allow.builtins)
    if (policy.allowLocalNetworks) {
      builtins.add("private")
      builtins.add("loopback")
    }
    const allowList: Matcher = { ...allow, builtins }
    const addresses =
      isIP(host) !== 0
        ? [host]
        : yield* Effect.tryPromise({
            try: () => lookup(host, { all: true, verbatim: true }),
            catch: () => refused(`${policy.refusal} The host name ${host} could not be resolved.`)
          }).pipe(Effect.map((found) => found.map((a) => a.address)))
    if (addresses.length === 0)
      return yield* Effect.fail(refused(`${policy.refusal} The host name ${host} could not be resolved.`))
    const hint = policy.allowLocalNetworks ? policy.hints.lists : policy.hints.local
    const hostAllowed = matchesHost(allowList, host)
    for (const address of addresses) {
      const ip = classify(address)
      if (ip === undefined) return yield* Effect.fail(refused(policy.refusal))
      if (matchesHost(blocked, host) || matchesAddress(blocked, ip)) return yield* Effect.fail(refused(policy.refusal))
      if (!hostAllowed && !matchesAddress(allowList, ip)) {
        return yield* Effect.fail(refused(`${policy.refusal}${ip.kind === "external" ? "" : hint}`))
      }
    }
    return addresses
  })

/**
 * True when the host's name alone is refused: by the blocked list, or by an allowed list that
 * lists only names (no addresses or builtins) without it. The cheap check before anything is
 * resolved or fetched; `checkHost` checks the addresses too.
 */
export const hostNameRefused = (policy: Pick<HostPolicy, "allowed" | "blocked">, host: string): boolean => {
  const name = host
    .replace(/:\d+$/, "")
    .replace(/^\[|\]$/g, "")
    .toLowerCase()
  if (matchesHost(parseMatchList(policy.blocked), name)) return true
  const allowed = parseMatchList(policy.allowed)
  const namesOnly = allowed.globs.length > 0 && allowed.builtins.size === 0 && allowed.cidrs.length === 0
  return namesOnly && !matchesHost(allowed, name)
}
