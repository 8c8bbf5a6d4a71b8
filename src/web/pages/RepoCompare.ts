// Compare, `/{owner}/{repo}/compare/{base}...{head}` (Forgejo's `routers/web/repo/compare.go`):
// what `head` has that `base` has not — its commits since their merge base and the diff from the
// merge base to `head` (git's three-dot diff). Each side is a branch, a tag or a commit id (in
// that order, as Forgejo resolves them) and may hold `/`. `/compare` alone offers a form (a GET:
// it works without JavaScript) whose answer is redirected to the compare URL.
//
// `head` may be a fork's branch, `owner:branch` or `owner/repo:branch` (PullsService.compare fetches
// its commits into this repository, as a pull request's). When the viewer is signed in and the head
// is a branch with commits the base branch lacks, the page offers the new pull request's form
// (title, description); its POST opens the pull request through PullsService and redirects to it,
// or shows the form again with the refusal next to it (no commits; one is open already, linked).
import { Effect, Option } from "effect"
import { listCommits } from "../../branches/Service.ts"
import { mergeBase, rangePatch } from "../../git/Patches.ts"
import type { RepoRule } from "../../http/Access.ts"
import * as Errors from "../../http/Errors.ts"
import { PullsService } from "../../pulls/Service.ts"
import { repoRefusal } from "../../repos/Policy.ts"
import { DIFF_ARGS, parseDiff } from "../code/Diff.ts"
import { type FieldErrors, field, textArea } from "../Form.ts"
import { empty, type Html, html } from "../Html.ts"
import { icon } from "../Icons.ts"
import { csrfField } from "../Layout.ts"
import type { ResolvedRef } from "../RepoData.ts"
import { makeDiffView } from "../RepoDiff.ts"
import { type RepoFrame, type RepoView, urlPath } from "../RepoFrame.ts"
import { refusalPage } from "../RepoRefusal.ts"
import { commitList } from "../RepoViews.ts"
import type { Web } from "../Web.ts"

/** Commits listed on a compare page at most (Forgejo lists 250 in a pull request's commits). */
export const COMPARE_COMMITS = 250

/** Opening a pull request (the API's `createPull`: a reader of the pulls unit, not archived). */
const OPEN_PULL: RepoRule = { role: "read", unit: "pulls", changes: "mirrors" }

/** What the new pull request form sent, and its refusal. */
interface Typed {
  readonly form?: URLSearchParams
  readonly errors?: FieldErrors
  /** An open pull request of the same branches: linked next to the refusal. */
  readonly existing?: number
  readonly status?: number
}

/** `owner:branch` or `owner/repo:branch` of a fork as the service's `owner:branch`; undefined for a plain name. */
const forkHead = (head: string): { readonly owner: string; readonly branch: string } | undefined => {
  const colon = head.indexOf(":")
  if (colon <= 0) return undefined
  const who = head.slice(0, colon)
  const slash = who.indexOf("/")
  return { owner: slash < 0 ? who : who.slice(0, slash), branch: head.slice(colon + 1) }
}

