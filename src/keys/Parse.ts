// Reading an SSH public key as Forgejo's CheckPublicKeyString does: one OpenSSH line, an SSH2
// (RFC 4716) block or a PEM `PUBLIC KEY` block; normalised to `<type> <base64> [comment]`, with the
// OpenSSH SHA256 fingerprint and Forgejo's minimum sizes.
import { createHash } from "node:crypto"
import type sshpk from "sshpk"
import { lazyRequire } from "../lib/LazyRequire.ts"

const loadSshpk = lazyRequire<typeof sshpk>("sshpk")

export interface ParsedKey {
  /** `<type> <base64>[ comment]`, trimmed. */
  readonly content: string
  readonly type: string
  /** `SHA256:` and the unpadded base64 of the SHA-256 of the key blob. */
  readonly fingerprint: string
  readonly bits: number
}

export class KeyRejected extends Error {}

// Forgejo's [ssh.minimum_key_sizes] defaults; a type not listed is refused.
const minimumSizes: Record<string, number> = { ed25519: 256, "ed25519-sk": 256, ecdsa: 256, "ecdsa-sk": 256, rsa: 3071 }

const sizeName: Record<string, string> = {
  "ssh-ed25519": "ed25519",
  "sk-ssh-ed25519@openssh.com": "ed25519-sk",
  "ecdsa-sha2-nistp256": "ecdsa",
  "ecdsa-sha2-nistp384": "ecdsa",
  "ecdsa-sha2-nistp521": "ecdsa",
  "sk-ecdsa-sha2-nistp256@openssh.com": "ecdsa-sk",
  "ssh-rsa": "rsa",
  "ssh-dss": "dsa"
}

export const fingerprintOf = (blob: Buffer): string =>
  `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`

/** The algorithm name at the start of an SSH wire-format key blob. */
const blobType = (blob: Buffer): string | undefined => {
  if (blob.length < 4) return undefined
  const n = blob.readUInt32BE(0)
  if (n === 0 || n > 64 || 4 + n > blob.length) return undefined
  return blob.subarray(4, 4 + n).toString("latin1")
}

const isBase64 = (s: string) => /^[A-Za-z0-9+/]+={0,2}$/.test(s)

/** Security-key types sshpk does not read: size fixed by the curve (256). */
const skTypes = new Set(["sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com"])

const fromBlob = (blob: Buffer, comment: string): ParsedKey => {
  const type = blobType(blob)
  if (type === undefined) throw new KeyRejected("Invalid key content: no key found")
  let bits: number
  if (skTypes.has(type)) {
    bits = 256
  } else {
    let key: sshpk.Key
    try {
      key = loadSshpk().parseKey(`${type} ${blob.toString("base64")}`, "ssh")
    } catch {
      throw new KeyRejected("Unable to verify key content")
    }
    bits = key.size
  }
  const name = sizeName[type] ?? type
  const minimum = minimumSizes[name]
  if (minimum === undefined) throw new KeyRejected(`Invalid key content: key type is not allowed: ${name}`)
  if (bits < minimum) {
    throw new KeyRejected(`Invalid key content: key length is not enough: got ${bits}, needs ${minimum}`)
  }
  const base = `${type} ${blob.toString("base64")}`
  return { content: comment === "" ? base : `${base} ${comment}`, type, fingerprint: fingerprintOf(blob), bits }
}

/** Parses a key as a user pastes it; throws `KeyRejected` with the message for the 422. */
export const parsePublicKey = (input: string): ParsedKey => {
  const text = input.replace(/\r\n?/g, "\n").trim()
  if (text === "") throw new KeyRejected("Invalid key content: no key found")
  if (text.includes("PRIVATE"))
    throw new KeyRejected("Invalid key content: a private key was given: paste the public key (.pub) instead")
  if (text.startsWith("---- BEGIN SSH2 PUBLIC KEY ----")) return parseSsh2(text)
  if (text.startsWith("-----BEGIN")) return parsePem(text)
  if (text.includes("\n")) throw new KeyRejected("Invalid key content: only a single line with a single key please")
  const fields = text.split(/\s+/)
  // "<type> <base64> [comment]", or the base64 alone.
  let given: string | undefined
  let data: string
  let comment: string
  if (isBase64(fields[0]!) && fields[0]!.length > 40) {
    data = fields[0]!
    comment = fields.slice(1).join(" ")
  } else {
    given = fields[0]!
    data = fields[1] ?? ""
    comment = fields.slice(2).join(" ")
  }
  if (!isBase64(data)) throw new KeyRejected("Invalid key content: no key found")
  const blob = Buffer.from(data, "base64")
  const inner = blobType(blob)
  if (inner === undefined) throw new KeyRejected("Invalid key content: no key found")
  if (given !== undefined && given !== inner)
    throw new KeyRejected("Invalid key content: key type and content does not match")
  return fromBlob(blob, comment)
}

const parseSsh2 = (text: string): ParsedKey => {
  const lines = text.split("\n")
  const end = lines.findIndex((l) => l.trim() === "---- END SSH2 PUBLIC KEY ----")
  if (end < 0) throw new KeyRejected("Invalid key content: the SSH2 block has no END line")
  if (lines.slice(end + 1).some((l) => l.trim() !== "")) {
    throw new KeyRejected("Invalid key content: only a single line with a single key please")
  }
  // Headers are "Name: value" lines, continued with a trailing backslash.
  const body: Array<string> = []
  let continued = false
  for (const line of lines.slice(1, end)) {
    if (continued || /^[^:\s]+:/.test(line)) {
      continued = line.endsWith("\\")
      continue
    }
    body.push(line.trim())
  }
  const data = body.join("")
  if (!isBase64(data)) throw new KeyRejected("Invalid key content: no key found")
  return fromBlob(Buffer.from(data, "base64"), "")
}

const parsePem = (text: string): ParsedKey => {
  const begins = text.match(/-----BEGIN /g) ?? []
  if (begins.length > 1) throw new KeyRejected("Invalid key content: only a single line with a single key please")
  let key: sshpk.Key
  try {
    key = loadSshpk().parseKey(text, "pem")
  } catch (e) {
    throw new KeyRejected(`Invalid key content: ${(e as Error).message}`)
  }
  return fromBlob(key.toBuffer("rfc4253"), "")
}
