// Pull requests in the browser (Forgejo's routers/web/repo/pull.go, templates/repo/issue/view_content
// and pull/merge_box): `/{owner}/{repo}/pulls` (the issues list with the pull requests, RepoIssues.ts),
// `/pulls/{index}` (the conversation: the issue's timeline with the review events and their inline
// comments, review requests, pushes, merges; the comment form with close/reopen; the merge box),
// `/pulls/{index}/commits`, and the merge box's forms: `POST /pulls/{index}/merge` (every style the
// repository allows, or "merge when checks succeed"), `/cancel_auto_merge` (the schedule),
// `/update` (update branch, by merge or rebase) and `/cleanup` (delete the head branch after the
// merge). Files changed (`/pulls/{index}/files`) is PullFiles.ts's. Everything goes through
// PullsService, AutoMerge, ReviewsService, IssuesService and the protection and statuses services,
// with the API's rules.
//
// A stale merge merges nothing: the merge box sends the head and base tips its page showed
// (Forgejo's `head_commit_id`, and the base's as Hearth's own), and the service refuses the merge
// when either moved since.

import { Effect, Option } from "effect"
import { listCommits } from "../../branches/Service.ts"
import * as Git from "../../git/Git.ts"
import type { RepoRule } from "../../http/Access.ts"
import * as Errors from "../../http/Errors.ts"
import type { Reaction } from "../../issues/Extras.ts"
import { IssueExtras } from "../../issues/Extras.ts"
import { isPoster, isWriter } from "../../issues/Policy.ts"
import type { Issue, TimelineComment } from "../../issues/Schema.ts"
import { IssuesService } from "../../issues/Service.ts"
import { answerFirst } from "../../lib/AfterAnswer.ts"
import { globMatch } from "../../lib/Glob.ts"
import { MarkdownRenderer } from "../../markdown/Service.ts"
import { ProtectionService } from "../../protection/Service.ts"
import { AutoMerge } from "../../pulls/AutoMerge.ts"
import { AutoMergeStore } from "../../pulls/AutoMergeStore.ts"
import { mayMerge, mayPushTo } from "../../pulls/Policy.ts"
import { PullStatus } from "../../pulls/Repo.ts"
import { MERGE_DO, type MergeDo } from "../../pulls/Schema.ts"
import { type Loaded, type MergeRequest, PullsService } from "../../pulls/Service.ts"
import { RepoPolicy } from "../../repos/Policy.ts"
import { reviewFacts } from "../../reviews/Policy.ts"
import { ReviewsRepo } from "../../reviews/Repo.ts"
import type { PullReview, PullReviewComment } from "../../reviews/Schema.ts"
import { ReviewsService } from "../../reviews/Service.ts"
import { requiredContextsState, StatusesService } from "../../statuses/Service.ts"
import { UsersRepo } from "../../users/Repo.ts"
import { type FieldErrors, formError, textArea } from "../Form.ts"
import { empty, type Html, html, raw } from "../Html.ts"
import { icon } from "../Icons.ts"
import { csrfField } from "../Layout.ts"
import { headLabel, makePullFrame, outdatedComments, pullState, pullUrl } from "../PullFrame.ts"
import type { RepoFrame, RepoView } from "../RepoFrame.ts"
import { segment } from "../RepoFrame.ts"
import { refusalPage } from "../RepoRefusal.ts"
import { commitList, when } from "../RepoViews.ts"
import type { Web } from "../Web.ts"
import { labelChip, makeIssueParts } from "./RepoIssues.ts"

/** Forgejo's `reqRepoReader(unit.TypePullRequests)`. */
const READ: RepoRule = { role: "read", unit: "pulls" }
/** Commenting and merging: not in an archived repository (the API's `writeUnarchived`). */
const WRITE: RepoRule = { role: "read", unit: "pulls", changes: "mirrors" }

/** Commits listed on the commits tab at most (Forgejo lists 250). */
export const PULL_COMMITS = 250

/** What the conversation read once for all its entries: the issue, rendered comments, reactions. */
interface Read {
  readonly issue: Issue
  readonly bodies: ReadonlyMap<number, Html>
  readonly reactions: ReadonlyMap<number, ReadonlyArray<Reaction>>
}

/** The merge styles' names in the merge box (Forgejo's). */
const STYLE_NAMES: Readonly<Record<MergeDo, string>> = {
  merge: "Create merge commit",
  rebase: "Rebase then fast-forward",
  "rebase-merge": "Rebase then create merge commit",
  squash: "Create squash commit",
  "fast-forward-only": "Fast-forward only",
  "manually-merged": "Manually merged"
}

/** Whether the repository allows `style` (Forgejo's `IsMergeStyleAllowed`; the service checks it again). */
const allowedStyles = (loaded: Loaded): ReadonlyArray<MergeDo> => {
  const p = loaded.base.repo.pulls
  const on: Record<MergeDo, boolean> = {
    merge: p.allowMerge,
    rebase: p.allowRebase,
    "rebase-merge": p.allowRebaseMerge,
    squash: p.allowSquash,
    "fast-forward-only": p.allowFastForwardOnly,
    "manually-merged": p.allowManualMerge
  }
  return MERGE_DO.filter((s) => on[s])
}

const STATUS_GLYPHS: Readonly<Record<string, readonly [string, string]>> = {
  success: ["check", "color-fg-success"],
  pending: ["dot-fill", "color-fg-attention"],
  warning: ["alert", "color-fg-attention"],
  failure: ["x", "color-fg-danger"],
  error: ["x", "color-fg-danger"]
}

const shortSha = (sha: string) => sha.slice(0, 10)

