// Releases in the browser (Forgejo's routers/web/repo/release.go, templates/repo/release/*):
// `/{owner}/{repo}/releases` (newest first, paged; drafts only to writers), one release at
// `/releases/tag/{tag}` (the API's `html_url`; a tag may hold `/`), `/releases/latest` (a redirect
// to it), and for writers `/releases/new`, `/releases/edit/{tag}` (with its assets: upload as
// multipart, link an external file, delete), `POST /releases/delete` (confirmed in a `<details>`).
// Everything goes through the services the API uses (ReleasesService, ReleaseAssets), with its
// rules, quota checks and messages, shown next to the field with what was typed kept; the Release
// is shown as the API presents it (src/releases/Present.ts).
//
// Access, as the API's release routes: reading needs the releases unit (off: the 404 page);
// create and edit need write on it and a repository that is not archived (Forgejo's
// `reqRepoReleaseWriter`, 403/423 pages); delete and removing an asset need write only.
import { createHash } from "node:crypto"
import { Effect, Option } from "effect"
import type { RepoRule } from "../../http/Access.ts"
import * as Errors from "../../http/Errors.ts"
import type { Attachment } from "../../issues/AttachmentsSchema.ts"
import { MarkdownRenderer } from "../../markdown/Service.ts"
import { QuotaService } from "../../quota/Service.ts"
import type { Release } from "../../releases/Api.ts"
import { ReleaseAssets } from "../../releases/Assets.ts"
import { makeReleasePresenter } from "../../releases/Present.ts"
import { canWriteReleases, ReleasesService } from "../../releases/Service.ts"
import { checkbox, type FieldErrors, field, formError, formNotice, textArea } from "../Form.ts"
import { empty, html, raw } from "../Html.ts"
import { icon } from "../Icons.ts"
import { csrfField } from "../Layout.ts"
import { shortSha } from "../RepoData.ts"
import type { RepoFrame, RepoView } from "../RepoFrame.ts"
import { urlPath } from "../RepoFrame.ts"
import { refusalPage } from "../RepoRefusal.ts"
import { formatBytes, when } from "../RepoViews.ts"
import type { Form, Web } from "../Web.ts"
import { pageOf, pager } from "./Explore.ts"

/** Releases on a page of the list (Forgejo's web default). */
export const RELEASES_PAGE_SIZE = 10

const READ: RepoRule = { role: "read", unit: "releases" }
/** Create, edit, upload: they may make git tags, so not in an archived repository (the API's rule). */
const WRITE: RepoRule = { role: "write", unit: "releases", changes: "mirrors" }
/** Delete a release or an asset (the API has no archived gate on them). */
const REMOVE: RepoRule = { role: "write", unit: "releases" }

/** The message of a form whose CSRF token is missing or wrong (the same words as Web.ts). */
const CSRF_REFUSED =
  "The form's security token (CSRF) is missing or out of date. Go back, reload the page and try again."

const NOTICES: Readonly<Record<string, string>> = {
  uploaded: "The file has been added to the release.",
  removed: "The file has been removed from the release."
}

/** The release form's fields as typed. */
interface Typed {
  readonly tag_name?: string
  readonly tag_target?: string
  readonly title?: string
  readonly content?: string
  readonly prerelease?: boolean
  readonly hide_archive_links?: boolean
}

/** `/releases/tag/{tag}` (each segment escaped, as the API's `html_url`). */
const tagUrl = (view: RepoView, tag: string) => `${view.base}/releases/tag/${urlPath(tag)}`
const editUrl = (view: RepoView, tag: string) => `${view.base}/releases/edit/${urlPath(tag)}`

/** Which field of the release form a service's refusal concerns. */
const fieldOf = (error: { readonly message?: string }): string | undefined => {
  const message = error.message ?? ""
  if (error instanceof Errors.NotFound) return "tag_target"
  if (/^\[TagName\]|tag name|^Release has no Tag|release of the tag/.test(message)) return "tag_name"
  return undefined
}