export const RepoComparePages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const { data } = frame
    const diffs = makeDiffView(frame)
    const pulls = yield* PullsService

    /** A branch, else a tag, else a commit, named exactly by `name`. */
    const resolveName = (view: RepoView, name: string) =>
      Effect.gen(function* () {
        const segments = name.split("/")
        for (const kind of ["branch", "tag", "commit"] as const) {
          const found = yield* data.resolve(view.handle, kind, segments)
          if (Option.isSome(found) && found.value.path === "") return found
        }
        return Option.none<ResolvedRef>()
      })

    const form = (view: RepoView, base: string, head: string, message?: string) =>
      Effect.gen(function* () {
        const refs = yield* data.refsOf(view.handle)
        const options = (selected: string) =>
          refs.branches.map((b) => html`<option value="${b}"${b === selected ? html` selected` : empty}>${b}</option>`)
        return yield* frame.page(
          view,
          {
            title: `Compare · ${view.owner.name}/${view.repo.name}`,
            tab: "code",
            ...(message === undefined ? {} : { status: 404 })
          },
          html`<h1 class="h3 mb-3">Compare changes</h1>
${message === undefined ? empty : html`<div class="flash flash-error mb-3" role="alert">${message}</div>`}
<form class="d-flex flex-wrap flex-items-end" method="get" action="${view.base}/compare">
  <div class="mr-2 mb-2"><label class="d-block f6 text-bold" for="compare-base">Base</label>
    <select class="form-select" id="compare-base" name="base">${options(base)}</select></div>
  <div class="mr-2 mb-2"><label class="d-block f6 text-bold" for="compare-head">Compare</label>
    <select class="form-select" id="compare-head" name="head">${options(head)}</select></div>
  <button class="btn mb-2" type="submit">${icon("git-compare")} Compare</button>
</form>`
        )
      })

    /** The base and head of the URL (`{base}...{head}`), or undefined when it is not one. */
    const specOf = (view: RepoView) => {
      const spec = view.rest.slice(1).join("/")
      const dots = spec.indexOf("...")
      if (dots <= 0 || dots + 3 >= spec.length) return undefined
      return { baseName: spec.slice(0, dots), headName: spec.slice(dots + 3) }
    }

    /**
     * The commits to compare: the merge base and the head, in this repository's objects; for a
     * fork's head, through PullsService (its commits fetched here), the base then a branch.
     */
    const endsOf = (view: RepoView, baseName: string, headName: string) =>
      Effect.gen(function* () {
        const fork = forkHead(headName)
        if (fork !== undefined) {
          const found = yield* Effect.option(pulls.compare(view, `${baseName}...${fork.owner}:${fork.branch}`))
          if (Option.isNone(found)) return undefined
          return { ancestor: Option.some(found.value.base), head: found.value.head, headIsBranch: true }
        }
        const [base, head] = yield* Effect.all([resolveName(view, baseName), resolveName(view, headName)])
        if (Option.isNone(base) || Option.isNone(head)) return undefined
        const ancestor = yield* Effect.orDie(mergeBase(view.handle.dir, base.value.commit, head.value.commit))
        return {
          ancestor,
          head: head.value.commit,
          headIsBranch: base.value.kind === "branch" && head.value.kind === "branch"
        }
      })

    /** The new pull request form, or why there is none (an open one exists; the viewer may not open one). */
    const pullForm = (view: RepoView, baseName: string, headName: string, subject: string, typed: Typed) =>
      Effect.gen(function* () {
        const ctx = view.ctx
        if (ctx.viewer === undefined || !view.repo.units.hasPullRequests) return empty
        if (repoRefusal(view.caller, view, OPEN_PULL) !== undefined) return empty
        const fork = forkHead(headName)
        const existing =
          typed.existing ??
          Option.match(
            yield* Effect.option(
              pulls.getByBaseHead(view, baseName, fork === undefined ? headName : `${fork.owner}:${fork.branch}`)
            ),
            { onNone: () => undefined, onSome: (l) => (l.issue.isClosed ? undefined : l.issue.index) }
          )
        const existingLink = (n: number) =>
          html`<a href="${view.base}/pulls/${n}" data-testid="existing-pull">#${n}</a>`
        if (existing !== undefined && typed.form === undefined) {
          return html`<div class="flash mb-3" data-testid="pull-exists">A pull request of these branches is open already: ${existingLink(existing)}.</div>`
        }
        const errors = typed.errors ?? {}
        const headError = errors.head
        return html`<form class="Box mb-4" method="post" action="${ctx.url.pathname}" data-testid="new-pull-form">
  <div class="Box-header"><h2 class="h4">Open a pull request</h2></div>
  <div class="Box-body">
    ${csrfField(ctx)}
    <p class="mb-2${headError === undefined ? "" : " color-fg-danger"}" id="field-head"${headError === undefined ? empty : html` aria-describedby="field-head-error"`}>Merge <span class="branch-name">${headName}</span> into <span class="branch-name">${baseName}</span></p>
    ${
      headError === undefined
        ? empty
        : html`<p class="note color-fg-danger mb-3" id="field-head-error" data-testid="error-head">${headError}${existing === undefined ? empty : html` ${existingLink(existing)}`}</p>`
    }
    ${field({ name: "title", label: "Title", value: typed.form?.get("title") ?? subject, required: true, autocomplete: "off" }, errors)}
    ${textArea({ name: "content", label: "Description", value: typed.form?.get("content") ?? "", rows: 8, hint: "Markdown." }, errors)}
    <button class="btn btn-primary" type="submit" data-testid="create-pull">${icon("git-pull-request")} Create pull request</button>
  </div>
</form>`
      })

    const compare = (view: RepoView, typed: Typed = {}) =>
      Effect.gen(function* () {
        const spec = specOf(view)
        if (spec === undefined) return web.notFound(view.ctx)
        const { baseName, headName } = spec
        const ends = yield* endsOf(view, baseName, headName)
        if (ends === undefined) return web.notFound(view.ctx)
        const status = typed.status === undefined ? {} : { status: typed.status }
        const title = `Comparing ${baseName}...${headName} · ${view.owner.name}/${view.repo.name}`
        const heading = html`<h1 class="h3 mb-3 wb-break-word" data-testid="compare-title">Comparing <span class="text-mono">${baseName}</span> ${icon("arrow-left")} <span class="text-mono">${headName}</span></h1>`
        const ancestor = ends.ancestor
        if (Option.isNone(ancestor)) {
          return yield* frame.page(
            view,
            { title, tab: "code", ...status },
            html`${heading}<div class="blankslate"><p>${baseName} and ${headName} have entirely different histories.</p></div>`
          )
        }
        const [listed, patch] = yield* Effect.all(
          [
            listCommits(view.handle.dir, ends.head, { offset: 0, limit: COMPARE_COMMITS }, undefined, ancestor.value),
            Effect.orDie(rangePatch(view.handle.dir, ancestor.value, ends.head, DIFF_ARGS))
          ],
          { concurrency: "unbounded" }
        )
        if (listed.total === 0) {
          return yield* frame.page(
            view,
            { title, tab: "code", ...status },
            html`${heading}${
              typed.errors?.head === undefined
                ? empty
                : html`<div class="flash flash-error mb-3" role="alert" data-testid="error-head">${typed.errors.head}</div>`
            }<div class="blankslate" data-testid="compare-same"><p>There is nothing to compare: ${headName} has no commits that ${baseName} does not have.</p></div>`
          )
        }
        // One commit: its subject is the title (Forgejo's); several: the branch's name.
        const subject =
          listed.total === 1
            ? (listed.commits[0]?.message.split("\n")[0] ?? headName)
            : (forkHead(headName)?.branch ?? headName)
        const form: Html = ends.headIsBranch ? yield* pullForm(view, baseName, headName, subject, typed) : empty
        const rendered = yield* diffs.render(view, parseDiff(patch.text), patch.truncated, { commit: ends.head })
        return yield* frame.page(
          view,
          { title, tab: "code", ...status },
          html`${heading}
${form}
<h2 class="h4 mb-2">${listed.total} ${listed.total === 1 ? "commit" : "commits"}${listed.total > listed.commits.length ? html` (the latest ${listed.commits.length} shown)` : empty}</h2>
<div class="mb-4">${commitList(view, listed.commits)}</div>
${rendered}`
        )
      })

    /** POST of the new pull request form: opened through PullsService, or the form again with the refusal. */
    const openPull = (view: RepoView, form: URLSearchParams) =>
      Effect.gen(function* () {
        const refusal = refusalPage(web, view, OPEN_PULL, "open pull requests")
        if (refusal !== undefined) return refusal
        const spec = specOf(view)
        if (spec === undefined) return web.notFound(view.ctx)
        const { baseName, headName } = spec
        const title = (form.get("title") ?? "").trim()
        if (title === "")
          return yield* compare(view, { form, errors: { title: "Give the pull request a title." }, status: 422 })
        const ends = yield* endsOf(view, baseName, headName)
        if (ends === undefined) return web.notFound(view.ctx)
        if (!ends.headIsBranch) {
          return yield* compare(view, {
            form,
            errors: { head: "Only a branch can be the head of a pull request." },
            status: 422
          })
        }
        const ahead =
          Option.isNone(ends.ancestor) || ends.ancestor.value === ends.head
            ? 0
            : (yield* listCommits(view.handle.dir, ends.head, { offset: 0, limit: 1 }, undefined, ends.ancestor.value))
                .total
        if (ahead === 0) {
          return yield* compare(view, {
            form,
            errors: { head: `There are no changes: ${headName} has no commits that ${baseName} does not have.` },
            status: 422
          })
        }
        const fork = forkHead(headName)
        const result = yield* Effect.result(
          pulls.create(view, {
            base: baseName,
            head: fork === undefined ? headName : `${fork.owner}:${fork.branch}`,
            title,
            body: form.get("content") ?? ""
          })
        )
        if (result._tag === "Failure") {
          const failure = result.failure
          if (failure instanceof Errors.NotFound) return web.notFound(view.ctx)
          const message = failure.message ?? "The pull request could not be opened."
          const duplicate = /issue_id: (\d+)/.exec(message)
          if (failure instanceof Errors.Conflict && duplicate !== null) {
            return yield* compare(view, {
              form,
              errors: { head: "A pull request of these branches is open already:" },
              existing: Number(duplicate[1]),
              status: 409
            })
          }
          return yield* compare(view, { form, errors: { head: message }, status: Errors.statusOf(failure) ?? 400 })
        }
        return web.redirect(view.ctx, `${view.base}/pulls/${result.success.issue.index}`)
      })

    // One route: `/compare/*` answers `/compare` too (the router registers both).
    return [
      frame.route("POST", "/:owner/:repo/compare/*", { access: "signed-in" }, openPull),
      frame.route("GET", "/:owner/:repo/compare/*", {}, (view) => {
        if (view.rest.length > 1 && view.rest.slice(1).join("/") !== "") return compare(view)
        const base = view.ctx.url.searchParams.get("base")
        const head = view.ctx.url.searchParams.get("head")
        if (base !== null && head !== null && base !== "" && head !== "")
          return Effect.succeed(web.redirect(view.ctx, `${view.base}/compare/${urlPath(base)}...${urlPath(head)}`))
        return form(view, view.repo.defaultBranch, view.repo.defaultBranch)
      })
    ]
  })
