// The digests Forgejo records for every stored blob (`package_blob`: hash_md5, hash_sha1,
// hash_sha256, hash_sha512), computed in one pass over the bytes as they stream by.
import { createHash, type Hash } from "node:crypto"

export interface Digests {
  /** Lower-case hex, as Forgejo stores and serves them. */
  readonly md5: string
  readonly sha1: string
  readonly sha256: string
  readonly sha512: string
}

export const ALGORITHMS = ["md5", "sha1", "sha256", "sha512"] as const

/** Feeds every chunk to the four hashes; `digest` once at the end. */
export class Hasher {
  private readonly hashes: ReadonlyArray<Hash> = ALGORITHMS.map((algorithm) => createHash(algorithm))

  update(chunk: Uint8Array): void {
    for (const hash of this.hashes) hash.update(chunk)
  }

  digest(): Digests {
    const [md5, sha1, sha256, sha512] = this.hashes.map((hash) => hash.digest("hex"))
    return { md5: md5!, sha1: sha1!, sha256: sha256!, sha512: sha512! }
  }
}

/** A blob's name: 64 lower-case hex digits (anything else names no blob, and never a path). */
export const isSha256 = (value: string): boolean => /^[0-9a-f]{64}$/.test(value)
