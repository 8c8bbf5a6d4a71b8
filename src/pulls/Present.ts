// Pull requests as the API shows them (Forgejo's services/convert/pull.go `ToAPIPullRequest`;
// CONTRACT-PULLS §3.1, §3.2): the issue's members come from the issue presenter, the rest from the
// pull request's row and its repositories' git data.
import { Context, Effect, Layer, Option } from "effect"
import { Settings } from "../config/Settings.ts"
import * as Git from "../git/Git.ts"
import * as Merge from "../git/Merge.ts"
import { readRefs } from "../git/RefFiles.ts"
import type { Principal } from "../http/Caller.ts"
import { formatTime, SharedJson } from "../http/Json.ts"
import { isWorkInProgress, makePresenter } from "../issues/Present.ts"
import type { Issue } from "../issues/Schema.ts"
import { atLeast } from "../lib/AccessMode.ts"
import { OrgsRepo, type TeamRow } from "../orgs/Repo.ts"
import { toApiTeam } from "../orgs/Schema.ts"
import { type RepoAccess, RepoPolicy } from "../repos/Policy.ts"
import { RepoPresenter } from "../repos/Present.ts"
import type { Repository } from "../repos/Schema.ts"
import { ReviewsRepo } from "../reviews/Repo.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { toApiUser } from "../users/Schema.ts"
import { PullStatus } from "./Repo.ts"
import type { PRBranchInfo, PullRequest } from "./Schema.ts"
import { type Loaded, pullRef, type Side } from "./Service.ts"

/**
 * Where each of `refs` (full names) points; absent refs are missing from the map. Read from the
 * repository's files (no process: a read of a page starts no git), else in one `git for-each-ref`,
 * where a pattern also matches the refs below it (`refs/heads/a` matches `refs/heads/a/b`), so
 * only exact names are kept; branch names cannot hold glob characters (`git check-ref-format`).
 */
const refTips = (path: string, refs: ReadonlyArray<string>) =>
  Effect.suspend(() => {
    const read = readRefs(path, refs)
    return read !== undefined ? Effect.succeed(read) : refTipsByGit(path, refs)
  })

const refTipsByGit = (path: string, refs: ReadonlyArray<string>) =>
  Effect.map(
    Effect.orDie(Git.inRepo(path, ["for-each-ref", "--format=%(objectname) %(refname)", "--", ...refs])),
    (result) => {
      const asked = new Set(refs)
      const found = new Map<string, string>()
      for (const line of result.stdout.toString("utf8").split("\n")) {
        const space = line.indexOf(" ")
        const ref = line.slice(space + 1)
        if (space > 0 && asked.has(ref)) found.set(ref, line.slice(0, space))
      }
      return found
    }
  )

/**
 * Pull requests as an answer: each repository's JSON (under every base and head) written once and
 * copied (`SharedJson`).
 */
export const respondPulls = (value: PullRequest | ReadonlyArray<PullRequest>, status = 200) => {
  const shared = new SharedJson()
  const repo = (json: Repository | null) => (json === null ? null : shared.ref(json))
  const light = (pull: PullRequest): PullRequest => ({
    ...pull,
    base: { ...pull.base, repo: repo(pull.base.repo) },
    head: { ...pull.head, repo: repo(pull.head.repo) }
  })
  return shared.respond(Array.isArray(value) ? value.map(light) : light(value as PullRequest), status)
}

/** Forgejo's `mergeable`: not while checking, conflicting or failed, nor for a work-in-progress title. */
export const isMergeable = (loaded: Loaded) =>
  ![PullStatus.checking, PullStatus.conflict, PullStatus.error].includes(loaded.pull.status as 0 | 1 | 4) &&
  !isWorkInProgress(loaded.issue.title)

export class PullPresenter extends Context.Service<
  PullPresenter,
  {
    readonly present: (viewer: Principal | undefined, rows: ReadonlyArray<Loaded>) => Effect.Effect<Array<PullRequest>>
  }
