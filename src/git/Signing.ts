// The instance's commit-signing key (Forgejo's [repository.signing], services/asymkey/sign.go):
// loaded, or generated once under `<APP_DATA_PATH>/signing`, at start. Commits Hearth makes
// itself (the contents API, diffpatch) are signed with git's own signing (`commit-tree -S` with
// `gpg.format` and `user.signingkey`), and a signature made by this key is reported as the
// instance's. FORMAT openpgp keeps the key in a keyring of Hearth's own (GNUPGHOME under the
// signing directory); FORMAT ssh signs with `ssh-keygen -Y sign` through git.
import { execFile } from "node:child_process"
import { createHash, createPublicKey, verify } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { Context, Effect, Layer } from "effect"
import { UNSIGNED_VERIFICATION } from "../branches/Api.ts"
import type { CommitSignature } from "../branches/Service.ts"
import { Settings, type SettingsShape } from "../config/Settings.ts"
import { fingerprintOf } from "../keys/Parse.ts"
import { lazyRequire } from "../lib/LazyRequire.ts"
import type { SignOptions } from "./GitData.ts"

// OpenPGP (~20 MB) is loaded when a key is first used, not at start (test/startup-modules.test.ts).
const openpgp = lazyRequire<typeof import("openpgp")>("openpgp")

/** How a git process signs: its `-c` configuration and environment (GitData.signCommit). */
export type SignWith = SignOptions

export interface InstanceKey {
  readonly format: "openpgp" | "ssh"
  /** The armored OpenPGP public key, or the SSH public key line. */
  readonly publicKey: string
  /** OpenPGP: the key's fingerprint; SSH: the key file. */
  readonly keyId: string
  /** What Forgejo's verification names the key by: the OpenPGP key id, the SSH key's SHA256 fingerprint. */
  readonly shortId: string
  readonly name: string
  readonly email: string
  readonly sign: SignWith
}

/** The writes [repository.signing] has a rule for (which rule signs one: SigningRules.ts `CommitSigner.decide`). */
export type SigningAction = "INITIAL_COMMIT" | "CRUD_ACTIONS" | "MERGES" | "WIKI"

export class InstanceSigning extends Context.Service<
  InstanceSigning,
  {
    /** None when SIGNING_KEY is `none`. */
    readonly key: InstanceKey | undefined
    /**
     * Whether `signature` over `payload` was made by the instance key (an OpenPGP or an SSH
     * signature, as FORMAT says).
     */
    readonly isInstanceSignature: (signature: string, payload: string) => Effect.Effect<boolean>
  }
>()("hearth/git/InstanceSigning") {
  static readonly layer = Layer.effect(
    InstanceSigning,
    Effect.gen(function* () {
      const settings = yield* Settings
      const key = yield* loadKey(settings)
      const publicKeys =
        key?.format === "openpgp"
          ? yield* Effect.promise(() => openpgp().readKeys({ armoredKeys: key.publicKey }))
          : undefined
      return InstanceSigning.of({
        key,
        isInstanceSignature: (signature, payload) => {
          if (key?.format === "ssh") return Effect.sync(() => sshSignedBy(key.publicKey, signature, payload))
          if (publicKeys === undefined) return Effect.succeed(false)
          return Effect.promise(async () => {
            try {
              const message = await openpgp().createMessage({ binary: new TextEncoder().encode(payload) })
              const parsed = await openpgp().readSignature({ armoredSignature: signature })
              const { signatures } = await openpgp().verify({
                message,
                signature: parsed,
                verificationKeys: publicKeys,
                format: "binary"
              })
              for (const checked of signatures) {
                if (
                  await checked.verified.then(
                    () => true,
                    () => false
                  )
                )
                  return true
              }
              return false
            } catch {
              return false
            }
          })
        }
      })
    })
  )
}

/** An SSH wire-format string (uint32 length, bytes) at `at`, and where the next one starts. */
const sshString = (buffer: Buffer, at: number): [Buffer, number] => {
  if (at + 4 > buffer.length) throw new Error("truncated")
  const length = buffer.readUInt32BE(at)
  if (at + 4 + length > buffer.length) throw new Error("truncated")
  return [buffer.subarray(at + 4, at + 4 + length), at + 4 + length]
}

