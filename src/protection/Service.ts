// Branch and tag protection (Forgejo's routers/api/v1/repo/branch.go and tag.go for the rules;
// routers/private/hook_pre_receive.go, services/repository/files `VerifyBranchProtection` and
// services/pull/merge.go `CheckPullBranchProtections` for what they enforce). One service answers
// every question about them: the CRUD routes, the push hook (src/git/Hook.ts), the contents and
// branch APIs, the Branch JSON and the pull-request merge (`mergeBlockers`).
import { Context, Effect, Layer, Option } from "effect"
import * as Reader from "../branches/Service.ts"
import * as Git from "../git/Git.ts"
import { GpgRepo } from "../gpg/Repo.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { formatTime } from "../http/Json.ts"
import { atLeast } from "../lib/AccessMode.ts"
import { isGlob } from "../lib/Glob.ts"
import { OrgsRepo, type TeamRow } from "../orgs/Repo.ts"
import { RepoPolicy } from "../repos/Policy.ts"
import type { RepoRow } from "../repos/Repo.ts"
import { requiredContextsState } from "../statuses/Service.ts"
import type { UserRow } from "../users/Repo.ts"
import { UsersRepo } from "../users/Repo.ts"
import type {
  BranchProtection,
  CreateBranchProtectionOption,
  CreateTagProtectionOption,
  EditBranchProtectionOption,
  TagProtection
} from "./Api.ts"
import {
  filePatterns,
  listOrder,
  MergeReasons,
  matchesAny,
  matchRule,
  PushMessages,
  tagPatternMatches,
  validTagPattern
} from "./Policy.ts"
import { type BranchRule, type BranchRuleValues, ProtectionRepo, type TagRule } from "./Repo.ts"

/** A repository as the rules need it. */
export interface RepoOf {
  readonly owner: UserRow
  readonly repo: RepoRow
}

/** Who pushes: an account, or a deploy key (which pushes as nobody in particular). */
export type Pusher = { readonly kind: "user"; readonly user: UserRow } | { readonly kind: "deploy" }

/** One ref a push moves: full ref name, old and new ids (all zeros for none). */
export interface RefChange {
  readonly ref: string
  readonly oldSha: string
  readonly newSha: string
}

/** What the pull-request slice knows about a pull request when it asks whether it may merge. */
export interface MergeFacts {
  readonly doer: UserRow
  /** Approving reviews (§12.7): by whom, whether official (made by a whitelisted reviewer or a writer) and stale. */
  readonly approvals: ReadonlyArray<{ readonly userId: number; readonly official: boolean; readonly stale: boolean }>
  /** The latest status per context of the head commit, read in the base repository. */
  readonly statuses: ReadonlyArray<{ readonly context: string; readonly state: string }>
  /** Whether the head is behind the base (`commits_behind > 0`). */
  readonly outdated: boolean
  /** Any official, non-dismissed REQUEST_CHANGES review. */
  readonly rejected?: boolean | undefined
  /** Any official review request still pending. */
  readonly officialRequests?: boolean | undefined
  /** Protected files the pull request changes (from its last check). */
  readonly changedProtectedFiles?: ReadonlyArray<string> | undefined
}

export interface MergeDecision {
  /** The rule of the base branch, if any. */
  readonly rule: string | undefined
  /** Whether the doer may merge at all (merge whitelist, else code write): else 405 "User not allowed to merge PR". */
  readonly userMayMerge: boolean
  /** What blocks the merge, in Forgejo's order (texts of `CheckPullBranchProtections`). */
  readonly reasons: ReadonlyArray<string>
  /** Whether `force_merge` may override `reasons`: a site admin, or a repository admin when the rule does not `apply_to_admins`. */
  readonly mayForce: boolean
}

/** The 405 message a merge gets (Forgejo's), or none when it may go ahead. */
export const mergeRefusal = (decision: MergeDecision, forceMerge: boolean): string | undefined => {
  if (!decision.userMayMerge) return "User not allowed to merge PR"
  if (decision.reasons.length === 0 || (forceMerge && decision.mayForce)) return undefined
  return `not allowed to merge [reason: ${decision.reasons[0]}]`
}

const principalOf = (user: UserRow): Principal => ({ user, scopes: undefined, method: "password" })
const uniq = <A>(xs: ReadonlyArray<A>) => [...new Set(xs)]
const ZERO = /^0+$/