>()("hearth/pulls/PullPresenter") {
  static readonly layer = Layer.effect(
    PullPresenter,
    Effect.gen(function* () {
      const settings = yield* Settings
      const issuePresenter = yield* makePresenter(settings)
      const repoPresenter = yield* RepoPresenter
      const policy = yield* RepoPolicy
      const users = yield* UsersRepo
      const reviews = yield* ReviewsRepo
      const orgs = yield* OrgsRepo

      const resolve = (path: string, ref: string) =>
        Effect.map(Effect.orDie(Git.revParse(path, ref)), Option.getOrUndefined)

      const one = (
        viewer: Principal | undefined,
        loaded: Loaded,
        issueJson: Issue,
        repoOf: (side: Side) => Effect.Effect<{ readonly access: RepoAccess; readonly json: Repository }>,
        tipOf: (path: string, ref: string) => Effect.Effect<string | undefined>,
        review: {
          readonly reviewers: ReadonlyArray<UserRow>
          readonly teams: ReadonlyArray<TeamRow>
          readonly comments: number
        }
      ) =>
        Effect.gen(function* () {
          const { pull, issue, base, head } = loaded
          const { json: baseRepo } = yield* repoOf(base)
          const baseSha = (yield* tipOf(base.path, `refs/heads/${pull.baseBranch}`)) ?? ""
          const pulledSha = (yield* tipOf(base.path, pullRef(issue.index))) ?? pull.headSha
          let headInfo: PRBranchInfo
          if (head === undefined) {
            headInfo = { label: pull.headBranch, ref: pullRef(issue.index), sha: pulledSha, repo_id: -1, repo: null }
          } else if (pull.flow === 1) {
            // AGit: no branch, only the ref (CONTRACT-PULLS §3.2).
            headInfo = { label: "", ref: pullRef(issue.index), sha: pulledSha, repo_id: base.repo.id, repo: baseRepo }
          } else {
            const headRepo = yield* repoOf(head)
            const branchSha = yield* tipOf(head.path, `refs/heads/${pull.headBranch}`)
            headInfo = {
              label: pull.headBranch,
              ref: branchSha === undefined ? pullRef(issue.index) : pull.headBranch,
              sha: branchSha ?? pulledSha,
              repo_id: head.repo.id,
              // A head repository the viewer may not read is not shown.
              repo: atLeast(headRepo.access.mode, "read") ? headRepo.json : null
            }
          }
          const stat =
            // Forgejo counts them for normal-flow pull requests only.
            head !== undefined && pull.flow === 0 && pull.mergeBase !== "" && pulledSha !== ""
              ? pull.stats.mergeBase === pull.mergeBase && pull.stats.headSha === pulledSha
                ? pull.stats
                : // Not counted yet for these commits (the check is queued): counted here, as Forgejo does.
                  yield* Merge.shortStat(base.path, pull.mergeBase, pulledSha)
              : { files: 0, additions: 0, deletions: 0 }
          const mergedBy =
            pull.hasMerged && pull.mergedBy !== null
              ? Option.getOrUndefined(yield* users.findById(pull.mergedBy))
              : undefined
          const html = issueJson.html_url
          return {
            id: pull.id,
            url: html,
            number: issue.index,
            user: issueJson.user,
            title: issue.title,
            body: issue.body,
            labels: issueJson.labels,
            milestone: issueJson.milestone,
            assignee: issueJson.assignee,
            assignees: issueJson.assignees,
            // Users as an anonymous viewer sees them, teams without their organization (Forgejo).
            requested_reviewers: review.reviewers.map((u) => toApiUser(settings, u, undefined)),
            requested_reviewers_teams: review.teams.map((t) => toApiTeam(t, null)),
            state: issueJson.state,
            draft: isWorkInProgress(issue.title),
            is_locked: issue.isLocked,
            comments: issueJson.comments,
            review_comments: review.comments,
            additions: stat.additions,
            deletions: stat.deletions,
            changed_files: stat.files,
            html_url: html,
            diff_url: `${html}.diff`,
            patch_url: `${html}.patch`,
            mergeable: isMergeable(loaded),
            merged: pull.hasMerged,
            merged_at: pull.hasMerged && pull.mergedAt !== null ? formatTime(pull.mergedAt) : null,
            merge_commit_sha: pull.hasMerged ? pull.mergeCommitSha : null,
            merged_by: mergedBy === undefined ? null : toApiUser(settings, mergedBy, viewer),
            allow_maintainer_edit: pull.allowMaintainerEdit,
            base: {
              label: pull.baseBranch,
              ref: pull.baseBranch,
              sha: baseSha,
              repo_id: base.repo.id,
              repo: baseRepo
            },
            head: headInfo,
            merge_base: pull.mergeBase,
            due_date: issueJson.due_date,
            created_at: issueJson.created_at,
            updated_at: issueJson.updated_at,
            closed_at: issueJson.closed_at,
            pin_order: issue.pinOrder,
            flow: pull.flow
          } satisfies PullRequest
        })

      /**
       * One page of pull requests: the issues' members in one batch, each repository and branch tip
       * read once however many pull requests share it.
       */
      const present = (viewer: Principal | undefined, rows: ReadonlyArray<Loaded>) =>
        Effect.gen(function* () {
          if (rows.length === 0) return []
          const repoJsons = new Map<number, { readonly access: RepoAccess; readonly json: Repository }>()
          const repoOf = (side: Side) =>
            Effect.gen(function* () {
              const known = repoJsons.get(side.repo.id)
              if (known !== undefined) return known
              const access = yield* policy.access(viewer, side.repo, side.owner)
              const made = { access, json: yield* repoPresenter.one(viewer, { ...side, access }) }
              repoJsons.set(side.repo.id, made)
              return made
            })
          // The issues' members, the requested reviewers and review counts, and the base repository:
          // read side by side (on PostgreSQL each is a round trip of its own).
          const issueIds = rows.map((r) => r.issue.id)
          const baseOf = new Map(rows.map((r) => [r.issue.id, r.base]))
          const [issueJsons, requested] = yield* Effect.all(
            [
              issuePresenter.issues(
                rows.map((r) => r.issue),
                (issue) => {
                  const base = baseOf.get(issue.id)!
                  return { id: base.repo.id, ownerName: base.owner.name, name: base.repo.name }
                },
                viewer,
                // Their merged state is in the rows at hand.
                new Map(rows.map((r) => [r.issue.id, { merged: r.pull.hasMerged, mergedAt: r.pull.mergedAt }]))
              ),
              reviews.requestedOf(issueIds),
              repoOf(rows[0]!.base)
            ],
            { concurrency: "unbounded" }
          )
          // Every branch tip and `refs/pull/{n}/head` of the page: one `git for-each-ref` per repository.
          const wanted = new Map<string, Set<string>>()
          const want = (path: string, ref: string) => {
            const refs = wanted.get(path) ?? new Set<string>()
            refs.add(ref)
            wanted.set(path, refs)
          }
          for (const { pull, issue, base, head } of rows) {
            want(base.path, `refs/heads/${pull.baseBranch}`)
            want(base.path, pullRef(issue.index))
            if (head !== undefined && pull.flow !== 1) want(head.path, `refs/heads/${pull.headBranch}`)
          }
          const tips = new Map<string, string | undefined>()
          for (const [path, refs] of wanted) {
            const found = yield* refTips(path, [...refs])
            for (const ref of refs) tips.set(`${path}\0${ref}`, found.get(ref))
          }
          const tipOf = (path: string, ref: string) => {
            const key = `${path}\0${ref}`
            return tips.has(key) ? Effect.succeed(tips.get(key)) : resolve(path, ref)
          }
          const people = yield* users.findByIds([...new Set([...requested.values()].flatMap((r) => r.userIds))])
          const teams = new Map<number, TeamRow>()
          for (const id of new Set([...requested.values()].flatMap((r) => r.teamIds))) {
            const team = yield* orgs.findTeam(id)
            if (Option.isSome(team)) teams.set(id, team.value)
          }
          const out: Array<PullRequest> = []
          for (const [i, loaded] of rows.entries()) {
            const asked = requested.get(loaded.issue.id)
            out.push(
              yield* one(viewer, loaded, issueJsons[i]!, repoOf, tipOf, {
                reviewers: (asked?.userIds ?? []).flatMap((id) => {
                  const user = people.get(id)
                  return user === undefined ? [] : [user]
                }),
                teams: (asked?.teamIds ?? []).flatMap((id) => {
                  const team = teams.get(id)
                  return team === undefined ? [] : [team]
                }),
                comments: asked?.comments ?? 0
              })
            )
          }
          return out
        })

      return PullPresenter.of({
        present
      })
    })
  )
}