const user = (login: string) => html`<a class="Link--primary text-bold" href="/${segment(login)}">${login}</a>`

/** What the merge box's and the comment form's POSTs leave for the page shown again. */
interface Shown {
  readonly content?: string
  readonly errors?: FieldErrors
  readonly message?: string
  /** The refusal of a merge-box form, shown in the merge box. */
  readonly mergeMessage?: string
  readonly mergeForm?: URLSearchParams
  readonly status?: number
}

export const RepoPullsPages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const parts = yield* makeIssueParts(web, frame)
    const pullFrame = yield* makePullFrame(frame)
    const pulls = yield* PullsService
    const autoMerge = yield* AutoMerge
    const schedules = yield* AutoMergeStore
    const issues = yield* IssuesService
    const extras = yield* IssueExtras
    const markdown = yield* MarkdownRenderer
    const reviews = yield* ReviewsService
    const reviewRows = yield* ReviewsRepo
    const protection = yield* ProtectionService
    const statuses = yield* StatusesService
    const policy = yield* RepoPolicy
    const users = yield* UsersRepo

    // ---- The conversation ------------------------------------------------------------------

    const line = (event: TimelineComment, glyph: string, what: Html) =>
      html`<div class="d-flex flex-items-start f6 color-fg-muted ml-3 mb-3" data-testid="event" data-type="${event.type}">${icon(glyph)}<span class="ml-2 wb-break-word">${user(event.user.login)} ${what} ${when(event.created_at)}</span></div>`

    /** An inline comment of a review: its file and line, the code around it, the comment. */
    const inlineComment = (view: RepoView, c: PullReviewComment, outdated: boolean) =>
      Effect.gen(function* () {
        const lineNo = c.position > 0 ? c.position : c.original_position
        const side = c.position > 0 ? "" : " (old)"
        const hunk = c.diff_hunk
          .split("\n")
          .filter((l) => !l.startsWith("diff --git") && !l.startsWith("--- ") && !l.startsWith("+++ "))
          .slice(-8)
          .join("\n")
        return html`<div class="Box mb-2" data-testid="review-comment">
  <div class="Box-header py-1 f6 text-mono wb-break-word" data-testid="review-comment-place">${c.path}:${lineNo}${side}${
    outdated ? html` <span class="Label Label--attention ml-1" data-testid="outdated-label">Outdated</span>` : empty
  }</div>
  ${hunk === "" ? empty : html`<pre class="hearth-commit-message f6 p-2 m-0 border-bottom" data-testid="review-comment-hunk">${hunk}</pre>`}
  <div class="Box-body py-2">${c.user === null ? empty : html`<p class="f6 mb-1">${user(c.user.login)}</p>`}${yield* parts.rendered(view, c.body)}</div>
</div>`
      })

    const REVIEW_WORDS: Readonly<Record<string, readonly [string, string]>> = {
      APPROVED: ["check", "approved these changes"],
      REQUEST_CHANGES: ["file-diff", "requested changes"],
      COMMENT: ["eye", "reviewed"]
    }

    /** A review of the timeline with its body and inline comments. */
    const reviewItem = (view: RepoView, loaded: Loaded, event: TimelineComment, review: PullReview | undefined) =>
      Effect.gen(function* () {
        if (review === undefined) return empty
        const [glyph, words] = REVIEW_WORDS[review.state] ?? ["eye", "reviewed"]
        const comments =
          review.comments_count === 0
            ? []
            : yield* Effect.orElseSucceed(
                reviews.comments(view, String(loaded.issue.index), String(review.id)),
                () => [] as Array<PullReviewComment>
              )
        // Forgejo shows an invalidated comment with the hunk it was made on, marked outdated.
        const outdated = yield* outdatedComments(
          loaded.base.path,
          loaded.pull.headSha,
          comments.map((c) => ({
            id: c.id,
            path: c.path,
            line: c.position > 0 ? c.position : -c.original_position,
            commitSha: c.commit_id
          }))
        )
        const inline = yield* Effect.forEach(comments, (c) => inlineComment(view, c, outdated.has(c.id)))
        const body = review.body.trim() === "" ? empty : yield* parts.rendered(view, review.body)
        return html`<div class="mb-3" id="pullrequestreview-${review.id}" data-testid="review" data-state="${review.state}">
  ${line(event, glyph, html`${words}${review.dismissed ? html` <span class="Label">dismissed</span>` : empty}${review.stale ? html` <span class="Label">outdated</span>` : empty}`)}
  ${body === empty && inline.length === 0 ? empty : html`<div class="Box ml-5"><div class="Box-body">${body}${inline}</div></div>`}
</div>`
      })

    /** A `pull_push` entry: the commits added, or the force-push's old and new tips. */
    const pushItem = (view: RepoView, event: TimelineComment) => {
      let parsed: { readonly is_force_push?: unknown; readonly commit_ids?: unknown } = {}
      try {
        parsed = JSON.parse(event.body) as typeof parsed
      } catch {}
      const ids = Array.isArray(parsed.commit_ids) ? parsed.commit_ids.map(String) : []
      const link = (sha: string) =>
        html`<a class="text-mono" href="${view.base}/commit/${encodeURIComponent(sha)}">${shortSha(sha)}</a>`
      if (parsed.is_force_push === true && ids.length === 2) {
        return line(event, "repo-push", html`force-pushed the head from ${link(ids[0]!)} to ${link(ids[1]!)}`)
      }
      return html`${line(event, "repo-push", html`added ${ids.length} ${ids.length === 1 ? "commit" : "commits"}`)}<ul class="list-style-none ml-6 mb-3 f6" data-testid="pushed-commits">${ids.map(
        (sha) => html`<li>${link(sha)}</li>`
      )}</ul>`
    }

    /** One timeline entry of a pull request. */
    const timelineItem = (
      view: RepoView,
      loaded: Loaded,
      event: TimelineComment,
      reviewById: ReadonlyMap<number, PullReview>,
      read: Read
    ): Effect.Effect<Html> =>
      Effect.gen(function* () {
        switch (event.type) {
          case "comment": {
            const body = read.bodies.get(event.id) ?? (yield* parts.rendered(view, event.body))
            return parts.commentBox(
              view,
              read.issue,
              { who: event.user.login, at: event.created_at, id: event.id },
              body,
              read.reactions.get(event.id) ?? [],
              empty
            )
          }
          case "review":
            return yield* reviewItem(view, loaded, event, reviewById.get(event.review_id))
          case "review_request":
            return event.assignee === null
              ? empty
              : line(
                  event,
                  "eye",
                  event.removed_assignee
                    ? html`removed the review request for ${user(event.assignee.login)}`
                    : html`requested a review from ${user(event.assignee.login)}`
                )
          case "dismiss_review":
            return line(event, "x", html`dismissed a review${event.body === "" ? empty : html`: ${event.body}`}`)
          case "pull_push":
            return pushItem(view, event)
          case "merge_pull":
            return line(
              event,
              "git-merge",
              html`merged ${
                loaded.pull.mergeCommitSha === null
                  ? empty
                  : html`commit <a class="text-mono" href="${view.base}/commit/${loaded.pull.mergeCommitSha}">${shortSha(loaded.pull.mergeCommitSha)}</a> `
              }into <span class="branch-name">${loaded.pull.baseBranch}</span>`
            )
          case "delete_branch":
            return line(event, "trash", html`deleted the branch <span class="branch-name">${event.old_ref}</span>`)
          case "change_target_branch":
            return line(
              event,
              "git-branch",
              html`changed the target branch from <span class="branch-name">${event.old_ref}</span> to <span class="branch-name">${event.new_ref}</span>`
            )
          case "pull_scheduled_merge":
            return line(event, "clock", html`scheduled this pull request to merge when all checks succeed`)
          case "pull_cancel_scheduled_merge":
            return line(
              event,
              "x",
              html`canceled the scheduled merge${event.body === "" ? empty : html`: ${event.body}`}`
            )
          default:
            return parts.eventLine(event) ?? empty
        }
      })

    /** The merge box's facts: the rule, statuses, approvals, the decision for the viewer, a schedule. */
    const mergeFacts = (view: RepoView, loaded: Loaded) =>
      Effect.gen(function* () {
        const { pull, base } = loaded
        const [rule, latest, rows, schedule] = yield* Effect.all([
          protection.ruleFor(base.repo.id, pull.baseBranch),
          pull.headSha === ""
            ? Effect.succeed({ rows: [], total: 0 })
            : statuses.latest(base.repo.id, pull.headSha, undefined),
          reviewRows.ofIssue(loaded.issue.id),
          schedules.find(pull.id)
        ])
        const facts = reviewFacts(rows)
        const viewer = view.caller?.user
        const decision =
          viewer === undefined
            ? undefined
            : yield* protection.mergeBlockers(base, pull.baseBranch, {
                doer: viewer,
                ...facts,
                statuses: latest.rows.map((r) => ({ context: r.context, state: r.state })),
                outdated: pull.commitsBehind > 0
              })
        const r = Option.getOrUndefined(rule)
        const approvals = facts.approvals.filter((a) => a.official && !(r?.ignoreStaleApprovals === true && a.stale))
        return { rule: r, latest: latest.rows, approvals: approvals.length, decision, schedule }
      })

    /** The head branch's tip now, when the head repository and branch exist. */
    const headTip = (loaded: Loaded) =>
      loaded.head === undefined || loaded.pull.flow === 1
        ? Effect.succeed(undefined)
        : Effect.map(
            Effect.orDie(Git.revParse(loaded.head.path, `refs/heads/${loaded.pull.headBranch}`)),
            Option.getOrUndefined
          )

    /** Whether the viewer may push to the head repository (update or delete its branch). */
    const mayPushHead = (view: RepoView, loaded: Loaded) =>
      loaded.head === undefined || view.caller === undefined
        ? Effect.succeed(false)
        : Effect.map(policy.access(view.caller, loaded.head.repo, loaded.head.owner), mayPushTo)

    const mergeBox = (view: RepoView, loaded: Loaded, shown: Shown) =>
      Effect.gen(function* () {
        const { pull, base } = loaded
        const url = pullUrl(view, loaded.issue.index)
        const ctx = view.ctx
        const state = pullState(loaded)
        const refusal = formError(shown.mergeMessage)
        const writerHere = repoMayChange(view)
        if (state === "merged" || state === "closed") {
          const [tip, pushable] = yield* Effect.all([headTip(loaded), mayPushHead(view, loaded)])
          const deletable =
            writerHere &&
            pushable &&
            tip !== undefined &&
            tip === pull.headSha &&
            pull.headBranch !== loaded.head?.repo.defaultBranch
          return html`<div class="Box mb-3" data-testid="merge-box">
  <div class="Box-body">
    ${refusal}
    <p class="mb-0">${icon(state === "merged" ? "git-merge" : "git-pull-request-closed")} ${
      state === "merged"
        ? html`This pull request was merged${pull.mergeCommitSha === null ? empty : html` as <a class="text-mono" href="${view.base}/commit/${pull.mergeCommitSha}">${shortSha(pull.mergeCommitSha)}</a>`}.`
        : html`This pull request is closed.`
    }</p>
    ${
      deletable
        ? html`<form class="mt-2" method="post" action="${url}/cleanup" data-testid="delete-branch-form">${csrfField(ctx)}<button class="btn btn-danger btn-sm" type="submit" data-testid="delete-branch">${icon("trash")} Delete branch ${headLabel(loaded)}</button></form>`
        : empty
    }
  </div>
</div>`
        }
        const facts = yield* mergeFacts(view, loaded)
        const behind = pull.commitsBehind
        const status = pull.status
        const mergeability =
          status === PullStatus.checking
            ? html`<p data-testid="mergeability" data-state="checking">${icon("sync")} Checking whether this pull request can be merged… reload the page in a moment.</p>`
            : status === PullStatus.conflict
              ? html`<div data-testid="mergeability" data-state="conflict"><p class="color-fg-danger">${icon("x")} This branch has conflicts that must be resolved${pull.conflictedFiles.length === 0 ? html`: its head and base have no common history` : html` in:`}</p>${
                  pull.conflictedFiles.length === 0
                    ? empty
                    : html`<ul class="ml-4 mb-2 text-mono f6" data-testid="conflicted-files">${pull.conflictedFiles.map((f) => html`<li>${f}</li>`)}</ul>`
                }</div>`
              : status === PullStatus.ancestor
                ? html`<p data-testid="mergeability" data-state="ancestor">${icon("check")} There is nothing to merge: the head branch is already in ${pull.baseBranch}.</p>`
                : status === PullStatus.error
                  ? html`<p class="color-fg-danger" data-testid="mergeability" data-state="error">${icon("alert")} The pull request could not be checked: does its base branch still exist?</p>`
                  : html`<p class="color-fg-success" data-testid="mergeability" data-state="mergeable">${icon("check")} This branch has no conflicts with the base branch.</p>`
        const viewer = view.caller
        const pushable = yield* mayPushHead(view, loaded)
        const mayUpdate =
          writerHere &&
          (pushable || (pull.allowMaintainerEdit && isWriter(view))) &&
          pull.flow === 0 &&
          loaded.head !== undefined
        const updateStyles = base.repo.pulls.allowRebaseUpdate ? (["merge", "rebase"] as const) : (["merge"] as const)
        const behindPart =
          behind === 0 || status === PullStatus.checking
            ? empty
            : html`<div class="d-flex flex-items-center flex-wrap mb-2" data-testid="behind">
  <p class="flex-auto mb-1">${icon("alert")} This branch is ${behind} ${behind === 1 ? "commit" : "commits"} behind ${pull.baseBranch}.</p>
  ${
    mayUpdate
      ? html`<form method="post" action="${url}/update" data-testid="update-form">${csrfField(ctx)}${updateStyles.map(
          (s) =>
            html`<button class="btn btn-sm ml-2" type="submit" name="style" value="${s}" data-testid="update-${s}">Update branch by ${s === "merge" ? "merge" : "rebase"}</button>`
        )}</form>`
      : empty
  }
</div>`
        const required = facts.rule?.enableStatusCheck === true ? (facts.rule.statusCheckContexts ?? []) : []
        const requiredState =
          facts.rule?.enableStatusCheck === true
            ? requiredContextsState(
                facts.latest.map((s) => ({ context: s.context, state: s.state })),
                required
              )
            : undefined
        const statusList =
          facts.latest.length === 0 && required.length === 0
            ? empty
            : html`<div class="mb-2" data-testid="statuses">
  <p class="text-bold mb-1">Status checks${requiredState === undefined ? empty : html` <span class="Label" data-testid="required-state">required: ${requiredState === "" ? "none yet" : requiredState}</span>`}</p>
  <ul class="list-style-none f6">${facts.latest.map((s) => {
    const [glyph, colour] = STATUS_GLYPHS[s.state] ?? ["dot-fill", "color-fg-muted"]
    const isRequired = required.some((p) => globMatch(p, s.context))
    return html`<li class="mb-1" data-testid="status" data-state="${s.state}"><span class="${colour}">${icon(glyph)}</span> <strong>${s.context}</strong> ${s.description}${
      isRequired ? html` <span class="Label">Required</span>` : empty
    }${
      /^https?:\/\//i.test(s.targetUrl)
        ? html` <a href="${s.targetUrl}" rel="nofollow noopener noreferrer">Details</a>`
        : empty
    }</li>`
  })}${required
    .filter((p) => !facts.latest.some((s) => globMatch(p, s.context)))
    .map(
      (p) =>
        html`<li class="mb-1" data-testid="status" data-state="expected"><span class="color-fg-attention">${icon("dot-fill")}</span> <strong>${p}</strong> Expected — waiting for its status <span class="Label">Required</span></li>`
    )}</ul>
</div>`
        const rulePart =
          facts.rule === undefined
            ? empty
            : html`<p class="mb-2" data-testid="protection">${icon("shield")} ${pull.baseBranch} is protected by the rule <strong>${facts.rule.ruleName}</strong>${
                facts.rule.requiredApprovals > 0
                  ? html`: <span data-testid="approvals">${facts.approvals} of ${facts.rule.requiredApprovals} required ${facts.rule.requiredApprovals === 1 ? "approval" : "approvals"}</span>`
                  : html` (<span data-testid="approvals">${facts.approvals} ${facts.approvals === 1 ? "approval" : "approvals"}</span>)`
              }.</p>`
        const decision = facts.decision
        const blockers =
          decision === undefined || decision.reasons.length === 0
            ? empty
            : html`<ul class="mb-2 f6 color-fg-attention" data-testid="merge-blockers">${decision.reasons.map((r) => html`<li>${icon("alert")} ${r}</li>`)}</ul>`
        const schedule = facts.schedule
        let controls: Html = empty
        if (viewer !== undefined && writerHere && mayMerge(view) && decision?.userMayMerge === true) {
          if (Option.isSome(schedule)) {
            const who = yield* users.findById(schedule.value.doerId)
            controls = html`<div class="flash mb-2" data-testid="scheduled">${icon("clock")} ${Option.isSome(who) ? who.value.name : "Someone"} scheduled this pull request to merge (${STYLE_NAMES[schedule.value.style]}) when all checks succeed.
  <form class="d-inline ml-2" method="post" action="${url}/cancel_auto_merge">${csrfField(ctx)}<button class="btn btn-sm" type="submit" data-testid="cancel-scheduled">Cancel the scheduled merge</button></form>
</div>`
          } else {
            controls = yield* mergeForm(view, loaded, facts, shown.mergeForm)
          }
        } else if (Option.isSome(schedule)) {
          controls = html`<p class="mb-2" data-testid="scheduled">${icon("clock")} This pull request is scheduled to merge when all checks succeed.</p>`
        }
        return html`<div class="Box mb-3" data-testid="merge-box">
  <div class="Box-body">
    ${refusal}
    ${mergeability}
    ${behindPart}
    ${statusList}
    ${rulePart}
    ${blockers}
    ${controls}
  </div>
</div>`
      })

    /** The merge form: the allowed styles (the default chosen), the commit's title and message, the options. */
    const mergeForm = (
      view: RepoView,
      loaded: Loaded,
      facts: Effect.Success<ReturnType<typeof mergeFacts>>,
      typed: URLSearchParams | undefined
    ) =>
      Effect.gen(function* () {
        const { pull, base } = loaded
        const styles = allowedStyles(loaded)
        if (styles.length === 0) {
          return html`<p class="color-fg-muted" data-testid="no-merge-styles">The repository allows no merge style: its settings must allow one.</p>`
        }
        const preferred = typed?.get("do") ?? base.repo.pulls.defaultMergeStyle
        const chosen = styles.includes(preferred as MergeDo) ? preferred : styles[0]!
        const blocked = (facts.decision?.reasons.length ?? 0) > 0
        const deleteDefault =
          typed === undefined
            ? base.repo.pulls.defaultDeleteBranchAfterMerge
            : typed.get("delete_branch_after_merge") === "on"
        const mayDelete = pull.flow === 0 && loaded.head !== undefined && (yield* mayPushHead(view, loaded))
        const url = pullUrl(view, loaded.issue.index)
        // The base branch's tip this page shows the pull request against: a merge after it moved is refused.
        const baseTip = Option.getOrElse(
          yield* Effect.orDie(Git.revParse(base.path, `refs/heads/${pull.baseBranch}`)),
          () => ""
        )
        return html`<form method="post" action="${url}/merge" data-testid="merge-form">
  ${csrfField(view.ctx)}
  <input type="hidden" name="head_commit_id" value="${pull.headSha}">
  <input type="hidden" name="base_commit_id" value="${baseTip}">
  <fieldset class="form-group" data-testid="merge-styles">
    <legend class="text-bold mb-1">Merge style</legend>
    ${styles.map(
      (s) =>
        html`<div class="form-checkbox my-1"><label for="merge-style-${s}"><input type="radio" id="merge-style-${s}" name="do" value="${s}"${
          s === chosen ? html` checked` : empty
        } hx-get="${url}/merge_message" hx-trigger="change" hx-target="#merge-text" hx-swap="innerHTML"> ${STYLE_NAMES[s]}</label></div>`
    )}
  </fieldset>
  <div id="merge-text" data-testid="merge-text">${
    typed === undefined
      ? mergeText(yield* pulls.defaultMergeMessage(loaded, chosen as MergeDo))
      : mergeText({ title: typed.get("merge_title_field") ?? "", body: typed.get("merge_message_field") ?? "" })
  }</div>
  ${
    styles.includes("manually-merged")
      ? html`<div class="form-group"><div class="form-group-header"><label for="merge-commit-id">Merge commit id (manually merged only)</label></div>
    <div class="form-group-body"><input class="form-control width-full text-mono" id="merge-commit-id" name="merge_commit_id" value="${typed?.get("merge_commit_id") ?? ""}"></div></div>`
      : empty
  }
  ${
    mayDelete
      ? html`<div class="form-checkbox"><label for="merge-delete-branch"><input type="checkbox" id="merge-delete-branch" name="delete_branch_after_merge" value="on"${
          deleteDefault ? html` checked` : empty
        }> Delete the branch ${headLabel(loaded)} after the merge</label></div>`
      : empty
  }
  ${
    blocked && facts.decision?.mayForce === true
      ? html`<div class="form-checkbox"><label for="merge-force"><input type="checkbox" id="merge-force" name="force_merge" value="on"> Merge despite the branch's protection (you are an administrator)</label></div>`
      : empty
  }
  <div class="mt-2">
    <button class="btn btn-primary mr-2" type="submit" data-testid="merge-button"${
      pull.status === PullStatus.conflict || pull.status === PullStatus.ancestor ? html` disabled` : empty
    }>${icon("git-merge")} Merge</button>
    ${
      // Forgejo offers the schedule while something the rule requires is missing; with nothing missing it would merge at once.
      blocked
        ? html`<button class="btn" type="submit" name="merge_when_checks_succeed" value="on" data-testid="merge-when-checks">${icon("clock")} Merge when checks succeed</button>`
        : empty
    }
  </div>
</form>`
      })

    /**
     * The merge form's commit title and message, prefilled with the style's defaults (the same
     * function the API's merge uses); the style buttons fetch them again when switched (htmx).
     */
    const mergeText = (text: { readonly title: string; readonly body: string }) =>
      html`<div class="form-group"><div class="form-group-header"><label for="merge-title">Commit title</label></div>
    <div class="form-group-body"><input class="form-control width-full" id="merge-title" name="merge_title_field" value="${text.title}" aria-describedby="merge-title-hint"></div>
    <p class="note" id="merge-title-hint">Empty: the style's default title. Rebasing and fast-forwarding keep the commits' own messages.</p></div>
  <div class="form-group"><div class="form-group-header"><label for="merge-message">Commit message</label></div>
    <div class="form-group-body"><textarea class="form-control width-full" id="merge-message" name="merge_message_field" rows="5">${text.body}</textarea></div></div>`

    /** Whether the repository takes changes from the viewer at all (signed in, not archived). */
    const repoMayChange = (view: RepoView) => view.caller !== undefined && !view.repo.isArchived && !view.repo.isMirror

    /** The comment form, with close/reopen for the poster and the writers. */
    const commentForm = (view: RepoView, loaded: Loaded, shown: Shown) => {
      const ctx = view.ctx
      const url = pullUrl(view, loaded.issue.index)
      if (ctx.viewer === undefined) {
        return html`<p class="mt-4" data-testid="sign-in-to-comment"><a class="btn btn-sm mr-2" href="/user/login?redirect_to=${encodeURIComponent(url)}">Sign in</a> to join this conversation.</p>`
      }
      const mayState =
        !loaded.pull.hasMerged && (isWriter(view) || isPoster(view.caller, { posterId: loaded.issue.posterId }))
      return html`<form class="mt-4" method="post" action="${url}/comments" data-testid="comment-form">
  ${csrfField(ctx)}
  ${formError(shown.message)}
  ${textArea({ name: "content", label: "Add a comment", value: shown.content ?? "", rows: 6, hint: "Markdown: #1 links an issue, @name mentions someone." }, shown.errors ?? {})}
  <div class="mb-2" id="comment-preview" data-testid="comment-preview" aria-live="polite"></div>
  <div class="d-flex flex-items-center flex-wrap">
    <button class="btn mr-2" type="button" hx-post="${view.base}/pulls/markup" hx-include="closest form" hx-target="#comment-preview" hx-swap="innerHTML" data-testid="preview">Preview</button>
    ${
      mayState
        ? loaded.issue.isClosed
          ? html`<button class="btn mr-2" type="submit" name="status" value="reopen" data-testid="reopen">${icon("git-pull-request")} Reopen pull request</button>`
          : html`<button class="btn mr-2" type="submit" name="status" value="close" data-testid="close">${icon("git-pull-request-closed")} Close pull request</button>`
        : empty
    }
    <button class="btn btn-primary" type="submit" name="status" value="" data-testid="comment-button">Comment</button>
  </div>
</form>`
    }

    const conversation = (view: RepoView, loaded: Loaded, shown: Shown = {}) =>
      Effect.gen(function* () {
        const index = String(loaded.issue.index)
        const [issue, timeline, reactions, listed] = yield* Effect.all([
          issues.get(view, index),
          issues.timeline(view, index, undefined, undefined, undefined),
          extras.allReactions(view, index),
          reviews.list(view, index, undefined)
        ])
        const reviewById = new Map(listed.rows.map((r) => [r.id, r]))
        // The comments' markdown in one render (one mentions and one references lookup for all).
        const comments = timeline.rows.filter((event) => event.type === "comment" && event.body !== "")
        const texts = yield* markdown.renderMany(
          comments.map((event) => ({ text: event.body, cacheKey: `comment-${event.id}-${event.updated_at}` })),
          { mode: "comment", context: view.base, viewer: view.caller?.user }
        )
        const bodies = new Map(
          comments.flatMap((event, i) => {
            const out = texts[i]
            return out === undefined ? [] : [[event.id, html`<div class="markdown-body">${raw(out)}</div>`] as const]
          })
        )
        const read: Read = { issue, bodies, reactions: reactions.comments }
        const items = yield* Effect.forEach(timeline.rows, (event) =>
          timelineItem(view, loaded, event, reviewById, read)
        )
        const description =
          issue.body === ""
            ? html`<p class="color-fg-muted">No description provided.</p>`
            : yield* parts.rendered(view, issue.body)
        const box = yield* mergeBox(view, loaded, shown)
        // Reviewers: the latest review of each, and the requests still pending.
        const latest = new Map<string, PullReview>()
        for (const r of listed.rows) {
          const who = r.user?.login ?? r.team?.name
          if (who !== undefined && r.state !== "PENDING") latest.set(who, r)
        }
        const reviewerWords: Readonly<Record<string, string>> = {
          APPROVED: "approved",
          REQUEST_CHANGES: "requested changes",
          COMMENT: "commented",
          REQUEST_REVIEW: "review requested"
        }
        return yield* pullFrame.page(
          view,
          loaded,
          "conversation",
          html`<div class="d-flex flex-wrap">
  <div class="flex-auto col-12 col-md-9 pr-md-3">
    ${parts.commentBox(view, issue, { who: issue.user.login, at: issue.created_at, id: undefined }, description, reactions.issue, empty)}
    <div data-testid="timeline">${items}</div>
    ${box}
    ${commentForm(view, loaded, shown)}
  </div>
  <aside class="col-12 col-md-3 f6" data-testid="pull-sidebar">
    <h2 class="h6 color-fg-muted mb-1">Reviewers</h2>
    <ul class="list-style-none mb-3" data-testid="pull-reviewers">${
      latest.size === 0
        ? html`<li>No reviews</li>`
        : [...latest].map(
            ([who, r]) =>
              html`<li data-state="${r.state}">${user(who)} <span class="color-fg-muted">${reviewerWords[r.state] ?? r.state.toLowerCase()}</span></li>`
          )
    }</ul>
    <h2 class="h6 color-fg-muted mb-1">Labels</h2>
    <p class="mb-3" data-testid="issue-labels">${issue.labels.length === 0 ? "None yet" : issue.labels.map((l) => labelChip(l, `${view.base}/pulls?labels=${l.id}`))}</p>
    <h2 class="h6 color-fg-muted mb-1">Milestone</h2>
    <p class="mb-3" data-testid="issue-milestone">${issue.milestone === null ? "No milestone" : issue.milestone.title}</p>
    <h2 class="h6 color-fg-muted mb-1">Assignees</h2>
    <p class="mb-3" data-testid="issue-assignees">${
      (issue.assignees ?? []).length === 0 ? "No one" : (issue.assignees ?? []).map((a) => html`${user(a.login)} `)
    }</p>
  </aside>
</div>`,
          shown.status === undefined ? {} : { status: shown.status }
        )
      })

    // ---- Commits -----------------------------------------------------------------------------

    const commitsPage = (view: RepoView, loaded: Loaded) =>
      Effect.gen(function* () {
        const start = yield* pullFrame.startOf(loaded)
        const head = loaded.pull.headSha
        const listed =
          head === "" || start === "" || start === head
            ? { commits: [], total: 0 }
            : yield* listCommits(loaded.base.path, head, { offset: 0, limit: PULL_COMMITS }, undefined, start)
        const counts = { commits: listed.total, files: (yield* pullFrame.countsOf(loaded)).files }
        return yield* pullFrame.page(
          view,
          loaded,
          "commits",
          listed.commits.length === 0
            ? html`<div class="blankslate" data-testid="no-commits"><p>This pull request has no commits that ${loaded.pull.baseBranch} does not have.</p></div>`
            : html`${listed.total > listed.commits.length ? html`<p class="color-fg-muted mb-2">The latest ${listed.commits.length} of ${listed.total} commits.</p>` : empty}${commitList(view, listed.commits)}`,
          { counts }
        )
      })

    // ---- The forms ---------------------------------------------------------------------------

    /** The page shown again after a refused form of the merge box. */
    const refusedAgain = (view: RepoView, loaded: Loaded, failure: unknown, form?: URLSearchParams) =>
      Effect.gen(function* () {
        if (failure instanceof Errors.NotFound) return web.notFound(view.ctx)
        const status = Errors.statusOf(failure) ?? 400
        const message =
          typeof failure === "object" &&
          failure !== null &&
          "message" in failure &&
          typeof failure.message === "string" &&
          failure.message !== ""
            ? failure.message
            : "The request was refused."
        const fresh = yield* pulls.reload(loaded)
        return yield* conversation(view, fresh, {
          mergeMessage: message,
          ...(form === undefined ? {} : { mergeForm: form }),
          status
        })
      })

    /** A merge-box form of the URL's pull request: the writers' rule first, then `act`. */
    const boxAction =
      (
        what: string,
        act: (view: RepoView, loaded: Loaded, form: URLSearchParams) => Effect.Effect<unknown, unknown>,
        keepForm = false
      ) =>
      (view: RepoView, form: URLSearchParams) =>
        Effect.gen(function* () {
          const refusal = refusalPage(web, view, WRITE, what)
          if (refusal !== undefined) return refusal
          const loaded = yield* pullFrame.pullOf(view)
          if (loaded === undefined) return web.notFound(view.ctx)
          const result = yield* Effect.result(act(view, loaded, form))
          if (result._tag === "Failure")
            return yield* refusedAgain(view, loaded, result.failure, keepForm ? form : undefined)
          return web.redirect(view.ctx, pullUrl(view, loaded.issue.index))
        })

    const forbidden = (view: RepoView, what: string) =>
      Effect.succeed(
        web.errorPage(view.ctx, 403, "Forbidden", `Only those who may merge this pull request may ${what}.`)
      )

    const merge = (view: RepoView, form: URLSearchParams) =>
      Effect.gen(function* () {
        // A reader's forged form: 403 before anything (the API's 405 is for a client, not a person).
        if (!mayMerge(view)) return yield* forbidden(view, "merge it")
        return yield* boxAction(
          "merge pull requests",
          (v, loaded, f) =>
            Effect.gen(function* () {
              const style = f.get("do") ?? ""
              if (!(MERGE_DO as ReadonlyArray<string>).includes(style)) {
                return yield* Errors.validationFailed("Choose a merge style.")
              }
              const request: MergeRequest = {
                style: style as MergeDo,
                title: (f.get("merge_title_field") ?? "").trim(),
                message: (f.get("merge_message_field") ?? "").trim(),
                mergeCommitId: (f.get("merge_commit_id") ?? "").trim(),
                headCommitId: (f.get("head_commit_id") ?? "").trim(),
                baseCommitId: (f.get("base_commit_id") ?? "").trim(),
                forceMerge: f.get("force_merge") === "on",
                whenChecksSucceed: f.get("merge_when_checks_succeed") === "on",
                deleteBranch: f.get("delete_branch_after_merge") === "on"
              }
              // A page that saw no head (an empty form) is no page at all: refused, nothing merged.
              if (request.headCommitId === "" || request.baseCommitId === "") {
                return yield* Errors.validationFailed("The form is incomplete: open the pull request again.")
              }
              // As the API's merge: the feed, notifications and languages wait for the answer.
              return yield* answerFirst(
                pulls.merge(
                  v,
                  String(loaded.issue.index),
                  request.style === "manually-merged" ? { ...request, baseCommitId: undefined } : request
                )
              )
            }),
          true
        )(view, form)
      })

    return [
      frame.route("GET", "/:owner/:repo/pulls", { rule: READ }, (view) => parts.listPage(view, "pulls")),
      frame.route("GET", "/:owner/:repo/pulls/:index", { rule: READ }, (view) =>
        Effect.gen(function* () {
          const loaded = yield* pullFrame.pullOf(view)
          if (loaded === undefined) return web.notFound(view.ctx)
          return yield* conversation(view, loaded)
        })
      ),
      frame.route("GET", "/:owner/:repo/pulls/:index/commits", { rule: READ }, (view) =>
        Effect.gen(function* () {
          const loaded = yield* pullFrame.pullOf(view)
          if (loaded === undefined) return web.notFound(view.ctx)
          return yield* commitsPage(view, loaded)
        })
      ),
      frame.route("POST", "/:owner/:repo/pulls/:index/comments", { access: "signed-in", rule: READ }, (view, form) =>
        Effect.gen(function* () {
          const refusal = refusalPage(web, view, WRITE, "comment")
          if (refusal !== undefined) return refusal
          const loaded = yield* pullFrame.pullOf(view)
          if (loaded === undefined) return web.notFound(view.ctx)
          const index = String(loaded.issue.index)
          const content = form.get("content") ?? ""
          const status = form.get("status") ?? ""
          const change = status === "close" ? "closed" : status === "reopen" ? "open" : undefined
          if (content.trim() === "" && change === undefined) {
            return yield* conversation(view, loaded, {
              content,
              errors: { content: "Write a comment first." },
              status: 422
            })
          }
          if (change !== undefined && !(isWriter(view) || isPoster(view.caller, { posterId: loaded.issue.posterId }))) {
            return yield* conversation(view, loaded, {
              content,
              message: "Only the pull request's poster and the repository's writers may close or reopen it.",
              status: 403
            })
          }
          const result = yield* Effect.result(
            Effect.gen(function* () {
              if (content.trim() !== "") yield* issues.createComment(view, index, content, undefined)
              const current = loaded.issue.isClosed ? "closed" : "open"
              if (change !== undefined && change !== current) yield* pulls.edit(view, index, { state: change })
            })
          )
          if (result._tag === "Failure") {
            const failure = result.failure
            if (failure instanceof Errors.NotFound) return web.notFound(view.ctx)
            const fresh = yield* pulls.reload(loaded)
            return yield* conversation(view, fresh, {
              content,
              message: failure.message ?? "The comment could not be saved.",
              status: Errors.statusOf(failure) ?? 400
            })
          }
          return web.redirect(view.ctx, pullUrl(view, loaded.issue.index))
        })
      ),
      // The preview of a pull request's comment form (htmx), under the pull requests unit (the
      // issues' own, /{owner}/{repo}/markup, is under the issues unit: either may be off).
      frame.route("POST", "/:owner/:repo/pulls/markup", { rule: READ }, (view, form) =>
        Effect.gen(function* () {
          const text = form.get("content") ?? form.get("text") ?? ""
          return frame.fragment(
            view.ctx,
            text.trim() === ""
              ? html`<div class="Box p-2"><p class="color-fg-muted">Nothing to preview.</p></div>`
              : html`<div class="Box p-2">${yield* parts.rendered(view, text)}</div>`
          )
        })
      ),
      // htmx: the merge form's title and message for the style chosen (`?do=`).
      frame.route("GET", "/:owner/:repo/pulls/:index/merge_message", { rule: READ }, (view) =>
        Effect.gen(function* () {
          const loaded = yield* pullFrame.pullOf(view)
          const style = view.ctx.url.searchParams.get("do") ?? ""
          if (loaded === undefined || !(MERGE_DO as ReadonlyArray<string>).includes(style))
            return web.notFound(view.ctx)
          return frame.fragment(view.ctx, mergeText(yield* pulls.defaultMergeMessage(loaded, style as MergeDo)))
        })
      ),
      frame.route("POST", "/:owner/:repo/pulls/:index/merge", { access: "signed-in", rule: READ }, merge),
      frame.route(
        "POST",
        "/:owner/:repo/pulls/:index/cancel_auto_merge",
        { access: "signed-in", rule: READ },
        (view, form) =>
          boxAction("cancel scheduled merges", (v, loaded) => autoMerge.cancel(v, String(loaded.issue.index)))(
            view,
            form
          )
      ),
      frame.route("POST", "/:owner/:repo/pulls/:index/update", { access: "signed-in", rule: READ }, (view, form) =>
        boxAction("update pull requests' branches", (v, loaded, f) =>
          pulls.update(v, String(loaded.issue.index), f.get("style") === "rebase" ? "rebase" : "merge")
        )(view, form)
      ),
      frame.route("POST", "/:owner/:repo/pulls/:index/cleanup", { access: "signed-in", rule: READ }, (view, form) =>
        boxAction("delete branches", (v, loaded) => pulls.deleteBranch(v, String(loaded.issue.index)))(view, form)
      )
    ]
  })