const sshWire = (...parts: ReadonlyArray<Buffer>) =>
  Buffer.concat(
    parts.flatMap((part) => {
      const length = Buffer.alloc(4)
      length.writeUInt32BE(part.length)
      return [length, part]
    })
  )

/** The public key (its wire-format blob) that made an armored SSH signature, if it is one. */
export const sshSignatureKey = (armored: string): Buffer | undefined => {
  try {
    const body = armored.replace(/-----(BEGIN|END) SSH SIGNATURE-----/g, "").replace(/\s+/g, "")
    const blob = Buffer.from(body, "base64")
    if (blob.subarray(0, 6).toString("latin1") !== "SSHSIG") return undefined
    return sshString(blob, 10)[0]
  } catch {
    return undefined
  }
}

/**
 * Whether an armored SSH signature (PROTOCOL.sshsig, namespace `git`) over `payload` was made by
 * `publicKeyLine`, the instance's ed25519 key: the signature's key must be that key and the
 * signature must check, as `ssh-keygen -Y verify` would.
 */
export const sshSignedBy = (publicKeyLine: string, armored: string, payload: string): boolean => {
  try {
    const body = armored.replace(/-----(BEGIN|END) SSH SIGNATURE-----/g, "").replace(/\s+/g, "")
    const blob = Buffer.from(body, "base64")
    if (blob.subarray(0, 6).toString("latin1") !== "SSHSIG") return false
    const [signer, a1] = sshString(blob, 10) // after the magic and the version
    const [namespace, a2] = sshString(blob, a1)
    const [reserved, a3] = sshString(blob, a2)
    const [hashName, a4] = sshString(blob, a3)
    const [signatureBlob] = sshString(blob, a4)
    const instance = Buffer.from(publicKeyLine.trim().split(/\s+/)[1] ?? "", "base64")
    if (!signer.equals(instance)) return false
    const [keyType, k1] = sshString(instance, 0)
    if (keyType.toString("latin1") !== "ssh-ed25519") return false
    const [raw] = sshString(instance, k1)
    const [sigType, s1] = sshString(signatureBlob, 0)
    if (sigType.toString("latin1") !== "ssh-ed25519") return false
    const [signature] = sshString(signatureBlob, s1)
    const hash = hashName.toString("latin1")
    if (hash !== "sha512" && hash !== "sha256") return false
    const signed = Buffer.concat([
      Buffer.from("SSHSIG", "latin1"),
      sshWire(namespace, reserved, hashName, createHash(hash).update(payload, "utf8").digest())
    ])
    const publicKey = createPublicKey({
      key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") },
      format: "jwk"
    })
    return namespace.toString("latin1") === "git" && verify(null, signed, publicKey, signature)
  } catch {
    return false
  }
}

/** The public key of `format` the routes serve, or undefined when the instance has none of it. */
export const signingKeyOf = (
  signing: { readonly key: InstanceKey | undefined },
  format: "openpgp" | "ssh"
): string | undefined => (signing.key?.format === format ? signing.key.publicKey : undefined)

/** The `sign` member of a commit request, absent when the commit is not signed. */
export const signWith = (sign: SignOptions | undefined) => (sign === undefined ? {} : { sign })

/** Forgejo's answer for a signature no key it knows made: not verified, "no known key". */
const unknownKey = (signature: CommitSignature) => ({
  verified: false,
  reason: "gpg.error.no_gpg_keys_found",
  signature: signature.signature,
  signer: null,
  payload: signature.payload
})

/**
 * A commit's or tag's verification: the instance's when its key made the signature (Forgejo
 * reports the signer as SIGNING_NAME/SIGNING_EMAIL and the key), else as src/branches answers.
 */
export const verificationWith = (
  signing: {
    readonly key: InstanceKey | undefined
    readonly isInstanceSignature: (s: string, p: string) => Effect.Effect<boolean>
  },
  signature: CommitSignature | undefined
) =>
  Effect.gen(function* () {
    if (signature === undefined) return UNSIGNED_VERIFICATION
    const key = signing.key
    if (key === undefined || !(yield* signing.isInstanceSignature(signature.signature, signature.payload)))
      return unknownKey(signature)
    return {
      verified: true,
      // Forgejo's default-key branch of ParseCommitWithSignature (ParseCommitWithSSHSignature for SSH).
      reason: `${key.name} / ${key.shortId}`,
      signature: signature.signature,
      signer: { name: key.name, email: key.email, username: "" },
      payload: signature.payload
    }
  })

