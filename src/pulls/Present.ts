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

      /** A pull request's JSON from what its page read: a plain function, nothing left to read. */
      const pullJson = (
        viewer: Principal | undefined,
        loaded: Loaded,
        issueJson: Issue,
        read: {
          readonly repoOf: (side: Side) => { readonly access: RepoAccess; readonly json: Repository }
          readonly tipOf: (path: string, ref: string) => string | undefined
          readonly stat: { readonly files: number; readonly additions: number; readonly deletions: number }
          readonly mergedBy: UserRow | undefined
          readonly reviewers: ReadonlyArray<UserRow>
          readonly teams: ReadonlyArray<TeamRow>
          readonly comments: number
        }
      ): PullRequest => {
        const { pull, issue, base, head } = loaded
        const { json: baseRepo } = read.repoOf(base)
        const baseSha = read.tipOf(base.path, `refs/heads/${pull.baseBranch}`) ?? ""
        const pulledSha = read.tipOf(base.path, pullRef(issue.index)) ?? pull.headSha
        let headInfo: PRBranchInfo
        if (head === undefined) {
          headInfo = { label: pull.headBranch, ref: pullRef(issue.index), sha: pulledSha, repo_id: -1, repo: null }
        } else if (pull.flow === 1) {
          // AGit: no branch, only the ref (CONTRACT-PULLS §3.2).
          headInfo = { label: "", ref: pullRef(issue.index), sha: pulledSha, repo_id: base.repo.id, repo: baseRepo }
        } else {
          const headRepo = read.repoOf(head)
          const branchSha = read.tipOf(head.path, `refs/heads/${pull.headBranch}`)
          headInfo = {
            label: pull.headBranch,
            ref: branchSha === undefined ? pullRef(issue.index) : pull.headBranch,
            sha: branchSha ?? pulledSha,
            repo_id: head.repo.id,
            // A head repository the viewer may not read is not shown.
            repo: atLeast(headRepo.access.mode, "read") ? headRepo.json : null
          }
        }
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
          requested_reviewers: read.reviewers.map((u) => toApiUser(settings, u, undefined)),
          requested_reviewers_teams: read.teams.map((t) => toApiTeam(t, null)),
          state: issueJson.state,
          draft: isWorkInProgress(issue.title),
          is_locked: issue.isLocked,
          comments: issueJson.comments,
          review_comments: read.comments,
          additions: read.stat.additions,
          deletions: read.stat.deletions,
          changed_files: read.stat.files,
          html_url: html,
          diff_url: `${html}.diff`,
          patch_url: `${html}.patch`,
          mergeable: isMergeable(loaded),
          merged: pull.hasMerged,
          merged_at: pull.hasMerged && pull.mergedAt !== null ? formatTime(pull.mergedAt) : null,
          merge_commit_sha: pull.hasMerged ? pull.mergeCommitSha : null,
          merged_by: read.mergedBy === undefined ? null : toApiUser(settings, read.mergedBy, viewer),
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
        }
      }

      /**
       * One page of pull requests: everything it shows read first — the issues' members in one
       * batch, each repository and branch tip once however many pull requests share it — then
       * each pull request made by a plain function (no effect per pull request: a page of 50 ran
       * ~400 small ones, a tenth of what it allocated).
       */
      const present = (viewer: Principal | undefined, rows: ReadonlyArray<Loaded>) =>
        Effect.gen(function* () {
          if (rows.length === 0) return []
          // Every repository shown: each base, and each head a branch of which is shown.
          const sides = new Map<number, Side>()
          for (const { pull, base, head } of rows) {
            sides.set(base.repo.id, base)
            if (head !== undefined && pull.flow !== 1) sides.set(head.repo.id, head)
          }
          const repoJson = (side: Side) =>
            Effect.flatMap(policy.access(viewer, side.repo, side.owner), (access) =>
              Effect.map(repoPresenter.one(viewer, { ...side, access }), (json) => ({ access, json }))
            )
          // The issues' members, the requested reviewers and review counts, and the repositories:
          // read side by side (on PostgreSQL each is a round trip of its own).
          const issueIds = rows.map((r) => r.issue.id)
          const baseOf = new Map(rows.map((r) => [r.issue.id, r.base]))
          const [issueJsons, requested, repoList] = yield* Effect.all(
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
              Effect.forEach([...sides.values()], repoJson, { concurrency: "unbounded" })
            ],
            { concurrency: "unbounded" }
          )
          const repos = new Map([...sides.keys()].map((id, i) => [id, repoList[i]!]))
          // Every branch tip and `refs/pull/{n}/head` of the page, by repository.
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
          const tips = new Map<string, ReadonlyMap<string, string>>()
          for (const [path, refs] of wanted) tips.set(path, yield* refTips(path, [...refs]))
          const tipOf = (path: string, ref: string) => tips.get(path)?.get(ref)
          // The changed lines and files: stored by the check when it counted these commits, else
          // counted here (the check is queued), as Forgejo does; for normal-flow pull requests only.
          const stats = new Map<number, { files: number; additions: number; deletions: number }>()
          for (const { pull, issue, base, head } of rows) {
            const pulledSha = tipOf(base.path, pullRef(issue.index)) ?? pull.headSha
            if (head === undefined || pull.flow !== 0 || pull.mergeBase === "" || pulledSha === "") continue
            stats.set(
              pull.id,
              pull.stats.mergeBase === pull.mergeBase && pull.stats.headSha === pulledSha
                ? pull.stats
                : yield* Merge.shortStat(base.path, pull.mergeBase, pulledSha)
            )
          }
          // Who merged and the requested reviewers, read together.
          const people = yield* users.findByIds([
            ...rows.flatMap((r) => (r.pull.hasMerged && r.pull.mergedBy !== null ? [r.pull.mergedBy] : [])),
            ...[...requested.values()].flatMap((r) => r.userIds)
          ])
          const teams = new Map<number, TeamRow>()
          for (const id of new Set([...requested.values()].flatMap((r) => r.teamIds))) {
            const team = yield* orgs.findTeam(id)
            if (Option.isSome(team)) teams.set(id, team.value)
          }
          const noStat = { files: 0, additions: 0, deletions: 0 }
          return rows.map((loaded, i) => {
            const asked = requested.get(loaded.issue.id)
            return pullJson(viewer, loaded, issueJsons[i]!, {
              repoOf: (side) => repos.get(side.repo.id)!,
              tipOf,
              stat: stats.get(loaded.pull.id) ?? noStat,
              mergedBy:
                loaded.pull.hasMerged && loaded.pull.mergedBy !== null ? people.get(loaded.pull.mergedBy) : undefined,
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
          })
        })

      return PullPresenter.of({
        present
      })
    })
  )
}
