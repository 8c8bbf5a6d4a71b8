// The frame of every pull request page (Forgejo's `templates/repo/issue/view_title.tmpl` and the
// pull request tabs): the title and number, the state badge (Open, Merged, Closed, Draft — a
// work-in-progress title), "{poster} wants to merge N commits into {base} from {head}" with links
// to both branches (a fork's head as `owner:branch`), and the tabs Conversation `/pulls/{n}`,
// Commits `/pulls/{n}/commits` and Files changed `/pulls/{n}/files`, with their counts.
//
// The counts are read from git in the base repository, where the head's commits live
// (`refs/pull/{n}/head`): from the merge base with the base branch's tip while open, from the
// stored merge base once merged (the API's `pullCommits`/`pullFiles` start the same way).
import { Effect, Option } from "effect"
import * as Blame from "../git/Blame.ts"
import * as Git from "../git/Git.ts"
import * as Merge from "../git/Merge.ts"
import { isWorkInProgress } from "../issues/Present.ts"
import { type Loaded, PullsService } from "../pulls/Service.ts"
import { UsersRepo } from "../users/Repo.ts"
import { empty, type Html, html } from "./Html.ts"
import { icon } from "./Icons.ts"
import { type RepoFrame, type RepoView, repoBase, segment, urlPath } from "./RepoFrame.ts"
import { when } from "./RepoViews.ts"
import type { Form } from "./Web.ts"

export type PullTab = "conversation" | "commits" | "files"

/** `/{owner}/{repo}/pulls/{n}` of a pull request. */
export const pullUrl = (view: RepoView, index: number) => `${view.base}/pulls/${index}`

/** The state a pull request shows: merged, closed, draft (a work-in-progress title) or open. */
export const pullState = (loaded: Loaded): "merged" | "closed" | "draft" | "open" =>
  loaded.pull.hasMerged
    ? "merged"
    : loaded.issue.isClosed
      ? "closed"
      : isWorkInProgress(loaded.issue.title)
        ? "draft"
        : "open"

const STATE_BADGES = {
  open: ["State--open", "git-pull-request", "Open"],
  draft: ["State--draft", "git-pull-request-draft", "Draft"],
  merged: ["State--merged", "git-merge", "Merged"],
  closed: ["State--closed", "git-pull-request-closed", "Closed"]
} as const

/** The head as the pull request names it: `branch`, or `owner:branch` from another repository. */
export const headLabel = (loaded: Loaded) =>
  loaded.head !== undefined && loaded.head.repo.id !== loaded.base.repo.id
    ? `${loaded.head.owner.name}:${loaded.pull.headBranch}`
    : loaded.pull.headBranch

/** What the tabs count: the commits and the changed files between the start and the head. */
export interface PullCounts {
  readonly commits: number
  readonly files: number
}

/** What deciding whether a review comment is outdated needs of it. */
export interface PlacedComment {
  readonly id: number
  readonly path: string
  /** Forgejo's signed line: negative on the old side. */
  readonly line: number
  /** The commit `git blame` named for the line when the comment was made. */
  readonly commitSha: string
}

/**
 * The review comments the head's later commits made outdated (Forgejo's `checkInvalidation`,
 * which stores `invalidated` when the head moves; computed here when read, one `git blame` per
 * file): a new-side comment whose line the file at `head` no longer has, or whose line blame now
 * names another commit than the one it was made on. Old-side lines are the base's; the files page
 * also counts a comment whose line its diff no longer shows.
 */
export const outdatedComments = (repoPath: string, head: string, comments: ReadonlyArray<PlacedComment>) =>
  Effect.gen(function* () {
    const outdated = new Set<number>()
    if (!Git.isSha(head)) return outdated
    const byPath = new Map<string, Array<PlacedComment>>()
    for (const c of comments) {
      if (c.line > 0 && c.commitSha !== "" && c.commitSha !== head)
        byPath.set(c.path, [...(byPath.get(c.path) ?? []), c])
    }
    for (const [path, placed] of byPath) {
      // No such path at the head (deleted or renamed since): every comment on it is outdated.
      const parts = Option.getOrElse(yield* Effect.option(Blame.blame(repoPath, head, path)), () => [])
      const shaAt = new Map<number, string>()
      for (const part of parts) for (let i = 0; i < part.lines.length; i++) shaAt.set(part.start + i, part.commit.sha)
      for (const c of placed) if (shaAt.get(c.line) !== c.commitSha) outdated.add(c.id)
    }
    return outdated
  })

