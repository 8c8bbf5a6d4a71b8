// Secrets kept in the database sealed with a key derived from [security] SECRET_KEY for one
// purpose (Forgejo keeps such secrets encrypted with SECRET_KEY too, modules/secret): mirror
// credentials, federation keys, TOTP secrets. AES-256-GCM; stored as base64 `iv.tag.data`.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"

/**
 * Seals with a key derived from SECRET_KEY for one purpose: "mirror-credentials",
 * "federation-keys", "totp". A purpose's key never opens another's values.
 */
export const sealer = (secretKey: string, purpose: string) => {
  const key = createHash("sha256").update(`${purpose}:${secretKey}`).digest()
  return {
    seal: (plain: string): string => {
      if (plain === "") return ""
      const iv = randomBytes(12)
      const cipher = createCipheriv("aes-256-gcm", key, iv)
      const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
      return [iv, cipher.getAuthTag(), data].map((b) => b.toString("base64")).join(".")
    },
    /** "" when nothing is stored; throws when the key changed (the stored value cannot be read). */
    open: (sealed: string): string => {
      if (sealed === "") return ""
      const [iv, tag, data] = sealed.split(".").map((p) => Buffer.from(p, "base64"))
      const decipher = createDecipheriv("aes-256-gcm", key, iv!)
      decipher.setAuthTag(tag!)
      return Buffer.concat([decipher.update(data!), decipher.final()]).toString("utf8")
    }
  }
}
