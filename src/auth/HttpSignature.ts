// HTTP-signature authentication (Forgejo's services/auth `HTTPSign`): an API request
// signed with a registered SSH key, as Forgejo's clients send it:
//   Signature: keyId="SHA256:…",algorithm="hs2019",created=N,expires=N,
//              headers="(request-target) (created) (expires)",signature="<base64>"
// or signed with the key of an SSH user certificate (`X-Ssh-Certificate`, unpadded base64 of its
// wire form) issued by a CA in `[ssh] TRUSTED_USER_CA_KEYS`, naming a principal a user registered.
// A signature that does not verify is a 401: it never falls through to another identity.

import { createPublicKey, verify as cryptoVerify } from "node:crypto"
import { Context, Effect, Layer, Option } from "effect"
import type sshpk from "sshpk"
import { Settings } from "../config/Settings.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { KeysRepo } from "../keys/Repo.ts"
import { lazyRequire } from "../lib/LazyRequire.ts"
import { UsersRepo } from "../users/Repo.ts"

const loadSshpk = lazyRequire<typeof sshpk>("sshpk")

/** How far `created` may lie in the future and `expires` in the past (Forgejo: 10 s). */
export const CLOCK_SKEW_SECONDS = 10
/** The longest validity a signature may claim, so a leaked header is not a long-lived credential. */
export const MAX_LIFETIME_SECONDS = 300
const REQUIRED = ["(request-target)", "(created)", "(expires)"]

export interface SignedRequest {
  readonly method: string
  /** Path and query, as sent. */
  readonly url: string
  readonly headers: Readonly<Record<string, string | undefined>>
}

/** The parameters of a `Signature` header; `undefined` when it cannot be read. */
export const parseSignatureHeader = (header: string): Record<string, string> | undefined => {
  const params: Record<string, string> = {}
  const pattern = /\s*([A-Za-z]+)=(?:"([^"]*)"|([^,\s"]*))\s*(,|$)/y
  let at = 0
  while (at < header.length) {
    pattern.lastIndex = at
    const m = pattern.exec(header)
    if (m === null) return undefined
    const name = m[1]!
    if (name in params) return undefined
    params[name] = m[2] ?? m[3] ?? ""
    at = pattern.lastIndex
  }
  return params
}

/** The string that was signed, from the covered header names (draft-cavage §2.3). */
export const signingString = (request: SignedRequest, covered: ReadonlyArray<string>, params: Record<string, string>) =>
  covered
    .map((name) => {
      if (name === "(request-target)") return `(request-target): ${request.method.toLowerCase()} ${request.url}`
      if (name === "(created)") return `(created): ${params.created}`
      if (name === "(expires)") return `(expires): ${params.expires}`
      const value = request.headers[name]
      if (value === undefined) throw new Error(`the signed header ${name} is missing from the request`)
      return `${name}: ${value}`
    })
    .join("\n")

/** Verifies `signature` over `data` with an SSH key (ed25519 raw, or RSA PKCS#1 v1.5 SHA-256/512). */
const verifyWith = (key: sshpk.Key, algorithm: string, data: Buffer, signature: Buffer): boolean => {
  const publicKey = createPublicKey(key.toString("pkcs8"))
  const lower = algorithm.toLowerCase()
  if (key.type === "ed25519") {
    if (!["hs2019", "ed25519", "ssh-ed25519"].includes(lower)) return false
    return cryptoVerify(null, data, publicKey, signature)
  }
  if (key.type === "rsa") {
    const hashes =
      lower === "hs2019"
        ? ["sha256", "sha512"]
        : lower === "rsa-sha256"
          ? ["sha256"]
          : lower === "rsa-sha512"
            ? ["sha512"]
            : []
    return hashes.some((hash) => cryptoVerify(hash, data, publicKey, signature))
  }
  return false
}

/** A certificate's `<type> <base64>` line from the header's unpadded base64 wire form. */
const certificateOf = (header: string): sshpk.Certificate => {
  const blob = Buffer.from(header.trim(), "base64")
  const n = blob.readUInt32BE(0)
  const type = blob.subarray(4, 4 + n).toString("latin1")
  return loadSshpk().parseCertificate(`${type} ${blob.toString("base64")}`, "openssh")
}

export class HttpSignatures extends Context.Service<
  HttpSignatures,
  {
    /** The signed-in user of a request carrying a `Signature` header, or 401 saying why not. */
    readonly authenticate: (request: SignedRequest) => Effect.Effect<Principal, Errors.Unauthorized>
  }