export class ProtectionService extends Context.Service<
  ProtectionService,
  {
    readonly listBranchRules: (at: RepoOf) => Effect.Effect<Array<BranchProtection>>
    readonly getBranchRule: (at: RepoOf, name: string) => Effect.Effect<BranchProtection, Errors.NotFound>
    readonly createBranchRule: (
      at: RepoOf,
      input: CreateBranchProtectionOption
    ) => Effect.Effect<BranchProtection, Errors.BadRequest | Errors.Forbidden | Errors.ValidationFailed>
    readonly editBranchRule: (
      at: RepoOf,
      name: string,
      input: EditBranchProtectionOption
    ) => Effect.Effect<BranchProtection, Errors.NotFound | Errors.ValidationFailed>
    readonly deleteBranchRule: (at: RepoOf, name: string) => Effect.Effect<void, Errors.NotFound>
    readonly setPriorities: (at: RepoOf, ids: ReadonlyArray<number>) => Effect.Effect<void, Errors.ValidationFailed>
    /** The rules' ids and names in the order they are tried (the web settings page reorders them). */
    readonly branchRuleOrder: (at: RepoOf) => Effect.Effect<Array<{ readonly id: number; readonly ruleName: string }>>
    readonly listTagRules: (at: RepoOf) => Effect.Effect<Array<TagProtection>>
    readonly getTagRule: (at: RepoOf, id: string) => Effect.Effect<TagProtection, Errors.NotFound>
    readonly createTagRule: (
      at: RepoOf,
      input: CreateTagProtectionOption
    ) => Effect.Effect<TagProtection, Errors.BadRequest | Errors.Forbidden | Errors.ValidationFailed>
    readonly editTagRule: (
      at: RepoOf,
      id: string,
      input: CreateTagProtectionOption
    ) => Effect.Effect<TagProtection, Errors.NotFound | Errors.BadRequest | Errors.ValidationFailed>
    readonly deleteTagRule: (at: RepoOf, id: string) => Effect.Effect<void, Errors.NotFound>

    /** The rule covering `branch`, if any. */
    readonly ruleFor: (repoId: number, branch: string) => Effect.Effect<Option.Option<BranchRule>>
    /** For the Branch JSON: each branch's rule and whether `viewer` may push to or merge into it. */
    readonly branchViews: (
      at: RepoOf,
      viewer: UserRow | undefined,
      /** Whether the viewer may write the repository's code (what an unprotected branch allows). */
      canWrite: boolean,
      branches: ReadonlyArray<string>
    ) => Effect.Effect<
      Map<string, { readonly rule: BranchRule | undefined; readonly canPush: boolean; readonly canMerge: boolean }>
    >
    /** The first refusal among a push's ref changes, as the pre-receive hook prints it; none when it may go ahead. */
    readonly checkPush: (
      at: RepoOf,
      pusher: Pusher,
      changes: ReadonlyArray<RefChange>,
      env: Record<string, string>
    ) => Effect.Effect<string | undefined>
    /**
     * A commit through the contents API to `branch` changing `paths` (Forgejo's `VerifyBranchProtection`):
     * 403 when refused. `signed`: whether the instance will sign it ([repository.signing] rules).
     */
    readonly checkCommit: (
      at: RepoOf,
      doer: UserRow,
      branch: string,
      paths: ReadonlyArray<string>,
      signed: boolean
    ) => Effect.Effect<void, Errors.Forbidden>
    /** Deleting or renaming a branch through the branch API: 403 "branch protected" when a rule covers it. */
    readonly checkBranchRemoval: (at: RepoOf, branch: string) => Effect.Effect<void, Errors.Forbidden>
    /** Whether `user` may create, move or delete the tag `tag` (Forgejo's `IsUserAllowedToControlTag`). */
    readonly mayControlTag: (at: RepoOf, user: UserRow | undefined, tag: string) => Effect.Effect<boolean>
    /** What stands between a pull request into `branch` and its merge (Forgejo's `CheckPullBranchProtections`). */
    readonly mergeBlockers: (
      at: RepoOf,
      branch: string,
      facts: MergeFacts,
      /**
       * Facts read only when a rule covers the branch (they matter to a rule alone): a merge into
       * an unprotected branch reads no statuses and no reviews.
       */
      ruled?: Effect.Effect<Partial<Omit<MergeFacts, "doer">>>
    ) => Effect.Effect<MergeDecision>
    /**
     * Whether a review by `user` of a pull request into `branch` is official (Forgejo's
     * `IsOfficialReviewer`): on the rule's approvals whitelist when it has one, else code write.
     */
    readonly isOfficialReviewer: (at: RepoOf, branch: string, user: UserRow) => Effect.Effect<boolean>
    /** The same for a team's review request (Forgejo's `IsOfficialReviewerTeam`): never without a rule. */
    readonly isOfficialReviewerTeam: (at: RepoOf, branch: string, team: TeamRow) => Effect.Effect<boolean>
  }
