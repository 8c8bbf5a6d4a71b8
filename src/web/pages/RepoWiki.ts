// The wiki in the browser (Forgejo's routers/web/repo/wiki.go, templates/repo/wiki/*), at Forgejo's
// URLs — the ones the API's `html_url` members point to: `/{owner}/{repo}/wiki` (the Home page, or
// a start page offering writers the first page), `/wiki/{page}` (rendered, `[[Page]]` links
// resolved, with the `_Sidebar` and `_Footer` pages), and the `action` query of Forgejo's forms:
// `?action=_pages` (also `/wiki/_pages`), `{page}?action=_revision` (the page's history),
// `?action=_new` (also `/wiki/_new`) and `{page}?action=_edit` for writers, and `/wiki/raw/{path}`
// (a file as it is: the images pages show). A POST with
// `action=_new` creates, `_delete` deletes, anything else edits the page of the path (Forgejo's
// `WikiPost`). Every change goes through WikiService, with the API's rules and messages.
//
// Access, as the API's wiki routes: reading needs the wiki unit (off: the 404 page); changing
// needs write on it in a repository that is neither archived nor a mirror (403/423 pages).
import { createHash } from "node:crypto"
import { Effect, Option } from "effect"
import type { RepoRule } from "../../http/Access.ts"
import * as Errors from "../../http/Errors.ts"
import { MarkdownRenderer } from "../../markdown/Service.ts"
import { repoRefusal } from "../../repos/Policy.ts"
import type { WikiCommit, WikiPage } from "../../wiki/Api.ts"
import { webPathFromRequest, webPathToUserTitle } from "../../wiki/Paths.ts"
import { REVISIONS_PER_PAGE, WikiService } from "../../wiki/Service.ts"
import { type FieldErrors, field, formError, textArea } from "../Form.ts"
import { empty, html, raw } from "../Html.ts"
import { icon } from "../Icons.ts"
import { csrfField } from "../Layout.ts"
import { shortSha, subjectOf } from "../RepoData.ts"
import type { RepoFrame, RepoView } from "../RepoFrame.ts"
import { refusalPage } from "../RepoRefusal.ts"
import { cloneBox, when } from "../RepoViews.ts"
import type { Form, Web } from "../Web.ts"
import { pageOf, pager } from "./Explore.ts"
import { rawFileResponse } from "./RepoRaw.ts"

const READ: RepoRule = { role: "read", unit: "wiki" }
const WRITE: RepoRule = { role: "write", unit: "wiki", changes: "content" }

/** Pages on a page of the pages list. */
export const WIKI_PAGES_PAGE_SIZE = 50

/** The Home page's web path (Forgejo shows it at `/wiki`). */
const HOME = "Home"

interface Typed {
  readonly title?: string
  readonly content?: string
  readonly message?: string
}

/** Which field of the page form a service's refusal concerns, and its words. */
const refusalOf = (error: { readonly message?: string }): { field?: string; words: string } => {
  const message = error.message ?? ""
  if (/^wiki title is reserved/.test(message))
    return { field: "title", words: `${message}: the wiki uses that name for its own pages.` }
  if (/^wiki page already exists/.test(message))
    return { field: "title", words: "A page with this title exists already." }
  if (/^title is required/.test(message)) return { field: "title", words: "Give the page a title." }
  return { words: message === "" ? "The page could not be saved." : message }
}

