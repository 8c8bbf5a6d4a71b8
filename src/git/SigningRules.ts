// When Hearth signs the commits it makes (Forgejo's services/asymkey/sign.go: SignInitialCommit,
// SignCRUDAction, SignWikiCommit, SignMerge) and how a commit's signature is verified (Forgejo's
// asymkey_model.ParseCommitWithSignature): the one decision every writer asks (repository
// initialisation, the contents API, diffpatch, merges, the wiki) and the one verification the
// commit routes answer.
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Context, Effect, Layer, Option } from "effect"
import { UNSIGNED_VERIFICATION } from "../branches/Api.ts"
import { type CommitSignature, splitSignature } from "../branches/Service.ts"
import { Settings, SIGNING_RULES } from "../config/Settings.ts"
import { GpgRepo } from "../gpg/Repo.ts"
import { fingerprintOf } from "../keys/Parse.ts"
import { KeysRepo } from "../keys/Repo.ts"
import { lazyRequire } from "../lib/LazyRequire.ts"
import { TwoFactor } from "../twofa/Service.ts"
import { gitName } from "../users/Schema.ts"
import { UsersService } from "../users/Service.ts"
import * as Git from "./Git.ts"
import {
  InstanceSigning,
  type SigningAction,
  type SignWith,
  sshSignatureKey,
  sshSignedBy,
  verificationWith
} from "./Signing.ts"

// OpenPGP (~20 MB) and the key helpers are loaded when a signature is first checked.
const openpgp = lazyRequire<typeof import("openpgp")>("openpgp")
let keysModule: typeof import("../gpg/Keys.ts") | undefined
const loadKeys = async () => (keysModule ??= await import("../gpg/Keys.ts"))

export type SigningRule = (typeof SIGNING_RULES)[number]

/**
 * Whether an SSH signature (namespace `git`) over `payload` checks with the key it names:
 * ed25519 here, other key types by `ssh-keygen -Y check-novalidate`.
 */