>()("hearth/protection/ProtectionService") {
  static readonly layer = Layer.effect(
    ProtectionService,
    Effect.gen(function* () {
      const repo = yield* ProtectionRepo
      const users = yield* UsersRepo
      const orgs = yield* OrgsRepo
      const policy = yield* RepoPolicy
      const gpg = yield* GpgRepo

      const accessOf = (at: RepoOf, user: UserRow) => policy.access(principalOf(user), at.repo, at.owner)
      const canWriteCode = (at: RepoOf, user: UserRow) =>
        Effect.map(accessOf(at, user), (a) => atLeast(a.code, "write"))
      const canReadCode = (at: RepoOf, user: UserRow) => Effect.map(accessOf(at, user), (a) => atLeast(a.code, "read"))

      /** The organisation's teams that can read the repository (Forgejo's `GetTeamsWithAccessToRepo`). */
      const teamHasAccess = (at: RepoOf, teamId: number) =>
        Effect.gen(function* () {
          const team = yield* orgs.findTeam(teamId)
          if (Option.isNone(team) || team.value.orgId !== at.owner.id) return false
          if (team.value.includesAllRepositories || team.value.permission === "owner") return true
          return (yield* orgs.teamRepoIds(teamId)).has(at.repo.id)
        })

      const inWhitelist = (userIds: ReadonlyArray<number>, teamIds: ReadonlyArray<number>, user: UserRow) =>
        Effect.gen(function* () {
          if (userIds.includes(user.id)) return true
          for (const teamId of teamIds) if (yield* orgs.isTeamMember(teamId, user.id)) return true
          return false
        })

      /** Forgejo's `CanUserPush`. */
      const canUserPush = (at: RepoOf, rule: BranchRule, user: UserRow) =>
        Effect.gen(function* () {
          if (!rule.enablePush) return false
          if (!rule.enablePushWhitelist) return yield* canWriteCode(at, user)
          return yield* inWhitelist(rule.pushWhitelistUserIds, rule.pushWhitelistTeamIds, user)
        })

      /** Forgejo's `IsUserMergeWhitelisted`. */
      const mayMerge = (at: RepoOf, rule: BranchRule, user: UserRow) =>
        rule.enableMergeWhitelist
          ? inWhitelist(rule.mergeWhitelistUserIds, rule.mergeWhitelistTeamIds, user)
          : canWriteCode(at, user)

      // ---- The rules as JSON

      /** Names of the users (of `ids`) who can still read the repository, and likewise teams. */
      const userNames = (at: RepoOf, ids: ReadonlyArray<number>) =>
        Effect.gen(function* () {
          const found = yield* users.findByIds(ids)
          const names: Array<string> = []
          for (const id of ids) {
            const user = found.get(id)
            if (user !== undefined && (yield* canReadCode(at, user))) names.push(user.name)
          }
          return names
        })
      const teamNames = (at: RepoOf, ids: ReadonlyArray<number>) =>
        Effect.gen(function* () {
          const names: Array<string> = []
          for (const id of ids) {
            const team = yield* orgs.findTeam(id)
            if (Option.isSome(team) && (yield* teamHasAccess(at, id))) names.push(team.value.name)
          }
          return names
        })

      const toJson = (at: RepoOf, r: BranchRule) =>
        Effect.gen(function* () {
          return {
            branch_name: isGlob(r.ruleName) ? "" : r.ruleName,
            rule_name: r.ruleName,
            enable_push: r.enablePush,
            enable_push_whitelist: r.enablePushWhitelist,
            push_whitelist_usernames: yield* userNames(at, r.pushWhitelistUserIds),
            push_whitelist_teams: yield* teamNames(at, r.pushWhitelistTeamIds),
            push_whitelist_deploy_keys: r.pushWhitelistDeployKeys,
            enable_merge_whitelist: r.enableMergeWhitelist,
            merge_whitelist_usernames: yield* userNames(at, r.mergeWhitelistUserIds),
            merge_whitelist_teams: yield* teamNames(at, r.mergeWhitelistTeamIds),
            enable_status_check: r.enableStatusCheck,
            status_check_contexts: r.statusCheckContexts === null ? null : [...r.statusCheckContexts],
            required_approvals: r.requiredApprovals,
            enable_approvals_whitelist: r.enableApprovalsWhitelist,
            approvals_whitelist_username: yield* userNames(at, r.approvalsWhitelistUserIds),
            approvals_whitelist_teams: yield* teamNames(at, r.approvalsWhitelistTeamIds),
            block_on_rejected_reviews: r.blockOnRejectedReviews,
            block_on_official_review_requests: r.blockOnOfficialReviewRequests,
            block_on_outdated_branch: r.blockOnOutdatedBranch,
            dismiss_stale_approvals: r.dismissStaleApprovals,
            ignore_stale_approvals: r.ignoreStaleApprovals,
            require_signed_commits: r.requireSignedCommits,
            protected_file_patterns: r.protectedFilePatterns,
            unprotected_file_patterns: r.unprotectedFilePatterns,
            apply_to_admins: r.applyToAdmins,
            created_at: formatTime(r.createdAt),
            updated_at: formatTime(r.updatedAt)
          } satisfies BranchProtection
        })

      const tagJson = (at: RepoOf, r: TagRule) =>
        Effect.gen(function* () {
          return {
            id: r.id,
            name_pattern: r.namePattern,
            whitelist_usernames: yield* userNames(at, r.whitelistUserIds),
            whitelist_teams: yield* teamNames(at, r.whitelistTeamIds),
            created_at: formatTime(r.createdAt),
            updated_at: formatTime(r.updatedAt)
          } satisfies TagProtection
        })

      // ---- Whitelists as sent: names to ids, refused when unknown, silently dropped without access.

      /** User ids of `names` (422 for an unknown one), keeping those `keep` accepts (Forgejo drops the others silently). */
      const userIdsOf = (at: RepoOf, names: ReadonlyArray<string>, keep: "write" | "read") =>
        Effect.gen(function* () {
          const ids: Array<number> = []
          for (const name of uniq(names)) {
            const user = yield* users.findByName(name)
            if (Option.isNone(user) || user.value.type !== "user")
              return yield* Errors.validationFailed(`user does not exist [uid: 0, name: ${name}]`)
            const ok = keep === "write" ? yield* canWriteCode(at, user.value) : yield* canReadCode(at, user.value)
            if (ok) ids.push(user.value.id)
          }
          return ids
        })
      /** Team ids of `names` in the owning organisation (none for a user's repository). */
      const teamIdsOf = (at: RepoOf, names: ReadonlyArray<string>) =>
        Effect.gen(function* () {
          if (at.owner.type !== "organization") return []
          const ids: Array<number> = []
          for (const name of uniq(names)) {
            const team = yield* orgs.findTeamByName(at.owner.id, name)
            if (Option.isNone(team))
              return yield* Errors.validationFailed(
                `team does not exist [org_id ${at.owner.id}, team_id 0, name: ${name}]`
              )
            if (yield* teamHasAccess(at, team.value.id)) ids.push(team.value.id)
          }
          return ids
        })

      const EMPTY: BranchRuleValues = {
        enablePush: false,
        enablePushWhitelist: false,
        pushWhitelistUserIds: [],
        pushWhitelistTeamIds: [],
        pushWhitelistDeployKeys: false,
        enableMergeWhitelist: false,
        mergeWhitelistUserIds: [],
        mergeWhitelistTeamIds: [],
        enableStatusCheck: false,
        statusCheckContexts: null,
        requiredApprovals: 0,
        enableApprovalsWhitelist: false,
        approvalsWhitelistUserIds: [],
        approvalsWhitelistTeamIds: [],
        blockOnRejectedReviews: false,
        blockOnOfficialReviewRequests: false,
        blockOnOutdatedBranch: false,
        dismissStaleApprovals: false,
        ignoreStaleApprovals: false,
        requireSignedCommits: false,
        protectedFilePatterns: "",
        unprotectedFilePatterns: "",
        applyToAdmins: false
      }

      /**
       * The stored values after `input` (create: over EMPTY; edit: over the rule), with Forgejo's
       * rules: the push whitelist only with `enable_push`, deploy keys only with both; a negative
       * `required_approvals` is 0 on create and ignored on edit; absent lists keep their value.
       */
      const applyInput = (at: RepoOf, base: BranchRuleValues, input: EditBranchProtectionOption, creating: boolean) =>
        Effect.gen(function* () {
          const v: { -readonly [K in keyof BranchRuleValues]: BranchRuleValues[K] } = { ...base }
          const flag = (value: boolean | null | undefined, current: boolean) => value ?? current
          if (creating) {
            v.enablePush = input.enable_push ?? false
            v.enablePushWhitelist = v.enablePush && (input.enable_push_whitelist ?? false)
            v.pushWhitelistDeployKeys = v.enablePushWhitelist && (input.push_whitelist_deploy_keys ?? false)
          } else if (input.enable_push !== undefined && input.enable_push !== null) {
            v.enablePush = input.enable_push
            if (!input.enable_push) {
              v.enablePushWhitelist = false
              v.pushWhitelistDeployKeys = false
            } else {
              // Forgejo's quirk: the whitelist flags are read only when `enable_push` is sent too.
              if (input.enable_push_whitelist !== undefined && input.enable_push_whitelist !== null) {
                v.enablePushWhitelist = input.enable_push_whitelist
                v.pushWhitelistDeployKeys = input.enable_push_whitelist
                  ? (input.push_whitelist_deploy_keys ?? v.pushWhitelistDeployKeys)
                  : false
              }
            }
          }
          const approvals = input.required_approvals
          if (approvals !== undefined && approvals !== null) {
            if (!Number.isInteger(approvals))
              return yield* Errors.validationFailed("[RequiredApprovals]: must be an integer")
            if (approvals >= 0) v.requiredApprovals = approvals
            else if (creating) v.requiredApprovals = 0
          }
          v.enableMergeWhitelist = flag(input.enable_merge_whitelist, v.enableMergeWhitelist)
          v.enableStatusCheck = flag(input.enable_status_check, v.enableStatusCheck)
          v.enableApprovalsWhitelist = flag(input.enable_approvals_whitelist, v.enableApprovalsWhitelist)
          v.blockOnRejectedReviews = flag(input.block_on_rejected_reviews, v.blockOnRejectedReviews)
          v.blockOnOfficialReviewRequests = flag(
            input.block_on_official_review_requests,
            v.blockOnOfficialReviewRequests
          )
          v.blockOnOutdatedBranch = flag(input.block_on_outdated_branch, v.blockOnOutdatedBranch)
          v.dismissStaleApprovals = flag(input.dismiss_stale_approvals, v.dismissStaleApprovals)
          v.ignoreStaleApprovals = flag(input.ignore_stale_approvals, v.ignoreStaleApprovals)
          v.requireSignedCommits = flag(input.require_signed_commits, v.requireSignedCommits)
          v.applyToAdmins = flag(input.apply_to_admins, v.applyToAdmins)
          if (input.protected_file_patterns != null) v.protectedFilePatterns = input.protected_file_patterns
          if (input.unprotected_file_patterns != null) v.unprotectedFilePatterns = input.unprotected_file_patterns
          if (input.status_check_contexts != null) v.statusCheckContexts = [...input.status_check_contexts]
          if (input.push_whitelist_usernames != null)
            v.pushWhitelistUserIds = yield* userIdsOf(at, input.push_whitelist_usernames, "write")
          if (input.merge_whitelist_usernames != null)
            v.mergeWhitelistUserIds = yield* userIdsOf(at, input.merge_whitelist_usernames, "write")
          if (input.approvals_whitelist_username != null)
            v.approvalsWhitelistUserIds = yield* userIdsOf(at, input.approvals_whitelist_username, "read")
          if (input.push_whitelist_teams != null)
            v.pushWhitelistTeamIds = yield* teamIdsOf(at, input.push_whitelist_teams)
          if (input.merge_whitelist_teams != null)
            v.mergeWhitelistTeamIds = yield* teamIdsOf(at, input.merge_whitelist_teams)
          if (input.approvals_whitelist_teams != null)
            v.approvalsWhitelistTeamIds = yield* teamIdsOf(at, input.approvals_whitelist_teams)
          return v as BranchRuleValues
        })

      const tagRuleOf = (at: RepoOf, id: string) =>
        Effect.gen(function* () {
          if (!/^\d{1,15}$/.test(id)) return yield* Errors.notFound()
          const found = yield* repo.tagRule(at.repo.id, Number(id))
          if (Option.isNone(found)) return yield* Errors.notFound()
          return found.value
        })

      const tagPattern = (raw: string | null | undefined) =>
        Effect.gen(function* () {
          const pattern = (raw ?? "").trim()
          if (pattern === "") return yield* Errors.badRequest("name_pattern are empty")
          if (!validTagPattern(pattern)) return yield* Errors.badRequest("name_pattern is invalid")
          return pattern
        })

      // ---- Enforcement

      const ruleFor = (repoId: number, branch: string) =>
        Effect.map(repo.branchRules(repoId), (rules) => Option.fromNullishOr(matchRule(rules, branch)))

      const git = (path: string, args: ReadonlyArray<string>, env: Record<string, string>) =>
        Effect.orDie(Git.inRepo(path, args, { env }))

      /** Paths changed between two commits (lower-cased comparisons happen in the matchers). */
      const changedPaths = (path: string, oldSha: string, newSha: string, env: Record<string, string>) =>
        Effect.map(git(path, ["diff", "--name-only", "-z", "--no-renames", oldSha, newSha, "--"], env), (r) =>
          r.stdout
            .toString("utf8")
            .split("\0")
            .filter((p) => p !== "")
        )

      /** Whether `sha` verifies with one of `user`'s GPG keys. */
      const verifiedBy = (signatureOf: (sha: string) => Reader.CommitSignature | undefined, user: UserRow) =>
        Effect.gen(function* () {
          const imports = yield* gpg.importsOf(user.id)
          if (imports.length === 0) return (_sha: string) => Effect.succeed(false)
          const k = yield* Effect.promise(() => import("../gpg/Keys.ts"))
          const keys = yield* Effect.promise(() => Promise.all(imports.map(k.readArmoredKeys)).then((a) => a.flat()))
          return (sha: string) => {
            const signed = signatureOf(sha)
            if (signed === undefined) return Effect.succeed(false)
            return Effect.promise(() =>
              k.findSigner(keys, signed.signature, [signed.payload]).then((found) => found !== undefined)
            )
          }
        })

      const checkBranch = (
        at: RepoOf,
        path: string,
        rules: ReadonlyArray<BranchRule>,
        pusher: Pusher,
        change: RefChange,
        branch: string,
        env: Record<string, string>
      ) =>
        Effect.gen(function* () {
          const deleting = ZERO.test(change.newSha)
          const creating = ZERO.test(change.oldSha)
          if (deleting && branch === at.repo.defaultBranch) return PushMessages.defaultBranchDeleted(branch)
          const rule = matchRule(rules, branch)
          if (rule === undefined) return undefined
          if (deleting) return PushMessages.deletion(branch)
          if (!creating) {
            const ancestor = yield* Effect.orDie(
              Git.inRepo(path, ["merge-base", "--is-ancestor", change.oldSha, change.newSha], {
                env,
                answerCodes: [1]
              })
            )
            if (ancestor.exitCode !== 0) return PushMessages.forcePush(branch)
          }
          if (rule.requireSignedCommits) {
            const range = creating ? [change.newSha, "--not", "--all"] : [`${change.oldSha}..${change.newSha}`]
            const shas = (yield* git(path, ["rev-list", ...range], env)).stdout
              .toString("utf8")
              .split("\n")
              .filter((s) => s !== "")
            const signatures = yield* readSignatures(path, shas, env)
            const verify =
              pusher.kind === "user"
                ? yield* verifiedBy((sha) => signatures.get(sha), pusher.user)
                : (_sha: string) => Effect.succeed(false)
            for (const sha of shas) if (!(yield* verify(sha))) return PushMessages.unverified(branch, sha)
          }
          // The changed files are read only when a pattern needs them (one git process fewer per push otherwise).
          let changedFiles: Array<string> | undefined
          const changed = Effect.suspend(() =>
            changedFiles !== undefined || creating
              ? Effect.succeed(changedFiles ?? [])
              : Effect.map(changedPaths(path, change.oldSha, change.newSha, env), (paths) => {
                  changedFiles = paths
                  return paths
                })
          )
          const protectedGlobs = filePatterns(rule.protectedFilePatterns)
          const protectedFile =
            protectedGlobs.length === 0 ? undefined : (yield* changed).find((p) => matchesAny(protectedGlobs, p))
          const allowed =
            protectedFile === undefined &&
            (pusher.kind === "deploy"
              ? rule.enablePush && (!rule.enablePushWhitelist || rule.pushWhitelistDeployKeys)
              : yield* canUserPush(at, rule, pusher.user))
          if (allowed) return undefined
          if (protectedFile !== undefined) return PushMessages.protectedFile(branch, protectedFile.toLowerCase())
          const unprotected = filePatterns(rule.unprotectedFilePatterns)
          if (unprotected.length > 0) {
            const paths = yield* changed
            if (paths.length > 0 && paths.every((p) => matchesAny(unprotected, p))) return undefined
          }
          return PushMessages.notAllowed(branch)
        })

      /** The signatures of `shas`, read with the push's objects (`git cat-file --batch`). */
      const readSignatures = (path: string, shas: ReadonlyArray<string>, env: Record<string, string>) =>
        Effect.gen(function* () {
          const result = new Map<string, Reader.CommitSignature>()
          if (shas.length === 0) return result
          const out = (yield* Effect.orDie(
            Git.inRepo(path, ["cat-file", "--batch"], { env, input: `${shas.join("\n")}\n` })
          )).stdout
          let at = 0
          while (at < out.length) {
            const eol = out.indexOf(10, at)
            if (eol < 0) break
            const [sha, type, size] = out.subarray(at, eol).toString("utf8").split(" ")
            if (size === undefined) {
              at = eol + 1
              continue
            }
            const length = Number(size)
            const object = out.subarray(eol + 1, eol + 1 + length)
            at = eol + 1 + length + 1
            if (type !== "commit") continue
            const signature = Reader.splitSignature(object.toString("utf8"))
            if (signature !== undefined) result.set(sha!, signature)
          }
          return result
        })

      const mayControlTag = (at: RepoOf, user: UserRow | undefined, tag: string) =>
        Effect.gen(function* () {
          const rules = yield* repo.tagRules(at.repo.id)
          let allowed = true
          for (const rule of rules) {
            if (!tagPatternMatches(rule, tag)) continue
            allowed = user !== undefined && (yield* inWhitelist(rule.whitelistUserIds, rule.whitelistTeamIds, user))
            if (allowed) break
          }
          return allowed
        })

      return ProtectionService.of({
        listBranchRules: (at) =>
          Effect.flatMap(repo.branchRules(at.repo.id), (rules) =>
            Effect.forEach(listOrder(rules), (r) => toJson(at, r))
          ),
        getBranchRule: (at, name) =>
          Effect.gen(function* () {
            const found = yield* repo.branchRule(at.repo.id, name)
            if (Option.isNone(found)) return yield* Errors.notFound()
            return yield* toJson(at, found.value)
          }),
        createBranchRule: (at, input) =>
          Effect.gen(function* () {
            const name = (input.rule_name ?? "") !== "" ? input.rule_name! : (input.branch_name ?? "")
            if (name === "") return yield* Errors.badRequest("both rule_name and branch_name are empty")
            // Forgejo's column is a VARCHAR(255) (there a longer name is a database error, a 500).
            if (name.length > 255) return yield* Errors.validationFailed("[RuleName]: MaxSize (255)")
            if (Option.isSome(yield* repo.branchRule(at.repo.id, name)))
              return yield* Errors.forbidden("Branch protection already exist")
            const values = yield* applyInput(at, EMPTY, input, true)
            const inserted = yield* repo.insertBranchRule(at.repo.id, name, values)
            if (Option.isNone(inserted)) return yield* Errors.forbidden("Branch protection already exist")
            return yield* toJson(at, inserted.value)
          }),
        editBranchRule: (at, name, input) =>
          Effect.gen(function* () {
            const found = yield* repo.branchRule(at.repo.id, name)
            if (Option.isNone(found)) return yield* Errors.notFound()
            const values = yield* applyInput(at, found.value, input, false)
            return yield* toJson(at, yield* repo.updateBranchRule(found.value.id, values))
          }),
        deleteBranchRule: (at, name) =>
          Effect.gen(function* () {
            if (!(yield* repo.deleteBranchRule(at.repo.id, name))) return yield* Errors.notFound()
          }),
        setPriorities: (at, ids) =>
          Effect.gen(function* () {
            const known = new Set((yield* repo.branchRules(at.repo.id)).map((r) => r.id))
            const unknown = ids.find((id) => !known.has(id))
            if (unknown !== undefined)
              return yield* Errors.validationFailed(`branch protection rule ${unknown} is not one of this repository's`)
            if (uniq(ids).length !== ids.length) return yield* Errors.validationFailed("[IDs]: each rule at most once")
            yield* repo.setPriorities(at.repo.id, ids)
          }),
        branchRuleOrder: (at) =>
          Effect.map(repo.branchRules(at.repo.id), (rules) =>
            listOrder(rules).map((r) => ({ id: r.id, ruleName: r.ruleName }))
          ),
        listTagRules: (at) =>
          Effect.flatMap(repo.tagRules(at.repo.id), (rules) => Effect.forEach(rules, (r) => tagJson(at, r))),
        getTagRule: (at, id) => Effect.flatMap(tagRuleOf(at, id), (r) => tagJson(at, r)),
        createTagRule: (at, input) =>
          Effect.gen(function* () {
            const namePattern = yield* tagPattern(input.name_pattern)
            if ((yield* repo.tagRules(at.repo.id)).some((r) => r.namePattern === namePattern))
              return yield* Errors.forbidden("Tag protection already exist")
            const whitelistUserIds = yield* userIdsOf(at, input.whitelist_usernames ?? [], "read")
            const whitelistTeamIds = yield* teamIdsOf(at, input.whitelist_teams ?? [])
            const rule = yield* repo.insertTagRule(at.repo.id, { namePattern, whitelistUserIds, whitelistTeamIds })
            return yield* tagJson(at, rule)
          }),
        editTagRule: (at, id, input) =>
          Effect.gen(function* () {
            const rule = yield* tagRuleOf(at, id)
            const namePattern =
              input.name_pattern == null || input.name_pattern.trim() === ""
                ? rule.namePattern
                : yield* tagPattern(input.name_pattern)
            const whitelistUserIds =
              input.whitelist_usernames == null
                ? rule.whitelistUserIds
                : yield* userIdsOf(at, input.whitelist_usernames, "read")
            const whitelistTeamIds =
              input.whitelist_teams == null ? rule.whitelistTeamIds : yield* teamIdsOf(at, input.whitelist_teams)
            const updated = yield* repo.updateTagRule(rule.id, { namePattern, whitelistUserIds, whitelistTeamIds })
            return yield* tagJson(at, updated)
          }),
        deleteTagRule: (at, id) =>
          Effect.gen(function* () {
            const rule = yield* tagRuleOf(at, id)
            yield* repo.deleteTagRule(at.repo.id, rule.id)
          }),

        ruleFor,
        branchViews: (at, viewer, canWrite, branches) =>
          Effect.gen(function* () {
            const rules = yield* repo.branchRules(at.repo.id)
            const views = new Map<string, { rule: BranchRule | undefined; canPush: boolean; canMerge: boolean }>()
            for (const name of branches) {
              const rule = matchRule(rules, name)
              if (rule === undefined || viewer === undefined) {
                views.set(name, { rule, canPush: canWrite, canMerge: canWrite })
                continue
              }
              views.set(name, {
                rule,
                canPush: yield* canUserPush(at, rule, viewer),
                canMerge: yield* mayMerge(at, rule, viewer)
              })
            }
            return views
          }),
        checkPush: (at, pusher, changes, env) =>
          Effect.gen(function* () {
            const path = env.GIT_DIR ?? ""
            const branchRules = yield* repo.branchRules(at.repo.id)
            for (const change of changes) {
              if (change.ref.startsWith("refs/heads/")) {
                const branch = change.ref.slice("refs/heads/".length)
                const refused = yield* checkBranch(at, path, branchRules, pusher, change, branch, env)
                if (refused !== undefined) return refused
              } else if (change.ref.startsWith("refs/tags/")) {
                const tag = change.ref.slice("refs/tags/".length)
                const user = pusher.kind === "user" ? pusher.user : undefined
                if (!(yield* mayControlTag(at, user, tag))) return PushMessages.tag(tag)
              }
            }
            return undefined
          }),
        checkCommit: (at, doer, branch, paths, signed) =>
          Effect.gen(function* () {
            const rule = yield* ruleFor(at.repo.id, branch)
            if (Option.isNone(rule)) return
            const unprotected = filePatterns(rule.value.unprotectedFilePatterns)
            const onlyUnprotected =
              unprotected.length > 0 && paths.length > 0 && paths.every((p) => matchesAny(unprotected, p))
            const cannotCommit = Errors.forbidden(`user cannot commit to repo [user: ${doer.lowerName}]`)
            if (!onlyUnprotected && !(yield* canUserPush(at, rule.value, doer))) return yield* cannotCommit
            // A rule that requires signed commits takes the commit only if the instance signs it
            // (Forgejo's CanCommitToBranch: SignCRUDAction answering ErrWontSign refuses).
            if (rule.value.requireSignedCommits && !signed) return yield* cannotCommit
            const globs = filePatterns(rule.value.protectedFilePatterns)
            const hit = paths.find((p) => matchesAny(globs, p))
            if (hit !== undefined)
              return yield* Errors.forbidden(`path is protected and can not be changed [path: ${hit}]`)
          }),
        checkBranchRemoval: (at, branch) =>
          Effect.gen(function* () {
            if (Option.isSome(yield* ruleFor(at.repo.id, branch))) return yield* Errors.forbidden("branch protected")
          }),
        mayControlTag,
        isOfficialReviewer: (at, branch, user) =>
          Effect.gen(function* () {
            const rule = yield* ruleFor(at.repo.id, branch)
            if (Option.isNone(rule) || !rule.value.enableApprovalsWhitelist) return yield* canWriteCode(at, user)
            return yield* inWhitelist(rule.value.approvalsWhitelistUserIds, rule.value.approvalsWhitelistTeamIds, user)
          }),
        isOfficialReviewerTeam: (at, branch, team) =>
          Effect.gen(function* () {
            const rule = yield* ruleFor(at.repo.id, branch)
            if (Option.isNone(rule)) return false
            if (rule.value.enableApprovalsWhitelist) return rule.value.approvalsWhitelistTeamIds.includes(team.id)
            const level = ["admin", "owner"].includes(team.permission)
              ? team.permission
              : (team.units["repo.code"] ?? "none")
            return atLeast(level, "write")
          }),
        mergeBlockers: (at, branch, given, ruled) =>
          Effect.gen(function* () {
            const found = yield* ruleFor(at.repo.id, branch)
            const access = yield* accessOf(at, given.doer)
            if (Option.isNone(found))
              return { rule: undefined, userMayMerge: atLeast(access.code, "write"), reasons: [], mayForce: true }
            const rule = found.value
            const facts: MergeFacts = ruled === undefined ? given : { ...given, ...(yield* ruled) }
            const reasons: Array<string> = []
            if (
              rule.enableStatusCheck &&
              requiredContextsState(facts.statuses, rule.statusCheckContexts ?? []) !== "success"
            )
              reasons.push(MergeReasons.statuses)
            let granted = 0
            for (const approval of facts.approvals) {
              if (!approval.official || (rule.ignoreStaleApprovals && approval.stale)) continue
              if (rule.enableApprovalsWhitelist) {
                const who = (yield* users.findByIds([approval.userId])).get(approval.userId)
                if (
                  who === undefined ||
                  !(yield* inWhitelist(rule.approvalsWhitelistUserIds, rule.approvalsWhitelistTeamIds, who))
                )
                  continue
              }
              granted += 1
            }
            if (granted < rule.requiredApprovals) reasons.push(MergeReasons.approvals)
            if (rule.blockOnRejectedReviews && facts.rejected === true) reasons.push(MergeReasons.rejected)
            if (rule.blockOnOfficialReviewRequests && facts.officialRequests === true)
              reasons.push(MergeReasons.officialRequests)
            if (rule.blockOnOutdatedBranch && facts.outdated) reasons.push(MergeReasons.outdated)
            if ((facts.changedProtectedFiles ?? []).length > 0) reasons.push(MergeReasons.protectedFiles)
            const isRepoAdmin = atLeast(access.mode, "admin")
            return {
              rule: rule.ruleName,
              userMayMerge: yield* mayMerge(at, rule, facts.doer),
              reasons,
              mayForce: facts.doer.isAdmin || (isRepoAdmin && !rule.applyToAdmins)
            }
          })
      })
    })
  )
}
