// The frame of every repository page (Forgejo's `templates/repo/header.tmpl`): owner/name, the
// private/archived/mirror/fork-of badges, description and topics, the watch/star/fork buttons with
// their counts (forms that work without JavaScript; htmx swaps only the buttons when it runs), and
// the tabs, each shown only when its unit is on (Settings only to admins).
//
// Every repository page is a `repoRoute`: the repository of the URL is opened for the web's viewer
// by `ReposService.assign` with the rule the API's read routes use (read on code), so visibility
// (a 404 page), units and renames (a redirect to the new name, the rest of the URL kept) hold
// exactly as in the API. A page never looks a repository up itself.
import { Effect, Option, type Stream } from "effect"
import { HttpServerResponse } from "effect/http"
import { ContentsService, type RepoHandle } from "../contents/Service.ts"
import type { RepoRule } from "../http/Access.ts"
import * as Errors from "../http/Errors.ts"
import { atLeast } from "../lib/AccessMode.ts"
import type { OpenedRepository } from "../repos/Assignment.ts"
import { RepoPolicy } from "../repos/Policy.ts"
import { ReposService } from "../repos/Service.ts"
import { SocialService } from "../social/Service.ts"
import { UsersRepo } from "../users/Repo.ts"
import { empty, type Html, html, raw } from "./Html.ts"
import { icon } from "./Icons.ts"
import { csrfField } from "./Layout.ts"
import { makeRepoData, type RepoData } from "./RepoData.ts"
import { type Access, type Form, htmlResponse, STREAM_MARK, type Web, type WebContext } from "./Web.ts"

/** A URL path segment. */
export const segment = (value: string) => encodeURIComponent(value)

/** A repository path (`a/b c`) as URL path segments (`a/b%20c`). */
export const urlPath = (path: string) => path.split("/").map(encodeURIComponent).join("/")

/** `/{owner}/{repo}`, encoded. */
export const repoBase = (owner: string, name: string) => `/${segment(owner)}/${segment(name)}`

/** The repository page's view of the request: the opened repository and the URL's segments. */
export interface RepoView extends OpenedRepository {
  readonly ctx: WebContext
  readonly handle: RepoHandle
  /** `/{owner}/{repo}` (encoded). */
  readonly base: string
  /** The URL's path segments after `/{owner}/{repo}`, decoded. */
  readonly rest: ReadonlyArray<string>
}

export type Tab = "code" | "issues" | "pulls" | "releases" | "wiki" | "settings"

export interface FrameOptions {
  readonly title: string
  readonly tab: Tab
  readonly status?: number
  /** Extra `<head>` elements (the repository home's feed link). */
  readonly head?: Html
}

/** Forgejo's `reqRepoReader(unit.TypeCode)`, as the API's contents and commit routes. */
const READ_CODE: RepoRule = { role: "read", unit: "code" }

/** The URL's path segments, decoded; undefined when one is not valid percent-encoding. */
const segmentsOf = (pathname: string): Array<string> | undefined => {
  try {
    return pathname
      .split("/")
      .slice(1)
      .map((s) => decodeURIComponent(s))
  } catch {
    return undefined
  }
}

/** First segments that are not accounts: the API, static assets, well-known URIs. */
const MACHINE_PATHS: ReadonlySet<string> = new Set(["api", "assets", ".well-known"])

const count = (n: number) => html`<span class="Counter">${n}</span>`

