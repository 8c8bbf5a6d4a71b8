// Reviews as the API shows them (Forgejo's services/convert/pull_review.go `ToPullReview`,
// `ToPullReviewComment`; CONTRACT-PULLS §3.4): people and teams of a page read in a few queries.
import { Effect, Option } from "effect"
import type { SettingsShape } from "../config/Settings.ts"
import type { Principal } from "../http/Caller.ts"
import { formatTime } from "../http/Json.ts"
import { issueHtmlUrl } from "../issues/Present.ts"
import { OrgsRepo, type TeamRow } from "../orgs/Repo.ts"
import { toApiTeam } from "../orgs/Schema.ts"
import type { Loaded } from "../pulls/Service.ts"
import { UsersRepo } from "../users/Repo.ts"
import { ghostUser, toApiUser } from "../users/Schema.ts"
import { diffHunkOf } from "./Hunks.ts"
import { stateName } from "./Policy.ts"
import { type CodeCommentRow, type ReviewRow, ReviewsRepo, ReviewType } from "./Repo.ts"
import type { PullReview, PullReviewComment } from "./Schema.ts"

export const makeReviewPresenter = (settings: SettingsShape) =>
  Effect.gen(function* () {
    const users = yield* UsersRepo
    const orgs = yield* OrgsRepo
    const repo = yield* ReviewsRepo

    const pullHtml = (loaded: Loaded) =>
      issueHtmlUrl(
        settings,
        { id: loaded.base.repo.id, ownerName: loaded.base.owner.name, name: loaded.base.repo.name },
        loaded.issue
      )

    const reviews = (loaded: Loaded, rows: ReadonlyArray<ReviewRow>, viewer: Principal | undefined) =>
      Effect.gen(function* () {
        const ids = rows.map((r) => r.id)
        const [people, counts, summaries] = yield* Effect.all([
          users.findByIds([...new Set(rows.flatMap((r) => (r.reviewerId === null ? [] : [r.reviewerId])))]),
          repo.codeCommentCounts(ids),
          repo.summaryCommentsOf(ids)
        ])
        const teams = new Map<number, TeamRow>()
        for (const id of new Set(rows.flatMap((r) => (r.reviewerTeamId === null ? [] : [r.reviewerTeamId])))) {
          const team = yield* orgs.findTeam(id)
          if (Option.isSome(team)) teams.set(id, team.value)
        }
        const html = pullHtml(loaded)
        return rows.map((r): PullReview => {
          const team = r.reviewerTeamId === null ? undefined : teams.get(r.reviewerTeamId)
          // A team's request has no user; a reviewer whose account is gone is the ghost.
          const user = r.reviewerTeamId !== null ? undefined : (people.get(r.reviewerId ?? -1) ?? ghostUser)
          const summary = summaries.get(r.id)
          return {
            id: r.id,
            user: user === undefined ? null : toApiUser(settings, user, viewer),
            team: team === undefined ? null : toApiTeam(team, null),
            state: stateName(r.type),
            body: r.content,
            commit_id: r.commitId,
            stale: r.stale,
            official: r.official,
            dismissed: r.dismissed,
            comments_count: counts.get(r.id) ?? 0,
            submitted_at: formatTime(r.createdAt),
            updated_at: formatTime(r.updatedAt),
            html_url: summary === undefined ? "" : `${html}#issuecomment-${summary}`,
            pull_request_url: html
          }
        })
      })

    const comments = (
      loaded: Loaded,
      review: ReviewRow,
      rows: ReadonlyArray<CodeCommentRow>,
      viewer: Principal | undefined
    ) =>
      Effect.gen(function* () {
        const people = yield* users.findByIds([
          ...new Set(rows.flatMap((c) => [c.posterId, ...(c.resolveDoerId === null ? [] : [c.resolveDoerId])]))
        ])
        const html = pullHtml(loaded)
        // Comments of a pending review live on the files tab until it is submitted.
        const page = review.type === ReviewType.pending ? `${html}/files` : html
        return rows.map(
          (c): PullReviewComment => ({
            id: c.id,
            body: c.body,
            user: toApiUser(settings, people.get(c.posterId) ?? ghostUser, viewer),
            resolver:
              c.resolveDoerId === null ? null : toApiUser(settings, people.get(c.resolveDoerId) ?? ghostUser, viewer),
            pull_request_review_id: review.id,
            created_at: formatTime(c.createdAt),
            updated_at: formatTime(c.updatedAt),
            path: c.treePath,
            commit_id: c.commitSha,
            original_commit_id: "",
            diff_hunk: diffHunkOf(c.patch),
            position: Math.max(c.line, 0),
            original_position: Math.max(-c.line, 0),
            html_url: `${page}#issuecomment-${c.id}`,
            pull_request_url: html
          })
        )
      })

    return { reviews, comments }
  })