/** A refusal's words for a person. */
const wordsOf = (error: { readonly message?: string }, tag: string): string => {
  if (error instanceof Errors.NotFound) return "There is no branch, tag or commit of that name to make the tag from."
  const message = error.message ?? ""
  if (message === "[TagName]: Required") return "Name the tag of the release."
  if (message === "Release has no Tag") return `There is a release of the tag ${tag} already.`
  if (message === "repo is empty") return "The repository is empty: push a commit before making a release."
  return message
}

export const RepoReleasesPages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const releases = yield* ReleasesService
    const assets = yield* ReleaseAssets
    const quota = yield* QuotaService
    const markdown = yield* MarkdownRenderer
    const presenter = yield* makeReleasePresenter(web.settings)

    const present = (view: RepoView, rows: Parameters<typeof presenter>[1]) =>
      presenter({ ownerName: view.owner.name, repoName: view.repo.name }, rows, view.caller)

    const refused = (view: RepoView, rule: RepoRule) => refusalPage(web, view, rule, "make and change its releases")

    /** The notes as HTML (markdown with the repository's references), plain text when too large. */
    const notes = (view: RepoView, text: string) =>
      Effect.map(
        Effect.option(
          markdown.render({
            text,
            mode: "gfm",
            context: view.base,
            viewer: view.caller?.user,
            // Kept by the renderer: the same text is rendered once (the list is shown again and again).
            cacheKey: createHash("sha256").update(text).digest("base64url")
          })
        ),
        (rendered) =>
          Option.isSome(rendered)
            ? html`<div class="markdown-body">${raw(rendered.value)}</div>`
            : html`<pre class="hearth-commit-message">${text}</pre>`
      )

    const labels = (release: Release, latestId: number | undefined) =>
      html`${release.draft ? html`<span class="Label Label--attention ml-2" data-testid="label-draft">Draft</span>` : empty}${
        release.prerelease
          ? html`<span class="Label Label--severe ml-2" data-testid="label-prerelease">Pre-release</span>`
          : empty
      }${release.id === latestId ? html`<span class="Label Label--success ml-2" data-testid="label-latest">Latest</span>` : empty}`

    const assetRow = (asset: Attachment) =>
      html`<li class="Box-row d-flex flex-items-center">
  ${icon(asset.type === "external" ? "link-external" : "package")}
  <a class="ml-2 flex-auto wb-break-word" href="${asset.browser_download_url}"${
    asset.type === "external" ? html` rel="nofollow noopener noreferrer"` : empty
  }>${asset.name}</a>
  ${asset.type === "external" ? empty : html`<span class="color-fg-muted f6 ml-2" data-testid="asset-size">${formatBytes(asset.size)}</span>`}
</li>`

    /** The assets and, unless hidden or a draft (which has no tag yet), the source archives. */
    const downloads = (view: RepoView, release: Release) => {
      const archives = !release.draft && !release.hide_archive_links
      const count = release.assets.length + (archives ? 2 : 0)
      if (count === 0) return empty
      return html`<div class="mt-3" data-testid="assets">
  <h3 class="h5 mb-2">Assets <span class="Counter">${count}</span></h3>
  <ul class="Box">
    ${release.assets.map(assetRow)}
    ${
      archives
        ? html`<li class="Box-row">${icon("file-zip")} <a class="ml-2" href="${view.base}/archive/${urlPath(release.tag_name)}.zip">Source code (ZIP)</a></li>
    <li class="Box-row">${icon("file-zip")} <a class="ml-2" href="${view.base}/archive/${urlPath(release.tag_name)}.tar.gz">Source code (TAR.GZ)</a></li>`
        : empty
    }
  </ul>
</div>`
    }

    /** One release as a box; `heading` is its title's level (h2 in the list, h1 on its own page). */
    const releaseBox = (
      view: RepoView,
      release: Release,
      sha: string | null,
      latestId: number | undefined,
      heading: "h1" | "h2"
    ) =>
      Effect.gen(function* () {
        const title =
          heading === "h1"
            ? html`<h1 class="h2 wb-break-word" data-testid="release-title">${release.name}</h1>`
            : html`<h2 class="h3 wb-break-word" data-testid="release-title"><a class="Link--primary" href="${tagUrl(view, release.tag_name)}">${release.name}</a></h2>`
        return html`<article class="Box mb-4" data-testid="release" id="release-${release.id}">
  <div class="Box-header d-flex flex-items-center flex-wrap">
    <div class="flex-auto d-flex flex-items-center flex-wrap min-width-0">${title}${labels(release, latestId)}</div>
    ${canWriteReleases(view) ? html`<a class="btn btn-sm" href="${editUrl(view, release.tag_name)}" data-testid="edit-release">${icon("pencil")} Edit</a>` : empty}
  </div>
  <div class="Box-body">
    <p class="f6 color-fg-muted mb-3">
      ${icon("tag")} <span class="text-bold wb-break-word" data-testid="release-tag">${release.tag_name}</span>
      ${sha === null ? empty : html`· <a class="Link--secondary text-mono" href="${view.base}/commit/${sha}">${icon("git-commit")} ${shortSha(sha)}</a>`}
      · <a class="Link--secondary" href="/${encodeURIComponent(release.author.login)}">${release.author.login}</a>
      ${release.draft ? "drafted" : "released"} this ${when(release.created_at)}
      ${release.draft ? html`· to be tagged from <span class="text-mono wb-break-word">${release.target_commitish}</span>` : empty}
    </p>
    ${release.body === "" ? html`<p class="color-fg-muted">No release notes.</p>` : yield* notes(view, release.body)}
    ${downloads(view, release)}
  </div>
</article>`
      })

    const latestId = (view: RepoView) =>
      Effect.map(Effect.option(releases.latest(view)), (found) => (Option.isSome(found) ? found.value.id : undefined))

    const title = (view: RepoView, what: string) => `${what} · ${view.owner.name}/${view.repo.name}`

    /** The release form (new or edit); `release` when editing. */
    const releaseForm = (view: RepoView, release: Release | undefined, typed: Typed, errors: FieldErrors) => {
      const ctx = view.ctx
      const value = <K extends keyof Typed>(name: K, current: NonNullable<Typed[K]>) => typed[name] ?? current
      // A published release keeps its tag (Forgejo's edit page shows it read-only).
      const tagFixed = release !== undefined && !release.draft
      const action = release === undefined ? `${view.base}/releases/new` : editUrl(view, release.tag_name)
      return html`<form method="post" action="${action}" data-testid="release-form">
  ${csrfField(ctx)}
  ${
    tagFixed
      ? html`<p class="mb-3">${icon("tag")} Tag <strong class="wb-break-word">${release.tag_name}</strong></p>`
      : html`${field(
          {
            name: "tag_name",
            label: "Tag name",
            value: value("tag_name", release?.tag_name ?? ""),
            required: true,
            autocomplete: "off",
            hint: "An existing tag, or a new one made from the target when the release is published."
          },
          errors
        )}
  ${field(
    {
      name: "tag_target",
      label: "Target",
      value: value("tag_target", release?.target_commitish ?? view.repo.defaultBranch),
      autocomplete: "off",
      hint: "The branch or commit a new tag is made from."
    },
    errors
  )}`
  }
  ${field({ name: "title", label: "Title", value: value("title", release?.name ?? ""), autocomplete: "off", hint: "The tag name when left empty." }, errors)}
  ${textArea({ name: "content", label: "Release notes", value: value("content", release?.body ?? ""), rows: 10, hint: "Markdown." }, errors)}
  ${checkbox({ name: "prerelease", label: "This is a pre-release", checked: value("prerelease", release?.prerelease ?? false), hint: "Not ready for production; never shown as the latest release." })}
  ${checkbox({ name: "hide_archive_links", label: "Hide the source code archives", checked: value("hide_archive_links", release?.hide_archive_links ?? false), hint: "The ZIP and TAR.GZ links are left off the release's page (they stay downloadable)." })}
  <div class="d-flex flex-items-center mt-3">
    <button class="btn btn-primary mr-2" type="submit" name="draft" value="">${release === undefined || release.draft ? "Publish release" : "Update release"}</button>
    ${release === undefined || release.draft ? html`<button class="btn" type="submit" name="draft" value="1">Save draft</button>` : empty}
  </div>
</form>`
    }

    const typedOf = (form: Form): Typed => ({
      tag_name: form.get("tag_name") ?? "",
      tag_target: form.get("tag_target") ?? "",
      title: form.get("title") ?? "",
      content: form.get("content") ?? "",
      prerelease: form.get("prerelease") === "on",
      hide_archive_links: form.get("hide_archive_links") === "on"
    })

    const newPage = (view: RepoView, typed: Typed, errors: FieldErrors, message?: string) =>
      frame.page(
        view,
        {
          title: title(view, "New release"),
          tab: "releases",
          ...(message !== undefined || Object.keys(errors).length > 0 ? { status: 422 } : {})
        },
        html`<div class="container-md">
<h1 class="h2 mb-3">New release</h1>
${formError(message)}
${releaseForm(view, undefined, typed, errors)}
</div>`
      )

    /** The assets of a release being edited, each with its delete button, and the two ways to add one. */
    const assetForms = (
      view: RepoView,
      release: Release,
      typed: Readonly<Record<string, string>>,
      errors: FieldErrors,
      message?: string
    ) => {
      const ctx = view.ctx
      const action = `${view.base}/releases/attachments/${release.id}`
      return html`<section class="Box mt-4" data-testid="release-assets">
  <div class="Box-header"><h2 class="Box-title">Files</h2></div>
  ${
    release.assets.length === 0
      ? html`<div class="Box-row color-fg-muted">No files yet.</div>`
      : release.assets.map(
          (asset) => html`<div class="Box-row d-flex flex-items-center" data-testid="asset">
    ${icon(asset.type === "external" ? "link-external" : "package")}
    <a class="ml-2 flex-auto wb-break-word" href="${asset.browser_download_url}"${
      asset.type === "external" ? html` rel="nofollow noopener noreferrer"` : empty
    }>${asset.name}</a>
    ${asset.type === "external" ? empty : html`<span class="color-fg-muted f6 mx-2">${formatBytes(asset.size)}</span>`}
    <form method="post" action="${action}/remove">
      ${csrfField(ctx)}
      <input type="hidden" name="asset" value="${asset.id}">
      <button class="btn btn-sm btn-danger" type="submit" aria-label="Remove ${asset.name}">${icon("trash")} Remove</button>
    </form>
  </div>`
        )
  }
  ${
    ctx.settings.attachment.ENABLED
      ? html`<div class="Box-row">
    ${formError(message)}
    <form method="post" action="${action}" enctype="multipart/form-data" data-testid="upload-form">
      ${csrfField(ctx)}
      <div class="form-group${errors.attachment === undefined ? "" : " errored"}">
        <div class="form-group-header"><label for="field-attachment">Upload a file</label></div>
        <div class="form-group-body"><input class="form-control" id="field-attachment" name="attachment" type="file" required${
          errors.attachment === undefined ? empty : html` aria-invalid="true" aria-describedby="field-attachment-error"`
        }></div>
        ${errors.attachment === undefined ? empty : html`<p class="note color-fg-danger" id="field-attachment-error" data-testid="error-attachment">${errors.attachment}</p>`}
      </div>
      ${field({ name: "name", label: "File name (optional)", value: typed.name ?? "", autocomplete: "off", hint: "The uploaded file's own name when left empty." }, errors)}
      <button class="btn" type="submit">${icon("upload")} Upload</button>
    </form>
  </div>
  <div class="Box-row">
    <form method="post" action="${action}" enctype="multipart/form-data" data-testid="link-form">
      ${csrfField(ctx)}
      ${field({ name: "external_url", label: "Or link a file stored elsewhere (URL)", value: typed.external_url ?? "", autocomplete: "off" }, errors)}
      <div class="form-group">
        <div class="form-group-header"><label for="field-link-name">Link name (optional)</label></div>
        <div class="form-group-body"><input class="form-control width-full" id="field-link-name" name="name" type="text" value="${typed.link_name ?? ""}" autocomplete="off"></div>
      </div>
      <button class="btn" type="submit">${icon("link")} Add the link</button>
    </form>
  </div>`
      : empty
  }
</section>`
    }

    const editPage = (
      view: RepoView,
      release: Release,
      state: {
        readonly typed?: Typed
        readonly errors?: FieldErrors
        readonly message?: string
        readonly upload?: {
          readonly typed: Readonly<Record<string, string>>
          readonly errors: FieldErrors
          readonly message?: string
        }
        readonly status?: number
      } = {}
    ) =>
      frame.page(
        view,
        {
          title: title(view, `Edit ${release.name}`),
          tab: "releases",
          ...(state.status === undefined ? {} : { status: state.status })
        },
        html`<div class="container-md">
<h1 class="h2 mb-3 wb-break-word">Edit release ${release.name}</h1>
${formNotice(NOTICES[view.ctx.url.searchParams.get("done") ?? ""])}
${formError(state.message)}
${releaseForm(view, release, state.typed ?? {}, state.errors ?? {})}
${assetForms(view, release, state.upload?.typed ?? {}, state.upload?.errors ?? {}, state.upload?.message)}
<details class="details-reset mt-4" data-testid="delete-release">
  <summary class="btn btn-danger">${icon("trash")} Delete this release</summary>
  <div class="Box Box--danger mt-2 p-3">
    <p>The release, its notes and its files are deleted. The tag <strong class="wb-break-word">${release.tag_name}</strong> stays in the repository.</p>
    <form method="post" action="${view.base}/releases/delete">
      ${csrfField(view.ctx)}
      <input type="hidden" name="id" value="${release.id}">
      <button class="btn btn-danger" type="submit">Yes, delete this release</button>
    </form>
  </div>
</details>
</div>`
      )

    /** The release of the tag in the URL after `/releases/{area}/`, presented; none when not visible. */
    const releaseOfPath = (view: RepoView) =>
      Effect.gen(function* () {
        const tag = view.rest.slice(2).join("/")
        if (tag === "") return undefined
        const row = yield* Effect.option(releases.byTag(view, tag))
        if (Option.isNone(row)) return undefined
        return { row: row.value, release: (yield* present(view, [row.value]))[0]! }
      })

    /** The quota check the API makes before a create or an edit (Forgejo: `size:repos:all`), as a refusal. */
    const save = <A>(view: RepoView, effect: Effect.Effect<A, Errors.ApiError>) =>
      Effect.result(Effect.andThen(quota.enforce(view.owner, "size:repos:all"), effect))

    return [
      frame.route("GET", "/:owner/:repo/releases", { rule: READ }, (view) =>
        Effect.gen(function* () {
          const window = pageOf(view.ctx, RELEASES_PAGE_SIZE)
          const [listed, latest] = yield* Effect.all([releases.list(view, {}, window), latestId(view)])
          const shown = yield* present(view, listed.rows)
          const boxes = yield* Effect.forEach(shown, (release, i) =>
            releaseBox(view, release, listed.rows[i]!.sha1, latest, "h2")
          )
          const writer = canWriteReleases(view)
          return yield* frame.page(
            view,
            { title: title(view, "Releases"), tab: "releases" },
            html`<div class="d-flex flex-items-center mb-3">
  <h1 class="h2 flex-auto">Releases</h1>
  <a class="btn btn-sm mr-2" href="${view.base}/tags">${icon("tag")} Tags</a>
  ${writer ? html`<a class="btn btn-sm btn-primary" href="${view.base}/releases/new" data-testid="new-release">New release</a>` : empty}
</div>
${
  listed.total === 0
    ? html`<div class="blankslate" data-testid="no-releases"><p>There are no releases yet.</p>${
        writer ? html`<a class="btn btn-primary" href="${view.base}/releases/new">Make the first release</a>` : empty
      }</div>`
    : html`<div data-testid="release-list">${boxes}</div>`
}
${pager(view.ctx, window, listed.total)}`
          )
        })
      ),
      frame.route("GET", "/:owner/:repo/releases/latest", { rule: READ }, (view) =>
        Effect.gen(function* () {
          const latest = yield* Effect.option(releases.latest(view))
          return Option.isNone(latest)
            ? web.notFound(view.ctx)
            : web.redirect(view.ctx, tagUrl(view, latest.value.tagName))
        })
      ),
      frame.route("GET", "/:owner/:repo/releases/tag/*", { rule: READ }, (view) =>
        Effect.gen(function* () {
          const found = yield* releaseOfPath(view)
          if (found === undefined) return web.notFound(view.ctx)
          const release = found.release
          const box = yield* releaseBox(view, release, found.row.sha1, yield* latestId(view), "h1")
          return yield* frame.page(
            view,
            { title: title(view, release.name), tab: "releases" },
            html`<nav class="mb-3 f5" aria-label="Releases"><a href="${view.base}/releases">${icon("arrow-left")} All releases</a></nav>
${box}`
          )
        })
      ),
      frame.route("GET", "/:owner/:repo/releases/new", { access: "signed-in", rule: READ }, (view) =>
        Effect.gen(function* () {
          const refusal = refused(view, WRITE)
          if (refusal !== undefined) return refusal
          // `?tag=` fills the tag in (the tags page's "make a release" link).
          return yield* newPage(view, { tag_name: view.ctx.url.searchParams.get("tag") ?? "" }, {})
        })
      ),
      frame.route("POST", "/:owner/:repo/releases/new", { access: "signed-in", rule: READ }, (view, form) =>
        Effect.gen(function* () {
          const refusal = refused(view, WRITE)
          if (refusal !== undefined) return refusal
          const typed = typedOf(form)
          const tag = (typed.tag_name ?? "").trim()
          if (tag === "") return yield* newPage(view, typed, { tag_name: "Name the tag of the release." })
          const result = yield* save(
            view,
            releases.create(view, view.ctx.viewer!, {
              tag_name: tag,
              target_commitish: (typed.tag_target ?? "").trim(),
              name: (typed.title ?? "").trim(),
              body: typed.content ?? "",
              draft: (form.get("draft") ?? "") !== "",
              prerelease: typed.prerelease ?? false,
              hide_archive_links: typed.hide_archive_links ?? false
            })
          )
          if (result._tag === "Failure") {
            const name = fieldOf(result.failure)
            const words = wordsOf(result.failure, tag)
            return yield* newPage(
              view,
              typed,
              name === undefined ? {} : { [name]: words },
              name === undefined ? words : undefined
            )
          }
          return web.redirect(view.ctx, tagUrl(view, result.success.release.tagName))
        })
      ),
      frame.route("GET", "/:owner/:repo/releases/edit/*", { access: "signed-in", rule: READ }, (view) =>
        Effect.gen(function* () {
          const refusal = refused(view, WRITE)
          if (refusal !== undefined) return refusal
          const found = yield* releaseOfPath(view)
          return found === undefined ? web.notFound(view.ctx) : yield* editPage(view, found.release)
        })
      ),
      frame.route("POST", "/:owner/:repo/releases/edit/*", { access: "signed-in", rule: READ }, (view, form) =>
        Effect.gen(function* () {
          const refusal = refused(view, WRITE)
          if (refusal !== undefined) return refusal
          const found = yield* releaseOfPath(view)
          if (found === undefined) return web.notFound(view.ctx)
          const release = found.release
          const typed = typedOf(form)
          // A published release keeps its tag: the form has no tag fields then.
          const tagFields = release.draft
            ? { tag_name: (typed.tag_name ?? "").trim(), target_commitish: (typed.tag_target ?? "").trim() }
            : {}
          const result = yield* save(
            view,
            releases.edit(view, view.ctx.viewer!, String(release.id), {
              ...tagFields,
              name: (typed.title ?? "").trim(),
              body: typed.content ?? "",
              // A published release stays published (its form has no draft button).
              draft: release.draft && (form.get("draft") ?? "") !== "",
              prerelease: typed.prerelease ?? false,
              hide_archive_links: typed.hide_archive_links ?? false
            })
          )
          if (result._tag === "Failure") {
            const name = fieldOf(result.failure)
            const words = wordsOf(result.failure, typed.tag_name ?? release.tag_name)
            return yield* editPage(view, release, {
              typed,
              errors: name === undefined ? {} : { [name]: words },
              ...(name === undefined ? { message: words } : {}),
              status: 422
            })
          }
          return web.redirect(view.ctx, tagUrl(view, result.success.release.tagName))
        })
      ),
      frame.route("POST", "/:owner/:repo/releases/delete", { access: "signed-in", rule: READ }, (view, form) =>
        Effect.gen(function* () {
          const refusal = refused(view, REMOVE)
          if (refusal !== undefined) return refusal
          const release = yield* releases.get(view, form.get("id") ?? "")
          yield* releases.remove(view, view.ctx.viewer!, release)
          return web.redirect(view.ctx, `${view.base}/releases`)
        })
      ),
      frame.route(
        "POST",
        "/:owner/:repo/releases/attachments/:id",
        { access: "signed-in", rule: READ, multipart: true },
        (view) =>
          Effect.gen(function* () {
            const ctx = view.ctx
            if (!ctx.settings.attachment.ENABLED) return web.notFound(ctx)
            const refusal = refused(view, WRITE)
            if (refusal !== undefined) return refusal
            const id = view.rest[2] ?? ""
            const row = yield* releases.get(view, id)
            // The CSRF token is the form's first field: checked before the file is stored. The
            // fields are kept for the form when the upload is refused.
            let sent: ReadonlyMap<string, string> = new Map()
            const checkFields = (fields: ReadonlyMap<string, string>) => {
              sent = fields
              return web.csrfMatches(ctx, fields.get("_csrf") ?? null)
                ? Effect.void
                : Effect.fail(Errors.badRequest(CSRF_REFUSED))
            }
            const result = yield* Effect.result(assets.create(view, ctx.viewer!, id, ctx.request, {}, checkFields))
            if (result._tag === "Success") return web.redirect(ctx, `${editUrl(view, row.tagName)}?done=uploaded`)
            const failure = result.failure
            if (failure.message === CSRF_REFUSED) return web.errorPage(ctx, 400, "Bad request", CSRF_REFUSED)
            if (failure instanceof Errors.NotFound) return web.notFound(ctx)
            const release = (yield* present(view, [row]))[0]!
            const message = failure.message ?? "The file could not be added."
            // A link's own refusal goes next to its URL; the rest above the forms.
            const linking = (sent.get("external_url") ?? "") !== ""
            const typed = linking
              ? { external_url: sent.get("external_url") ?? "", link_name: sent.get("name") ?? "" }
              : { name: sent.get("name") ?? "" }
            return yield* editPage(view, release, {
              upload: {
                typed,
                errors: linking && /external URL/.test(message) ? { external_url: message } : {},
                ...(linking && /external URL/.test(message) ? {} : { message })
              },
              status: Errors.statusOf(failure) ?? 400
            })
          })
      ),
      frame.route(
        "POST",
        "/:owner/:repo/releases/attachments/:id/remove",
        { access: "signed-in", rule: READ },
        (view, form) =>
          Effect.gen(function* () {
            const refusal = refused(view, REMOVE)
            if (refusal !== undefined) return refusal
            const id = view.rest[2] ?? ""
            const row = yield* releases.get(view, id)
            yield* assets.remove(view, id, form.get("asset") ?? "")
            return web.redirect(view.ctx, `${editUrl(view, row.tagName)}?done=removed`)
          })
      )
    ]
  })