export const makeRepoFrame = (web: Web) =>
  Effect.gen(function* () {
    const repos = yield* ReposService
    const contents = yield* ContentsService
    const social = yield* SocialService
    const policy = yield* RepoPolicy
    const users = yield* UsersRepo
    const data: RepoData = yield* makeRepoData

    /** The repository's fork source, when the viewer may see it. */
    const sourceOf = (view: RepoView) =>
      Effect.gen(function* () {
        if (view.repo.forkId === null) return undefined
        const source = yield* Effect.option(repos.getById(view.repo.forkId))
        if (Option.isNone(source)) return undefined
        const owner = yield* users.findById(source.value.ownerId)
        if (Option.isNone(owner)) return undefined
        const access = yield* policy.access(view.caller, source.value, owner.value)
        return atLeast(access.mode, "read") ? { owner: owner.value.name, name: source.value.name } : undefined
      })

    /** The watch, star and fork buttons (`id="repo-social"`, what htmx swaps after a click). */
    const socialButtons = (view: RepoView) =>
      Effect.gen(function* () {
        const { ctx, repo, base } = view
        const viewer = ctx.viewer
        if (viewer === undefined) {
          const login = `/user/login?redirect_to=${encodeURIComponent(base)}`
          return html`<div class="d-flex flex-items-center" id="repo-social" data-testid="repo-social">
  <a class="btn btn-sm mr-2" href="${login}">${icon("eye")} Watch ${count(repo.numWatches)}</a>
  <a class="btn btn-sm mr-2" href="${login}">${icon("star")} Star ${count(repo.numStars)}</a>
  <a class="btn btn-sm" href="${login}">${icon("repo-forked")} Fork ${count(repo.numForks)}</a>
</div>`
        }
        const [watching, starred] = yield* Effect.all([
          social.isWatching(viewer.user, repo),
          social.isStarred(viewer.user, repo)
        ])
        const button = (action: string, label: string, name: string, n: number, pressed: boolean) =>
          html`<form class="d-inline mr-2" method="post" action="${base}/action/${action}" hx-post="${base}/action/${action}" hx-target="#repo-social" hx-swap="outerHTML">
    ${csrfField(ctx)}
    <button class="btn btn-sm" type="submit" aria-pressed="${pressed ? "true" : "false"}" data-testid="${action}">${icon(name)} ${label} ${count(n)}</button>
  </form>`
        return html`<div class="d-flex flex-items-center" id="repo-social" data-testid="repo-social">
  ${button(watching ? "unwatch" : "watch", watching ? "Unwatch" : "Watch", "eye", repo.numWatches, watching)}
  ${button(starred ? "unstar" : "star", starred ? "Unstar" : "Star", starred ? "star-fill" : "star", repo.numStars, starred)}
  <a class="btn btn-sm" href="${base}/fork" data-testid="fork">${icon("repo-forked")} Fork ${count(repo.numForks)}</a>
</div>`
      })

    const tabs = (view: RepoView, current: Tab) => {
      const { repo, base, access } = view
      const tab = (name: Tab, href: string, label: string, glyph: string, n?: number) =>
        html`<a class="UnderlineNav-item" href="${href}"${current === name ? html` aria-current="page"` : empty}>${icon(glyph)}<span class="ml-1">${label}</span>${
          n === undefined || n === 0 ? empty : html` ${count(n)}`
        }</a>`
      return html`<nav class="UnderlineNav hearth-repo-tabs" aria-label="Repository">
  <div class="UnderlineNav-body">
    ${tab("code", base, "Code", "code")}
    ${repo.units.hasIssues ? tab("issues", `${base}/issues`, "Issues", "issue-opened", repo.numIssues - repo.numClosedIssues) : empty}
    ${repo.units.hasPullRequests ? tab("pulls", `${base}/pulls`, "Pull requests", "git-pull-request", repo.numPulls - repo.numClosedPulls) : empty}
    ${repo.units.hasReleases ? tab("releases", `${base}/releases`, "Releases", "tag", repo.numReleases) : empty}
    ${repo.units.hasWiki ? tab("wiki", `${base}/wiki`, "Wiki", "book") : empty}
    ${atLeast(access.mode, "admin") ? tab("settings", `${base}/settings`, "Settings", "gear") : empty}
  </div>
</nav>`
    }

    /** A repository page: the frame around `main`. */
    const page = (view: RepoView, options: FrameOptions, main: Html) =>
      Effect.map(framed(view, options, main), (whole) =>
        web.page(
          view.ctx,
          {
            title: options.title,
            ...(options.status === undefined ? {} : { status: options.status }),
            ...(options.head === undefined ? {} : { head: options.head })
          },
          whole
        )
      )

    /** A repository page sent while it is made: `body`'s chunks in the frame (Web.ts `streamPage`). */
    const stream = (view: RepoView, options: FrameOptions, body: Stream.Stream<string>) =>
      Effect.map(framed(view, options, raw(STREAM_MARK)), (whole) =>
        web.streamPage(
          view.ctx,
          { title: options.title, ...(options.status === undefined ? {} : { status: options.status }) },
          whole,
          body
        )
      )

    /** The frame's HTML around `main`. */
    const framed = (view: RepoView, options: FrameOptions, main: Html) =>
      Effect.gen(function* () {
        const { repo, owner, base } = view
        const [source, buttons] = yield* Effect.all([sourceOf(view), socialButtons(view)])
        const glyph = repo.isPrivate ? "lock" : repo.isMirror ? "mirror" : repo.isFork ? "repo-forked" : "repo"
        const head = html`<div class="hearth-repo-head pt-3">
  <div class="container-lg p-responsive">
    <div class="d-flex flex-wrap flex-items-center">
      <div class="d-flex flex-items-center flex-wrap f3 mr-3 mb-2 wb-break-word" data-testid="repo-title">
        ${icon(glyph)}
        <a class="ml-2" href="/${segment(owner.name)}">${owner.name}</a><span class="mx-1 color-fg-muted">/</span><a class="text-bold" href="${base}">${repo.name}</a>
        <span class="Label ml-2">${repo.isPrivate ? "Private" : "Public"}</span>
        ${repo.isArchived ? html`<span class="Label Label--attention ml-2">Archived</span>` : empty}
        ${repo.isMirror ? html`<span class="Label ml-2">Mirror</span>` : empty}
        ${repo.isTemplate ? html`<span class="Label ml-2">Template</span>` : empty}
      </div>
      <div class="ml-auto mb-2">${buttons}</div>
    </div>
    ${
      repo.isFork
        ? html`<p class="f6 color-fg-muted mt-n2 mb-2" data-testid="fork-of">forked from ${
            source === undefined
              ? html`a repository you cannot see`
              : html`<a href="${repoBase(source.owner, source.name)}">${source.owner}/${source.name}</a>`
          }</p>`
        : empty
    }
    ${tabs(view, options.tab)}
  </div>
</div>`
        return html`${head}
<div class="container-lg p-responsive py-4 hearth-repo">
${main}
</div>`
      })

    /** The about part of the home page: description, website, topics. */
    const about = (view: RepoView) => {
      const { repo } = view
      return html`${repo.description === "" ? empty : html`<p class="f4 mb-2 wb-break-word" data-testid="repo-description">${repo.description}</p>`}
${
  repo.website === ""
    ? empty
    : html`<p class="mb-2">${icon("link")} <a href="${repo.website}" rel="nofollow noopener noreferrer">${repo.website}</a></p>`
}
${
  repo.topics.length === 0
    ? empty
    : html`<p class="mb-2" data-testid="repo-topics">${repo.topics.map(
        (topic) =>
          html`<a class="Label Label--accent mr-1 mb-1 d-inline-block" href="/explore/repos?q=${encodeURIComponent(topic)}">${topic}</a>`
      )}</p>`
}`
    }

    /**
     * A repository route: `handler` gets the repository opened for the viewer (404 page when it
     * may not see it, a redirect to its new name after a rename) and the URL's segments after it.
     */
    const route = (
      method: "GET" | "POST",
      path: string,
      options: {
        readonly access?: Access
        /** What the page needs of the repository instead of read on code (the releases or wiki unit). */
        readonly rule?: RepoRule
        /** An upload form (Web.ts `RouteOptions.multipart`). */
        readonly multipart?: boolean
      },
      handler: (view: RepoView, form: Form) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>
    ) =>
      web.route(
        method,
        path,
        { access: options.access ?? "view", multipart: options.multipart ?? false },
        (ctx, form) =>
          Effect.gen(function* () {
            // The path as sent: a `..` in it is a name that resolves to nothing, not a way elsewhere.
            const pathname = ctx.request.url.split("?")[0]!
            const segments = segmentsOf(pathname)
            if (segments === undefined || segments.length < 2) return web.notFound(ctx)
            const [ownerName, repoName] = segments as [string, string]
            // The API's and the assets' unknown paths stay the empty 404s they are (Routes.ts).
            if (MACHINE_PATHS.has(ownerName)) return HttpServerResponse.empty({ status: 404 })
            const opened = yield* repos.assign(ctx.viewer, ownerName, repoName, options.rule ?? READ_CODE).pipe(
              Effect.map((opened) => ({ opened })),
              Effect.catch((error) =>
                error instanceof Errors.RepositoryMoved
                  ? Effect.succeed({ moved: error })
                  : Effect.fail(error as Exclude<typeof error, Errors.RepositoryMoved>)
              )
            )
            if ("moved" in opened) return web.redirect(ctx, opened.moved.relocate(pathname) + ctx.url.search)
            const view: RepoView = {
              ...opened.opened,
              ctx,
              handle: contents.handle(opened.opened),
              base: repoBase(opened.opened.owner.name, opened.opened.repo.name),
              rest: segments.slice(2)
            }
            return yield* handler(view, form)
          })
      )

    /** A fragment of a page (for htmx), with the pages' headers. */
    const fragment = (ctx: WebContext, part: Html) => htmlResponse(ctx.request, String(part))

    return { route, page, stream, about, socialButtons, fragment, data, contents, repos, social }
  })

export type RepoFrame = Effect.Success<ReturnType<typeof makeRepoFrame>>