export const RepoWikiPages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const wiki = yield* WikiService
    const markdown = yield* MarkdownRenderer

    const pageUrl = (view: RepoView, webPath: string) => `${view.base}/wiki/${webPath}`
    const title = (view: RepoView, what: string) => `${what} · Wiki · ${view.owner.name}/${view.repo.name}`
    const writes = (view: RepoView) => view.caller !== undefined && repoRefusal(view.caller, view, WRITE) === undefined
    const refused = (view: RepoView) => refusalPage(web, view, WRITE, "change its wiki")

    /** The web path of the URL (Forgejo's `WebPathFromRequest` of the raw path after `/wiki/`), "" for none. */
    const webPathOf = (view: RepoView) => {
      const raw = (view.ctx.request.url.split("?")[0] ?? "").split("/").slice(4).join("/")
      return raw === "" ? "" : webPathFromRequest(raw)
    }

    /** A wiki text as HTML: links resolve under `/wiki`, `[[Page]]` links to pages. */
    const render = (view: RepoView, text: string) =>
      Effect.map(
        Effect.option(
          markdown.render({
            text,
            mode: "wiki",
            context: view.base,
            viewer: view.caller?.user,
            // Kept by the renderer: the same text is rendered once (the list is shown again and again).
            cacheKey: createHash("sha256").update(text).digest("base64url")
          })
        ),
        (rendered) =>
          Option.isSome(rendered) ? raw(rendered.value) : html`<pre class="hearth-commit-message">${text}</pre>`
      )

    const decode = (base64: string) => Buffer.from(base64, "base64").toString("utf8")

    /** The buttons above a wiki page: its history and edit form, the pages list, a new page. */
    const toolbar = (view: RepoView, webPath: string | undefined) => {
      const writer = writes(view)
      return html`<div class="d-flex flex-wrap flex-items-center">
  ${webPath === undefined ? empty : html`<a class="btn btn-sm mr-2 mb-2" href="${pageUrl(view, webPath)}?action=_revision" data-testid="wiki-history">${icon("history")} History</a>`}
  <a class="btn btn-sm mr-2 mb-2" href="${view.base}/wiki/?action=_pages" data-testid="wiki-pages">${icon("list-unordered")} Pages</a>
  ${writer && webPath !== undefined ? html`<a class="btn btn-sm mr-2 mb-2" href="${pageUrl(view, webPath)}?action=_edit" data-testid="wiki-edit">${icon("pencil")} Edit</a>` : empty}
  ${writer ? html`<a class="btn btn-sm btn-primary mb-2" href="${view.base}/wiki?action=_new" data-testid="wiki-new">${icon("plus")} New page</a>` : empty}
</div>`
    }

    const wikiClone = (view: RepoView) =>
      html`<details class="details-reset mt-4" data-testid="wiki-clone">
  <summary class="btn btn-sm">${icon("repo-clone")} Clone this wiki</summary>
  <div class="mt-2">${cloneBox(view, `${view.repo.name}.wiki`)}</div>
</details>`

    /** The wiki with no page yet: what it is for, and the first page's button for writers. */
    const startPage = (view: RepoView) =>
      frame.page(
        view,
        { title: title(view, "Welcome"), tab: "wiki" },
        html`<div class="blankslate" data-testid="wiki-start">
  ${icon("book", 24)}
  <h1 class="h2 mb-2">Welcome to the wiki</h1>
  <p>A wiki holds the repository's documentation, in pages anyone who may read the repository can read.</p>
  ${
    writes(view)
      ? html`<a class="btn btn-primary" href="${view.base}/wiki?action=_new" data-testid="wiki-create-first">Create the first page</a>`
      : html`<p class="color-fg-muted">It has no pages yet.</p>`
  }
</div>`
      )

    /** A wiki page, rendered, with its sidebar and footer pages. */
    const showPage = (view: RepoView, found: WikiPage) =>
      Effect.gen(function* () {
        const [content, sidebar, footer] = yield* Effect.all([
          render(view, decode(found.content_base64)),
          found.sidebar === "" ? Effect.succeed(undefined) : render(view, decode(found.sidebar)),
          found.footer === "" ? Effect.succeed(undefined) : render(view, decode(found.footer))
        ])
        const last = found.last_commit
        const writer = writes(view)
        return yield* frame.page(
          view,
          { title: title(view, found.title), tab: "wiki" },
          html`<div class="d-flex flex-wrap flex-items-start mb-3">
  <div class="flex-auto min-width-0 mr-3">
    <h1 class="h2 wb-break-word" data-testid="wiki-title">${found.title}</h1>
    <p class="f6 color-fg-muted">${last.author.name} edited this page ${when(last.author.date)} · <a class="Link--secondary" href="${pageUrl(view, found.sub_url)}?action=_revision">${found.commit_count} ${found.commit_count === 1 ? "revision" : "revisions"}</a></p>
  </div>
  ${toolbar(view, found.sub_url)}
</div>
<div class="d-md-flex">
  <div class="flex-auto min-width-0 markdown-body" data-testid="wiki-content">${content}</div>
  ${sidebar === undefined ? empty : html`<aside class="col-md-3 ml-md-4 mt-4 mt-md-0 Box p-3 markdown-body" data-testid="wiki-sidebar" aria-label="Sidebar">${sidebar}</aside>`}
</div>
${footer === undefined ? empty : html`<footer class="Box p-3 mt-4 markdown-body" data-testid="wiki-footer">${footer}</footer>`}
${wikiClone(view)}
${
  writer
    ? html`<details class="details-reset mt-3" data-testid="wiki-delete">
  <summary class="btn btn-sm btn-danger">${icon("trash")} Delete this page</summary>
  <div class="Box Box--danger mt-2 p-3">
    <p>The page <strong class="wb-break-word">${found.title}</strong> is removed from the wiki (its history stays in the wiki's git repository).</p>
    <form method="post" action="${pageUrl(view, found.sub_url)}?action=_delete">
      ${csrfField(view.ctx)}
      <button class="btn btn-danger" type="submit">Yes, delete this page</button>
    </form>
  </div>
</details>`
    : empty
}`
        )
      })

    const pagesList = (view: RepoView) =>
      Effect.gen(function* () {
        const window = pageOf(view.ctx, WIKI_PAGES_PAGE_SIZE)
        const listed = yield* Effect.option(wiki.pages(view, window.page, window.limit))
        if (Option.isNone(listed)) return yield* startPage(view)
        const { pages, total } = listed.value
        return yield* frame.page(
          view,
          { title: title(view, "Pages"), tab: "wiki" },
          html`<div class="d-flex flex-wrap flex-items-center mb-3">
  <h1 class="h2 flex-auto">Pages</h1>
  ${toolbar(view, undefined)}
</div>
<ul class="Box" data-testid="wiki-page-list">
  ${pages.map(
    (page) => html`<li class="Box-row d-flex flex-items-center">
    ${icon("file")} <a class="ml-2 flex-auto wb-break-word" href="${pageUrl(view, page.sub_url)}">${page.title}</a>
    <span class="color-fg-muted f6 ml-2">${when(page.last_commit.commiter.date)}</span>
  </li>`
  )}
</ul>
${pager(view.ctx, window, total)}
${wikiClone(view)}`
        )
      })

    const history = (view: RepoView, webPath: string) =>
      Effect.gen(function* () {
        const window = pageOf(view.ctx, REVISIONS_PER_PAGE)
        const found = yield* Effect.option(wiki.revisions(view, webPath, window.page))
        if (Option.isNone(found)) return web.notFound(view.ctx)
        const { commits, count } = found.value
        const name = webPathToUserTitle(webPath)
        const row = (commit: WikiCommit) => html`<li class="Box-row d-flex flex-items-center">
    <div class="flex-auto min-width-0">
      <span class="text-bold wb-break-word">${subjectOf(commit.message)}</span>
      <div class="f6 color-fg-muted mt-1">${commit.author.name} ${when(commit.author.date)}</div>
    </div>
    <span class="text-mono f6 ml-2" title="${commit.sha}">${shortSha(commit.sha)}</span>
  </li>`
        return yield* frame.page(
          view,
          { title: title(view, `History of ${name}`), tab: "wiki" },
          html`<div class="d-flex flex-wrap flex-items-center mb-3">
  <h1 class="h2 flex-auto wb-break-word">History of <a href="${pageUrl(view, webPath)}">${name}</a></h1>
  ${toolbar(view, webPath)}
</div>
<p class="color-fg-muted mb-2" data-testid="wiki-revision-count">${count} ${count === 1 ? "revision" : "revisions"}</p>
<ol class="Box list-style-none" data-testid="wiki-revisions">${commits.map(row)}</ol>
${pager(view.ctx, window, count)}`
        )
      })

    /** The new or edit form; `editing` is the web path of the page being edited. */
    const formPage = (
      view: RepoView,
      editing: string | undefined,
      typed: Typed,
      errors: FieldErrors,
      message?: string
    ) =>
      frame.page(
        view,
        {
          title: title(view, editing === undefined ? "New page" : `Edit ${webPathToUserTitle(editing)}`),
          tab: "wiki",
          ...(message !== undefined || Object.keys(errors).length > 0 ? { status: 422 } : {})
        },
        html`<div class="container-md">
<h1 class="h2 mb-3 wb-break-word">${editing === undefined ? "New page" : html`Edit ${webPathToUserTitle(editing)}`}</h1>
${formError(message)}
<form method="post" action="${editing === undefined ? `${view.base}/wiki?action=_new` : `${pageUrl(view, editing)}?action=_edit`}" data-testid="wiki-form">
  ${csrfField(view.ctx)}
  ${field({ name: "title", label: "Title", value: typed.title ?? "", required: true, autocomplete: "off" }, errors)}
  ${textArea({ name: "content", label: "Content", value: typed.content ?? "", rows: 16, required: true, hint: "Markdown; [[Page name]] links to another page of the wiki." }, errors)}
  ${field({ name: "message", label: "Edit message (optional)", value: typed.message ?? "", autocomplete: "off" }, errors)}
  <button class="btn btn-primary" type="submit">${editing === undefined ? "Save page" : "Save changes"}</button>
  ${editing === undefined ? empty : html`<a class="btn ml-2" href="${pageUrl(view, editing)}">Cancel</a>`}
</form>
</div>`
      )

    const typedOf = (form: Form): Typed => ({
      title: form.get("title") ?? "",
      content: form.get("content") ?? "",
      message: form.get("message") ?? ""
    })

    /** What the form must have before it goes to the service (Forgejo's `NewWikiForm`: both required). */
    const missing = (typed: Typed): FieldErrors => {
      const errors: Record<string, string> = {}
      if ((typed.title ?? "").trim() === "") errors.title = "Give the page a title."
      if ((typed.content ?? "") === "") errors.content = "Write the page's content."
      return errors
    }

    const options = (typed: Typed) => ({
      title: (typed.title ?? "").trim(),
      content_base64: Buffer.from(typed.content ?? "", "utf8").toString("base64"),
      message: (typed.message ?? "").trim()
    })

    const refusedForm = (view: RepoView, editing: string | undefined, typed: Typed, error: Errors.ApiError) => {
      if (error instanceof Errors.NotFound) return Effect.succeed(web.notFound(view.ctx))
      const { field: name, words } = refusalOf(error as { readonly message?: string })
      return formPage(
        view,
        editing,
        typed,
        name === undefined ? {} : { [name]: words },
        name === undefined ? words : undefined
      )
    }

    /** `/wiki/raw/{path}`: a file of the wiki as it is, served as the code's raw files are. */
    const rawFile = (view: RepoView) =>
      Effect.gen(function* () {
        const rest = (view.ctx.request.url.split("?")[0] ?? "").split("/").slice(5).join("/")
        if (rest === "") return web.notFound(view.ctx)
        const found = yield* Effect.option(wiki.raw(view, webPathFromRequest(rest)))
        if (Option.isNone(found)) return web.notFound(view.ctx)
        const { path, bytes } = found.value
        return rawFileResponse(path.slice(path.lastIndexOf("/") + 1), bytes, "private, max-age=300")
      })

    const get = (view: RepoView) =>
      Effect.gen(function* () {
        if (view.rest[1] === "raw") return yield* rawFile(view)
        const params = view.ctx.url.searchParams
        const action = params.get("action") ?? ""
        const webPath = webPathOf(view)
        if (webPath === "_pages" || (action === "_pages" && webPath === "")) return yield* pagesList(view)
        if (webPath === "_new" || action === "_new") {
          if (view.ctx.viewer === undefined) return web.redirect(view.ctx, web.loginUrl(view.ctx))
          return refused(view) ?? (yield* formPage(view, undefined, { title: params.get("title") ?? "" }, {}))
        }
        const target = webPath === "" ? HOME : webPath
        if (action === "_revision") return yield* history(view, target)
        if (action === "_edit") {
          if (view.ctx.viewer === undefined) return web.redirect(view.ctx, web.loginUrl(view.ctx))
          const refusal = refused(view)
          if (refusal !== undefined) return refusal
          const found = yield* Effect.option(wiki.page(view, target))
          if (Option.isNone(found)) return web.notFound(view.ctx)
          return yield* formPage(
            view,
            found.value.sub_url,
            {
              title: found.value.title,
              content: decode(found.value.content_base64)
            },
            {}
          )
        }
        const found = yield* Effect.option(wiki.page(view, target))
        if (Option.isSome(found)) return yield* showPage(view, found.value)
        if (webPath !== "") return web.notFound(view.ctx)
        // No Home page: the start page for an empty wiki, else the list of its pages (as Forgejo).
        const any = yield* Effect.option(wiki.pages(view, 1, 1))
        return Option.isNone(any) ? yield* startPage(view) : web.redirect(view.ctx, `${view.base}/wiki/?action=_pages`)
      })

    const post = (view: RepoView, form: Form) =>
      Effect.gen(function* () {
        const refusal = refused(view)
        if (refusal !== undefined) return refusal
        const doer = view.ctx.viewer!
        const action = view.ctx.url.searchParams.get("action") ?? ""
        const webPath = webPathOf(view)
        if (action === "_delete") {
          if (webPath === "") return web.notFound(view.ctx)
          const removed = yield* Effect.result(wiki.remove(view, doer, webPath))
          if (removed._tag === "Failure") {
            if (removed.failure instanceof Errors.NotFound) return web.notFound(view.ctx)
            return web.errorPage(
              view.ctx,
              Errors.statusOf(removed.failure) ?? 400,
              "Not deleted",
              removed.failure.message
            )
          }
          return web.redirect(view.ctx, `${view.base}/wiki/?action=_pages`)
        }
        const typed = typedOf(form)
        const editing = action === "_new" || webPath === "_new" ? undefined : webPath === "" ? HOME : webPath
        const errors = missing(typed)
        if (Object.keys(errors).length > 0) return yield* formPage(view, editing, typed, errors)
        const saved = yield* Effect.result(
          editing === undefined
            ? wiki.create(view, doer, options(typed))
            : wiki.edit(view, doer, editing, options(typed))
        )
        if (saved._tag === "Failure") return yield* refusedForm(view, editing, typed, saved.failure)
        return web.redirect(view.ctx, pageUrl(view, saved.success.sub_url))
      })

    return [
      // `/wiki/*` answers `/wiki` and `/wiki/` too.
      frame.route("GET", "/:owner/:repo/wiki/*", { rule: READ }, get),
      frame.route("POST", "/:owner/:repo/wiki/*", { access: "signed-in", rule: READ }, post)
    ]
  })