type RouteOptions = Parameters<RepoFrame["route"]>[2]
type Answer = ReturnType<Parameters<RepoFrame["route"]>[3]>

export const makePullFrame = (frame: RepoFrame) =>
  Effect.gen(function* () {
    const pulls = yield* PullsService
    const users = yield* UsersRepo

    /** The pull request of the URL (`/pulls/{index}/…`); undefined for what the viewer may not see. */
    const pullOf = (view: RepoView) =>
      Effect.gen(function* () {
        const index = view.rest[1] ?? ""
        if (!/^\d{1,15}$/.test(index)) return undefined
        return Option.getOrUndefined(yield* Effect.option(pulls.get(view, index)))
      })

    /**
     * The commit the pull request's commits and files start from: the stored merge base once
     * merged (or when the base branch is gone), else the merge base of the base branch's tip and
     * the head.
     */
    const startOf = (loaded: Loaded) =>
      Effect.gen(function* () {
        const { pull, base } = loaded
        if (pull.hasMerged && pull.mergeBase !== "") return pull.mergeBase
        const tip = Option.getOrUndefined(yield* Effect.orDie(Git.revParse(base.path, `refs/heads/${pull.baseBranch}`)))
        if (tip === undefined || pull.headSha === "") return pull.mergeBase
        return Option.getOrElse(yield* Merge.mergeBase(base.path, tip, pull.headSha), () => tip)
      })

    const countsOf = (loaded: Loaded) =>
      Effect.gen(function* () {
        const { pull, base } = loaded
        if (pull.headSha === "") return { commits: 0, files: 0 } satisfies PullCounts
        const start = yield* startOf(loaded)
        if (start === "" || start === pull.headSha) return { commits: 0, files: 0 } satisfies PullCounts
        const [count, stat] = yield* Effect.all(
          [
            Effect.orDie(
              Git.inRepo(base.path, ["rev-list", "--count", "--end-of-options", pull.headSha, `^${start}`, "--"])
            ),
            pull.stats.headSha === pull.headSha && pull.stats.mergeBase === start
              ? Effect.succeed(pull.stats)
              : Merge.shortStat(base.path, start, pull.headSha)
          ],
          { concurrency: "unbounded" }
        )
        return { commits: Number(count.stdout.toString("utf8").trim()) || 0, files: stat.files } satisfies PullCounts
      })

    const userLink = (login: string) => html`<a class="Link--primary text-bold" href="/${segment(login)}">${login}</a>`

    /** A branch of a side as a link (a deleted head repository: its name only). */
    const branchLink = (side: Loaded["head"], branch: string, label: string) =>
      side === undefined
        ? html`<span class="branch-name text-mono" data-testid="pull-head-branch">${label}</span>`
        : html`<a class="branch-name text-mono" href="${repoBase(side.owner.name, side.repo.name)}/src/branch/${urlPath(branch)}">${label}</a>`

    /**
     * The header and the tabs; without `counts` the tabs show no counters (a streamed page starts
     * before git has counted anything).
     */
    const header = (view: RepoView, loaded: Loaded, current: PullTab, counts: PullCounts | undefined) =>
      Effect.gen(function* () {
        const { pull, issue, base, head } = loaded
        const [poster, merger] = yield* Effect.all([
          users.findById(issue.posterId),
          pull.mergedBy === null ? Effect.succeedNone : users.findById(pull.mergedBy)
        ])
        const posterName = Option.isSome(poster) ? poster.value.name : "Ghost"
        const state = pullState(loaded)
        const [badgeClass, glyph, label] = STATE_BADGES[state]
        const commits =
          counts === undefined ? "commits" : `${counts.commits} ${counts.commits === 1 ? "commit" : "commits"}`
        const into = branchLink(base, pull.baseBranch, pull.baseBranch)
        const from = html`<span data-testid="pull-head">${branchLink(head, pull.headBranch, headLabel(loaded))}</span>`
        const summary =
          state === "merged"
            ? html`${userLink(Option.isSome(merger) ? merger.value.name : posterName)} merged ${commits} into ${into} from ${from}${
                pull.mergedAt === null ? empty : html` ${when(pull.mergedAt.toISOString())}`
              }`
            : html`${userLink(posterName)} wants to merge ${commits} into ${into} from ${from}`
        const url = pullUrl(view, issue.index)
        const tab = (name: PullTab, href: string, text: string, glyphName: string, n: number | undefined) =>
          html`<a class="UnderlineNav-item" href="${href}" data-testid="pull-tab-${name}"${
            current === name ? html` aria-current="page"` : empty
          }>${icon(glyphName)}<span class="ml-1">${text}</span>${n === undefined ? empty : html` <span class="Counter">${n}</span>`}</a>`
        return html`<div class="mb-3" data-testid="pull-header">
  <h1 class="h2 wb-break-word" data-testid="pull-title">${issue.title} <span class="color-fg-muted">#${issue.index}</span></h1>
  <p class="mt-2 mb-3 d-flex flex-items-center flex-wrap">
    <span class="State ${badgeClass} mr-2" data-testid="pull-state">${icon(glyph)} ${label}</span>
    <span class="wb-break-word" data-testid="pull-summary">${summary}</span>
  </p>
  <nav class="UnderlineNav" aria-label="Pull request">
    <div class="UnderlineNav-body">
      ${tab("conversation", url, "Conversation", "comment-discussion", issue.numComments)}
      ${tab("commits", `${url}/commits`, "Commits", "git-commit", counts?.commits)}
      ${tab("files", `${url}/files`, "Files changed", "file-diff", counts?.files)}
    </div>
  </nav>
</div>`
      })

    /** A pull request page: the repository's frame, the pull request's header and tabs, then `main`. */
    const page = (
      view: RepoView,
      loaded: Loaded,
      current: PullTab,
      main: Html,
      options: { readonly status?: number; readonly counts?: PullCounts } = {}
    ) =>
      Effect.gen(function* () {
        const counts = options.counts ?? (yield* countsOf(loaded))
        const top = yield* header(view, loaded, current, counts)
        const what = current === "conversation" ? "" : current === "commits" ? "Commits · " : "Files changed · "
        return yield* frame.page(
          view,
          {
            title: `${what}${loaded.issue.title} #${loaded.issue.index} · ${view.owner.name}/${view.repo.name}`,
            tab: "pulls",
            ...(options.status === undefined ? {} : { status: options.status })
          },
          html`${top}${main}`
        )
      })

    /**
     * A route of one pull request, `/{owner}/{repo}/pulls/{index}/…`: frame.route's refusals, the
     * pull request loaded (PullsService.get: its 404 for one the viewer may not see), then
     * `refuse`'s page when it has one (a form's own refusal), else `handler`.
     */
    const route = (
      method: "GET" | "POST",
      path: string,
      options: RouteOptions,
      handler: (view: RepoView, loaded: Loaded, form: Form) => Answer,
      refuse?: (view: RepoView, loaded: Loaded) => Effect.Effect<Effect.Success<Answer> | undefined, unknown>
    ) =>
      frame.route(method, path, options, (view, form) =>
        Effect.gen(function* () {
          const loaded = yield* pulls.get(view, view.rest[1] ?? "")
          const refused = refuse === undefined ? undefined : yield* refuse(view, loaded)
          return refused ?? (yield* handler(view, loaded, form))
        })
      )

    return { pullOf, startOf, countsOf, header, page, route }
  })

export type PullFrame = Effect.Success<ReturnType<typeof makePullFrame>>
