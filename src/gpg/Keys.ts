// Reading OpenPGP keys and signatures with `openpgp`, as Forgejo's models/asymkey/gpg_key*.go: key ids as 16 upper-case
// hex, `public_key` as the base64 of the key's own packet, capabilities from the algorithm (as
// Forgejo), identities' e-mails (revoked ones skipped), expiry from the self-signatures.
import * as openpgp from "openpgp"

/** Refused input, with the reason shown to the caller. */
export class KeyParseError extends Error {
  override readonly name = "KeyParseError"
}

export interface ParsedKey {
  readonly keyId: string
  /** "" for a primary key; the primary's key id for a subkey. */
  readonly primaryKeyId: string
  /** Base64 of the serialized public-key packet of this key alone. */
  readonly content: string
  readonly created: Date
  /** `null`: never expires. */
  readonly expires: Date | null
  readonly canSign: boolean
  readonly canEncryptComms: boolean
  readonly canEncryptStorage: boolean
  readonly canCertify: boolean
  /** The identities' addresses (primary keys only). */
  readonly emails: ReadonlyArray<string>
}

export interface ParsedEntity {
  readonly key: openpgp.PublicKey
  readonly primary: ParsedKey
  readonly subkeys: ReadonlyArray<ParsedKey>
}

const { publicKey: alg } = openpgp.enums
const SIGNING = new Set<number>([
  alg.rsaEncryptSign,
  alg.rsaSign,
  alg.dsa,
  alg.ecdsa,
  alg.eddsaLegacy,
  alg.ed25519,
  alg.ed448,
  alg.pqc_mldsa_ed25519
])
const ENCRYPTING = new Set<number>([
  alg.rsaEncryptSign,
  alg.rsaEncrypt,
  alg.elgamal,
  alg.ecdh,
  alg.x25519,
  alg.x448,
  alg.pqc_mlkem_x25519
])

/** A key id as Forgejo shows it: 16 upper-case hex characters, zero-padded. */
export const paddedKeyId = (id: string) => id.toUpperCase().padStart(16, "0")

const BLOCK = /-----BEGIN PGP PUBLIC KEY BLOCK-----[\s\S]*?-----END PGP PUBLIC KEY BLOCK-----/g

const reason = (e: unknown) => (e instanceof Error ? e.message : String(e)).replace(/^Error: /, "")

/**
 * Every public key in the armored text (several blocks, and several keys per block, allowed);
 * blocks holding the same primary key are merged. Private keys are refused.
 */
export const readArmoredKeys = async (armored: string): Promise<Array<openpgp.PublicKey>> => {
  if (/-----BEGIN PGP PRIVATE KEY BLOCK-----/.test(armored)) {
    throw new KeyParseError(
      "this is a private key: never share it. Add the public key instead (gpg --armor --export <key id>)"
    )
  }
  const blocks = armored.match(BLOCK) ?? []
  if (blocks.length === 0) {
    throw new KeyParseError(
      'no "-----BEGIN PGP PUBLIC KEY BLOCK-----" found: add the key as gpg --armor --export shows it'
    )
  }
  const byId = new Map<string, openpgp.PublicKey>()
  for (const block of blocks) {
    let keys: Array<openpgp.Key>
    try {
      keys = await openpgp.readKeys({ armoredKeys: block })
    } catch (e) {
      throw new KeyParseError(reason(e))
    }
    for (const key of keys) {
      if (key.isPrivate()) throw new KeyParseError("this is a private key: never share it. Add the public key instead")
      const id = key.getKeyID().toHex()
      const seen = byId.get(id)
      byId.set(id, seen === undefined ? (key as openpgp.PublicKey) : await seen.update(key as openpgp.PublicKey))
    }
  }
  return [...byId.values()]
}

const packetBase64 = (packet: openpgp.BasePacket<boolean>) => {
  const list = new openpgp.PacketList<openpgp.BasePacket<boolean>>()
  list.push(packet)
  return Buffer.from(list.write()).toString("base64")
}

const finite = (value: Date | number | null): Date | null =>
  value instanceof Date && Number.isFinite(value.getTime()) ? value : null

const capabilities = (algorithm: number) => ({
  canSign: SIGNING.has(algorithm),
  canEncryptComms: ENCRYPTING.has(algorithm),
  canEncryptStorage: ENCRYPTING.has(algorithm),
  // Forgejo shows can_certify as a copy of can_sign (services/convert `ToGPGKey`).
  canCertify: SIGNING.has(algorithm)
})

/** The rows Hearth keeps for one key: the primary and its subkeys. */
export const describe = async (key: openpgp.PublicKey): Promise<ParsedEntity> => {
  let expires: Date | null
  try {
    expires = finite(await key.getExpirationTime())
  } catch (e) {
    throw new KeyParseError(`the key ${paddedKeyId(key.getKeyID().toHex())} has no valid self-signature: ${reason(e)}`)
  }
  const keyId = paddedKeyId(key.getKeyID().toHex())
  const emails = [
    ...new Set(
      key.users
        .filter((user) => user.userID !== null && user.revocationSignatures.length === 0)
        .map((user) => user.userID!.email.trim())
        .filter((email) => email !== "")
    )
  ]
  const primary: ParsedKey = {
    keyId,
    primaryKeyId: "",
    content: packetBase64(key.keyPacket),
    created: key.getCreationTime(),
    expires,
    ...capabilities(key.keyPacket.algorithm),
    emails
  }
  const subkeys: Array<ParsedKey> = []
  for (const subkey of key.subkeys) {
    // A subkey without a valid binding signature is not part of the key (as gpg treats it).
    let own: Date | null
    try {
      own = finite(await subkey.getExpirationTime())
    } catch {
      continue
    }
    subkeys.push({
      keyId: paddedKeyId(subkey.getKeyID().toHex()),
      primaryKeyId: keyId,
      content: packetBase64(subkey.keyPacket),
      created: subkey.getCreationTime(),
      expires: own ?? expires,
      ...capabilities(subkey.keyPacket.algorithm),
      emails: []
    })
  }
  return { key, primary, subkeys }
}

/**
 * The key (among `keys`) whose key or subkey made `armoredSignature`, a detached signature over
 * one of `texts` (each as is, or followed by "\n" or "\r\n"); `undefined` if none did.
 */
export const findSigner = async (
  keys: ReadonlyArray<openpgp.PublicKey>,
  armoredSignature: string,
  texts: ReadonlyArray<string>
): Promise<openpgp.PublicKey | undefined> => {
  let signature: openpgp.Signature
  try {
    signature = await openpgp.readSignature({ armoredSignature })
  } catch {
    return undefined
  }
  for (const text of texts) {
    for (const variant of [text, `${text}\n`, `${text}\r\n`]) {
      const message = await openpgp.createMessage({ binary: new TextEncoder().encode(variant) })
      const { signatures } = await openpgp.verify({ message, signature, verificationKeys: [...keys], format: "binary" })
      for (const checked of signatures) {
        const ok = await checked.verified.then(
          () => true,
          () => false
        )
        if (ok) return keys.find((key) => key.getKeys(checked.keyID).length > 0)
      }
    }
  }
  return undefined
}

/** One armored block holding all these keys (the `{user}.gpg` export). */
export const armorKeys = (keys: ReadonlyArray<openpgp.PublicKey>, note?: string): string => {
  const parts = keys.map((key) => key.write())
  const body = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const part of parts) {
    body.set(part, at)
    at += part.length
  }
  return openpgp.armor(openpgp.enums.armor.publicKey, body, undefined, undefined, note)
}