const sshSignatureChecks = (keyLine: string, armored: string, payload: string) =>
  keyLine.startsWith("ssh-ed25519 ")
    ? Effect.succeed(sshSignedBy(keyLine, armored, payload))
    : Effect.callback<boolean>((resume) => {
        const dir = mkdtempSync(join(tmpdir(), "hearth-sshsig-"))
        const file = join(dir, "signature")
        writeFileSync(file, armored)
        const done = (ok: boolean) => {
          rmSync(dir, { recursive: true, force: true })
          resume(Effect.succeed(ok))
        }
        const child = execFile(
          "ssh-keygen",
          ["-Y", "check-novalidate", "-n", "git", "-s", file],
          { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C" }, timeout: 30_000 },
          (error) => done(error === null)
        )
        child.stdin?.on("error", () => {})
        child.stdin?.end(payload)
      })

/**
 * A rule as Forgejo's `signingModeFromStrings` reads it: comma-separated, case and spaces
 * ignored; `never` anywhere, or nothing at all, is `never`. Unknown words are refused at start
 * (src/config/Settings.ts), so none is left here.
 */
export const parseSigningRule = (value: string): ReadonlyArray<SigningRule> => {
  const words = value
    .split(",")
    .map((w) => w.trim().toLowerCase())
    .filter((w): w is SigningRule => (SIGNING_RULES as ReadonlyArray<string>).includes(w))
  return words.length === 0 || words.includes("never") ? ["never"] : words
}

/** The verification of a commit (Forgejo's `PayloadCommitVerification`). */
export interface Verification {
  readonly verified: boolean
  readonly reason: string
  readonly signature: string
  readonly signer: { readonly name: string; readonly email: string; readonly username: string } | null
  readonly payload: string
}

/** What a signing rule is checked against. */
export interface SigningFacts {
  /** The user the commit is made for (pubkey, twofa). */
  readonly doer: { readonly id: number }
  /** The repository (its git directory) the commit lands in. */
  readonly repoPath: string
  /** CRUD_ACTIONS, WIKI: the commit the new one follows (parentsigned); undefined when there is none. */
  readonly parent?: string | undefined
  /** MERGES: the base and head commits and whether the pull request is approved (approved). */
  readonly merge?:
    | {
        readonly base: string
        readonly head: string
        readonly approved: Effect.Effect<boolean>
      }
    | undefined
}

export class CommitSigner extends Context.Service<
  CommitSigner,
  {
    /**
     * How to sign the commit made for `action`, or undefined when its rule says not to (or the
     * instance has no key). Every rule word of the action must hold; `always` stops the check.
     */
    readonly decide: (action: SigningAction, facts: SigningFacts) => Effect.Effect<SignWith | undefined>
    /**
     * A commit's signature checked as Forgejo's `ParseCommitWithSignature`: a key the committer
     * registered (OpenPGP), else the instance's key, else "no known key".
     */
    readonly verify: (signature: CommitSignature | undefined, committerEmail: string) => Effect.Effect<Verification>
    /** The verification of commit `sha` (a full id or a revision) in the repository at `repoPath`. */
    readonly verifyCommit: (repoPath: string, sha: string) => Effect.Effect<Verification>
  }
>()("hearth/git/CommitSigner") {
  static readonly layer = Layer.effect(
    CommitSigner,
    Effect.gen(function* () {
      const settings = yield* Settings
      const instance = yield* InstanceSigning
      const gpgKeys = yield* GpgRepo
      const sshKeys = yield* KeysRepo
      const twoFactor = yield* TwoFactor
      const accounts = yield* UsersService
      const section = settings["repository.signing"]

      /** A signature made by a key a user registered, checked as Forgejo's `hashAndVerifyForKeyID`. */
      const byUserKey = (signature: CommitSignature, email: string) =>
        Effect.gen(function* () {
          const ids = yield* Effect.promise(() =>
            loadKeys().then((k) =>
              openpgp()
                .readSignature({ armoredSignature: signature.signature })
                .then(
                  (s) => s.getSigningKeyIDs().map((id) => k.paddedKeyId(id.toHex())),
                  () => [] as Array<string>
                )
            )
          )
          for (const id of ids) {
            const row = yield* gpgKeys.findByKeyId(id)
            if (Option.isNone(row)) continue
            const primaryId = row.value.primaryKeyId === "" ? row.value.keyId : row.value.primaryKeyId
            const primary = yield* gpgKeys.findPrimary(row.value.ownerId, primaryId)
            const armored = yield* gpgKeys.importOf(primaryId)
            if (Option.isNone(primary) || Option.isNone(armored)) continue
            // Forgejo: the signer's e-mail is an activated address of the key's owner, and the key
            // was verified with a signed token or names that address itself.
            const owner = yield* accounts.byCommitEmail(email)
            if (Option.isNone(owner) || owner.value.id !== row.value.ownerId) continue
            const named = primary.value.emails.some((e) => e.toLowerCase() === email.toLowerCase())
            if (!primary.value.verified && !named) continue
            const signer = yield* Effect.promise(() =>
              loadKeys().then((k) =>
                k.readArmoredKeys(armored.value).then(
                  (keys) => k.findSigner(keys, signature.signature, [signature.payload]),
                  () => undefined
                )
              )
            )
            if (signer === undefined) continue
            return {
              verified: true,
              reason: `${owner.value.name} / ${id}`,
              signature: signature.signature,
              signer: { name: gitName(owner.value), email, username: owner.value.name },
              payload: signature.payload
            } satisfies Verification
          }
          return undefined
        })

      /**
       * An SSH signature by a key the committer registered (Forgejo's ParseCommitWithSSHSignature):
       * reported as theirs with the key's fingerprint.
       */
      const byUserSshKey = (signature: CommitSignature, email: string) =>
        Effect.gen(function* () {
          const blob = sshSignatureKey(signature.signature)
          if (blob === undefined) return undefined
          const fingerprint = fingerprintOf(blob)
          const key = yield* sshKeys.findByFingerprint(fingerprint)
          if (Option.isNone(key) || key.value.keyType !== "user" || key.value.ownerId === null) return undefined
          const owner = yield* accounts.byCommitEmail(email)
          if (Option.isNone(owner) || owner.value.id !== key.value.ownerId) return undefined
          if (!(yield* sshSignatureChecks(key.value.content, signature.signature, signature.payload))) return undefined
          return {
            verified: true,
            reason: `${owner.value.name} / ${fingerprint}`,
            signature: signature.signature,
            signer: { name: gitName(owner.value), email, username: owner.value.name },
            payload: signature.payload
          } satisfies Verification
        })

      const verify = (signature: CommitSignature | undefined, email: string) =>
        Effect.gen(function* () {
          if (signature === undefined) return UNSIGNED_VERIFICATION as Verification
          const user = signature.signature.startsWith("-----BEGIN SSH SIGNATURE-----")
            ? yield* byUserSshKey(signature, email)
            : yield* byUserKey(signature, email)
          if (user !== undefined) return user
          return (yield* verificationWith(instance, signature)) as Verification
        })

      const verifyCommit = (repoPath: string, sha: string) =>
        Effect.gen(function* () {
          const object = (yield* Effect.orDie(Git.inRepo(repoPath, ["cat-file", "commit", sha]))).stdout.toString(
            "utf8"
          )
          const committer = /^committer .*<([^>]*)>/m.exec(object.slice(0, object.indexOf("\n\n")))
          return yield* verify(splitSignature(object), committer?.[1] ?? "")
        })

      /** Whether commit `revision` exists, is signed and verifies (parentsigned, basesigned, headsigned). */
      const verifies = (repoPath: string, revision: string | undefined) =>
        revision === undefined
          ? Effect.succeed(false)
          : Effect.flatMap(Git.inRepo(repoPath, ["rev-parse", "--verify", "--quiet", `${revision}^{commit}`]), (r) =>
              Effect.map(verifyCommit(repoPath, r.stdout.toString("utf8").trim()), (v) => v.verified)
            ).pipe(Effect.orElseSucceed(() => false))

      /** Every commit of the head not in the base verifies, the head too (commitssigned). */
      const allVerify = (repoPath: string, base: string, head: string) =>
        Effect.gen(function* () {
          if (!(yield* verifies(repoPath, head))) return false
          const listed = yield* Git.inRepo(repoPath, ["rev-list", head, "--not", base]).pipe(
            Effect.map((r) => r.stdout.toString("utf8").split("\n").filter(Git.isSha)),
            Effect.orElseSucceed(() => undefined)
          )
          if (listed === undefined) return false
          for (const sha of listed) if (!(yield* verifies(repoPath, sha))) return false
          return true
        })

      /** Whether one rule word holds for `action` (words Forgejo does not check for an action are ignored). */
      const holds = (action: SigningAction, rule: SigningRule, facts: SigningFacts): Effect.Effect<boolean> => {
        switch (rule) {
          case "pubkey":
            // Forgejo: a GPG key for OpenPGP signing, an SSH key for SSH signing.
            return section.FORMAT === "ssh"
              ? Effect.map(sshKeys.listByOwner(facts.doer.id, 1, 0), (r) => r.total > 0)
              : Effect.map(gpgKeys.listPrimary(facts.doer.id, 1, 0), (r) => r.total > 0)
          case "twofa":
            return twoFactor.isEnabled(facts.doer.id)
          case "parentsigned":
            return action === "CRUD_ACTIONS" || action === "WIKI"
              ? verifies(facts.repoPath, facts.parent)
              : Effect.succeed(true)
          case "basesigned":
            return action === "MERGES" && facts.merge !== undefined
              ? verifies(facts.repoPath, facts.merge.base)
              : Effect.succeed(true)
          case "headsigned":
            return action === "MERGES" && facts.merge !== undefined
              ? verifies(facts.repoPath, facts.merge.head)
              : Effect.succeed(true)
          case "commitssigned":
            return action === "MERGES" && facts.merge !== undefined
              ? allVerify(facts.repoPath, facts.merge.base, facts.merge.head)
              : Effect.succeed(true)
          case "approved":
            return action === "MERGES" && facts.merge !== undefined ? facts.merge.approved : Effect.succeed(true)
          default:
            return Effect.succeed(true)
        }
      }

      const rules = {
        INITIAL_COMMIT: parseSigningRule(section.INITIAL_COMMIT),
        CRUD_ACTIONS: parseSigningRule(section.CRUD_ACTIONS),
        MERGES: parseSigningRule(section.MERGES),
        WIKI: parseSigningRule(section.WIKI)
      } satisfies Record<SigningAction, ReadonlyArray<SigningRule>>

      return CommitSigner.of({
        decide: (action, facts) =>
          Effect.gen(function* () {
            const sign = instance.key?.sign
            if (sign === undefined) return undefined
            for (const rule of rules[action]) {
              if (rule === "never") return undefined
              if (rule === "always") return sign
              if (!(yield* holds(action, rule, facts))) return undefined
            }
            return sign
          }),
        verify,
        verifyCommit
      })
    })
  )
}
