// An ed25519 key pair in OpenSSH's own formats (the `openssh-key-v1` private key file and the
// `ssh-ed25519 AAAA… comment` public line), made from node:crypto.
//
// Why not ssh2's `utils.generateKeyPairSync`: it strips leading zero bytes from the 32-byte public
// key, so about one key in 256 is written malformed and then refused by ssh2's own parser — a new
// forge would fail to start its SSH server once in 256 installs (it failed a CI run that way).
import { generateKeyPairSync, randomBytes } from "node:crypto"

const KEY_TYPE = "ssh-ed25519"

/** SSH's `string`: a 32-bit big-endian length, then the bytes. */
const sshString = (value: Buffer | string): Buffer => {
  const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : value
  const length = Buffer.alloc(4)
  length.writeUInt32BE(bytes.length)
  return Buffer.concat([length, bytes])
}

const uint32 = (value: number): Buffer => {
  const bytes = Buffer.alloc(4)
  bytes.writeUInt32BE(value)
  return bytes
}

export interface SshKeyPair {
  /** The private key file's text (`-----BEGIN OPENSSH PRIVATE KEY-----` …), unencrypted. */
  readonly private: string
  /** The public key line: `ssh-ed25519 AAAA… comment`. */
  readonly public: string
}

/** A new ed25519 key pair; `comment` goes into both halves as ssh-keygen's `-C` does. */
export const generateEd25519 = (comment = ""): SshKeyPair => {
  const { privateKey } = generateKeyPairSync("ed25519")
  const jwk = privateKey.export({ format: "jwk" })
  const seed = Buffer.from(jwk.d!, "base64url")
  const pub = Buffer.from(jwk.x!, "base64url")
  const publicBlob = Buffer.concat([sshString(KEY_TYPE), sshString(pub)])
  // The private section starts with the same random 32-bit number twice (a passphrase check) and is
  // padded with 1, 2, 3… to the cipher's block size (8 for "none").
  const check = randomBytes(4).readUInt32BE()
  const section = [
    uint32(check),
    uint32(check),
    sshString(KEY_TYPE),
    sshString(pub),
    sshString(Buffer.concat([seed, pub])),
    sshString(comment)
  ]
  const unpadded = Buffer.concat(section)
  const padding = Buffer.from(Array.from({ length: (8 - (unpadded.length % 8)) % 8 }, (_, i) => i + 1))
  const body = Buffer.concat([
    Buffer.from("openssh-key-v1\0", "latin1"),
    sshString("none"),
    sshString("none"),
    sshString(""),
    uint32(1),
    sshString(publicBlob),
    sshString(Buffer.concat([unpadded, padding]))
  ])
  const lines = body.toString("base64").match(/.{1,70}/g)!
  return {
    private: ["-----BEGIN OPENSSH PRIVATE KEY-----", ...lines, "-----END OPENSSH PRIVATE KEY-----", ""].join("\n"),
    public: `${KEY_TYPE} ${publicBlob.toString("base64")}${comment === "" ? "" : ` ${comment}`}`
  }
}