>()("hearth/keys/HttpSignatures") {
  static readonly layer = Layer.effect(
    HttpSignatures,
    Effect.gen(function* () {
      const keys = yield* KeysRepo
      const users = yield* UsersRepo
      const settings = yield* Settings
      const trustedCAs = settings.ssh.TRUSTED_USER_CA_KEYS.split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "")
        .map((line) => {
          try {
            return loadSshpk().parseKey(line, "ssh")
          } catch {
            throw new Error(
              `invalid setting [ssh] TRUSTED_USER_CA_KEYS: "${line.slice(0, 40)}…" is not an OpenSSH public key`
            )
          }
        })
      const refuse = (why: string) => Effect.fail(Errors.unauthorized(`invalid HTTP signature: ${why}`))

      const principalOf = (userId: number) =>
        Effect.flatMap(users.findById(userId), (user) =>
          Option.isNone(user)
            ? refuse("the key's owner no longer exists")
            : Effect.succeed<Principal>({ user: user.value, scopes: undefined, method: "token" })
        )

      const authenticate = (request: SignedRequest): Effect.Effect<Principal, Errors.Unauthorized> =>
        Effect.suspend(() => {
          const params = parseSignatureHeader(request.headers["signature"] ?? "")
          if (params === undefined) return refuse("the Signature header cannot be read")
          const { algorithm = "hs2019", created, expires, headers, keyId, signature } = params
          if (signature === undefined || signature === "") return refuse("no signature")
          const covered = (headers ?? "(created)")
            .toLowerCase()
            .split(/\s+/)
            .filter((h) => h !== "")
          const missing = REQUIRED.filter((h) => !covered.includes(h))
          if (missing.length > 0) return refuse(`the signature must cover ${missing.join(" ")}`)
          if (!/^\d{1,12}$/.test(created ?? "") || !/^\d{1,12}$/.test(expires ?? "")) {
            return refuse("created and expires must be Unix times")
          }
          const now = Math.floor(Date.now() / 1000)
          if (Number(created) > now + CLOCK_SKEW_SECONDS)
            return refuse("created lies in the future (check the client's clock)")
          if (Number(expires) < now - CLOCK_SKEW_SECONDS) return refuse("the signature has expired")
          if (Number(expires) - Number(created) > MAX_LIFETIME_SECONDS) {
            return refuse(`a signature may be valid for at most ${MAX_LIFETIME_SECONDS} seconds`)
          }
          let data: Buffer
          try {
            data = Buffer.from(signingString(request, covered, params), "utf8")
          } catch (e) {
            return refuse((e as Error).message)
          }
          const sig = Buffer.from(signature, "base64")
          const certificate = request.headers["x-ssh-certificate"]
          if (certificate !== undefined && trustedCAs.length > 0) {
            return Effect.gen(function* () {
              if (!covered.includes("x-ssh-certificate"))
                return yield* refuse("the signature must cover x-ssh-certificate")
              let cert: sshpk.Certificate
              try {
                cert = certificateOf(certificate)
              } catch {
                return yield* refuse("the X-Ssh-Certificate header is not an SSH certificate")
              }
              if (!trustedCAs.some((ca) => cert.isSignedByKey(ca)))
                return yield* refuse("the certificate is not issued by a trusted CA")
              if (cert.isExpired()) return yield* refuse("the certificate has expired or is not yet valid")
              // The certificate's subject key, re-read from its OpenSSH form (sshpk pads ed25519 otherwise).
              const subject = loadSshpk().parseKey(cert.subjectKey.toString("ssh"), "ssh")
              if (!verifyWith(subject, algorithm, data, sig))
                return yield* refuse("the signature does not match the certificate's key")
              for (const s of cert.subjects) {
                const name = s.uid ?? s.hostname ?? ""
                const found = yield* keys.findPrincipal(name)
                if (Option.isSome(found)) return yield* principalOf(found.value.ownerId!)
              }
              return yield* refuse("no user registered any of the certificate's principals")
            })
          }
          return Effect.gen(function* () {
            if (keyId === undefined || keyId === "") return yield* refuse("no keyId")
            const found = yield* keys.findByFingerprint(keyId)
            if (Option.isNone(found) || found.value.keyType !== "user" || found.value.ownerId === null) {
              return yield* refuse(`no user key has the fingerprint ${keyId}`)
            }
            const key = loadSshpk().parseKey(found.value.content, "ssh")
            if (key.type !== "ed25519" && key.type !== "rsa") {
              return yield* refuse(`${key.type} keys cannot sign requests: use an ed25519 or RSA key`)
            }
            if (!verifyWith(key, algorithm, data, sig)) return yield* refuse("the signature does not match the key")
            return yield* principalOf(found.value.ownerId)
          })
        })

      return HttpSignatures.of({ authenticate })
    })
  )
}