const failed = (message: string) => Effect.die(new Error(`[repository.signing] ${message}`))

const loadKey = (settings: SettingsShape): Effect.Effect<InstanceKey | undefined> =>
  Effect.gen(function* () {
    const section = settings["repository.signing"]
    const given = section.SIGNING_KEY.trim()
    if (given === "" || given.toLowerCase() === "none") return undefined
    const dir = join(settings.server.APP_DATA_PATH, "signing")
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const who = { name: section.SIGNING_NAME, email: section.SIGNING_EMAIL }
    if (section.FORMAT === "ssh") {
      let file = given.toLowerCase() === "default" ? join(dir, "signing_ed25519") : resolve(given)
      if (given.toLowerCase() === "default" && !existsSync(file)) {
        yield* Effect.orDie(
          runTool("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", `${who.name} <${who.email}>`, "-f", file])
        )
      }
      if (!existsSync(file)) return yield* failed(`SIGNING_KEY: no key file at ${file}`)
      file = resolve(file)
      const pub = existsSync(`${file}.pub`)
        ? readFileSync(`${file}.pub`, "utf8").trim()
        : (yield* Effect.orDie(runTool("ssh-keygen", ["-y", "-f", file]))).trim()
      return {
        format: "ssh",
        publicKey: `${pub}\n`,
        keyId: file,
        shortId: fingerprintOf(Buffer.from(pub.split(/\s+/)[1] ?? "", "base64")),
        ...who,
        sign: {
          config: [
            { key: "gpg.format", value: "ssh" },
            { key: "user.signingkey", value: file }
          ],
          env: {}
        }
      } satisfies InstanceKey
    }
    const home = join(dir, "gnupg")
    mkdirSync(home, { recursive: true, mode: 0o700 })
    chmodSync(home, 0o700)
    const gpg = (args: ReadonlyArray<string>, input?: string) =>
      runTool("gpg", ["--batch", "--no-tty", "--homedir", home, ...args], input)
    let fingerprint = firstSecretKey(yield* Effect.orDie(gpg(["--with-colons", "--list-secret-keys"])))
    if (fingerprint === undefined) {
      if (given.toLowerCase() === "default") {
        yield* Effect.orDie(
          gpg(["--passphrase", "", "--quick-gen-key", `${who.name} <${who.email}>`, "ed25519", "sign", "never"])
        )
      } else {
        const file = resolve(given)
        if (!existsSync(file)) return yield* failed(`SIGNING_KEY: no key file at ${file}`)
        yield* Effect.orDie(gpg(["--import", file]))
      }
      fingerprint = firstSecretKey(yield* Effect.orDie(gpg(["--with-colons", "--list-secret-keys"])))
    }
    if (fingerprint === undefined) return yield* failed("no OpenPGP secret key could be made or read")
    const publicKey = yield* Effect.orDie(gpg(["--armor", "--export", fingerprint]))
    writeFileSync(join(dir, "public.asc"), publicKey)
    return {
      format: "openpgp",
      publicKey,
      keyId: fingerprint,
      shortId: fingerprint.slice(-16),
      ...who,
      sign: {
        config: [
          { key: "gpg.format", value: "openpgp" },
          { key: "user.signingkey", value: fingerprint }
        ],
        env: { GNUPGHOME: home }
      }
    } satisfies InstanceKey
  })

const firstSecretKey = (colons: string) =>
  colons
    .split("\n")
    .find((line) => line.startsWith("fpr:"))
    ?.split(":")[9]

/** Runs a key tool (gpg, ssh-keygen) to completion, its standard output as text. */
const runTool = (command: string, args: ReadonlyArray<string>, input?: string) =>
  Effect.tryPromise({
    try: () =>
      new Promise<string>((done, fail) => {
        const child = execFile(
          command,
          args as Array<string>,
          { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/nonexistent", LANG: "C" }, timeout: 120_000 },
          (error, stdout, stderr) =>
            error === null ? done(stdout) : fail(new Error(`${command} ${args.join(" ")}: ${stderr || error.message}`))
        )
        child.stdin?.end(input)
      }),
    // Start-up stops with a message naming the setting (a missing gpg or ssh-keygen, a bad key file).
    catch: (cause) => new Error(`[repository.signing] the signing key could not be prepared: ${String(cause)}`)
  })
