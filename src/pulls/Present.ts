// Pull requests as the API shows them (Forgejo's services/convert/pull.go `ToAPIPullRequest`;
// CONTRACT-PULLS §3.1, §3.2): the issue's members come from the issue presenter, the rest from the
// pull request's row and its repositories' git data.
import { Context, Effect, Layer, Option } from "effect"
import { Settings } from "../config/Settings.ts"
import * as Git from "../git/Git.ts"
import * as Merge from "../git/Merge.ts"
import type { Principal } from "../http/Caller.ts"
import { formatTime } from "../http/Json.ts"
import { isWorkInProgress, makePresenter } from "../issues/Present.ts"
import { atLeast } from "../lib/AccessMode.ts"
import { RepoPolicy } from "../repos/Policy.ts"
import { RepoPresenter } from "../repos/Present.ts"
import { UsersRepo } from "../users/Repo.ts"
import { toApiUser } from "../users/Schema.ts"
import { PullStatus } from "./Repo.ts"
import type { PRBranchInfo, PullRequest } from "./Schema.ts"
import { type Loaded, pullRef } from "./Service.ts"

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

      const resolve = (path: string, ref: string) =>
        Effect.map(Effect.orDie(Git.revParse(path, ref)), Option.getOrUndefined)

      const one = (viewer: Principal | undefined, loaded: Loaded) =>
        Effect.gen(function* () {
          const { pull, issue, base, head } = loaded
          const [issueJson] = yield* issuePresenter.issues(
            [issue],
            () => ({ id: base.repo.id, ownerName: base.owner.name, name: base.repo.name }),
            viewer
          )
          const baseAccess = yield* policy.access(viewer, base.repo, base.owner)
          const baseRepo = yield* repoPresenter.one(viewer, { ...base, access: baseAccess })
          const baseSha = (yield* resolve(base.path, `refs/heads/${pull.baseBranch}`)) ?? ""
          const pulledSha = (yield* resolve(base.path, pullRef(issue.index))) ?? pull.headSha
          let headInfo: PRBranchInfo
          if (head === undefined) {
            headInfo = { label: pull.headBranch, ref: pullRef(issue.index), sha: pulledSha, repo_id: -1, repo: null }
          } else {
            const headAccess =
              head.repo.id === base.repo.id ? baseAccess : yield* policy.access(viewer, head.repo, head.owner)
            const branchSha = yield* resolve(head.path, `refs/heads/${pull.headBranch}`)
            headInfo = {
              label: pull.headBranch,
              ref: branchSha === undefined ? pullRef(issue.index) : pull.headBranch,
              sha: branchSha ?? pulledSha,
              repo_id: head.repo.id,
              // A head repository the viewer may not read is not shown.
              repo: atLeast(headAccess.mode, "read")
                ? head.repo.id === base.repo.id
                  ? baseRepo
                  : yield* repoPresenter.one(viewer, { ...head, access: headAccess })
                : null
            }
          }
          const stat =
            head !== undefined && pull.mergeBase !== "" && pulledSha !== ""
              ? yield* Merge.shortStat(base.path, pull.mergeBase, pulledSha)
              : { files: 0, additions: 0, deletions: 0 }
          const mergedBy =
            pull.hasMerged && pull.mergedBy !== null
              ? Option.getOrUndefined(yield* users.findById(pull.mergedBy))
              : undefined
          const html = issueJson!.html_url
          return {
            id: pull.id,
            url: html,
            number: issue.index,
            user: issueJson!.user,
            title: issue.title,
            body: issue.body,
            labels: issueJson!.labels,
            milestone: issueJson!.milestone,
            assignee: issueJson!.assignee,
            assignees: issueJson!.assignees,
            requested_reviewers: [],
            requested_reviewers_teams: [],
            state: issueJson!.state,
            draft: isWorkInProgress(issue.title),
            is_locked: issue.isLocked,
            comments: issueJson!.comments,
            review_comments: 0,
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
            due_date: issueJson!.due_date,
            created_at: issueJson!.created_at,
            updated_at: issueJson!.updated_at,
            closed_at: issueJson!.closed_at,
            pin_order: issue.pinOrder,
            flow: pull.flow
          } satisfies PullRequest
        })

      return PullPresenter.of({
        present: (viewer, rows) => Effect.forEach(rows, (loaded) => one(viewer, loaded))
      })
    })
  )
}
