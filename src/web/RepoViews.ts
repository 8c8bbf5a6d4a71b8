// Parts several repository pages show: links to a revision's views, the branch and tag menu, the
// path's breadcrumb, a directory's entries with the last commit of each, the clone URLs, the
// languages bar, commit lists and highlighted code. Every value is escaped by `html`; only the
// highlighter's lines (escaped by it) and numbers go in through `raw`.
import type { CommitInfo } from "../branches/Service.ts"
import type { ContentsResponse } from "../contents/Api.ts"
import type { LanguageStats } from "../languages/Service.ts"
import { lazyRequire } from "../lib/LazyRequire.ts"
import { sshUrl } from "../repos/Schema.ts"
import { assetUrl } from "./Assets.ts"
import { empty, type Html, html, raw } from "./Html.ts"
import { icon } from "./Icons.ts"
import { type RefKind, type RepoRefs, shortSha, subjectOf } from "./RepoData.ts"
import { type RepoView, urlPath } from "./RepoFrame.ts"

export type Area = "src" | "raw" | "blame" | "commits"

/** `/{owner}/{repo}/{area}/{kind}/{name}[/{path}]`. */
export const refUrl = (base: string, area: Area, ref: { readonly kind: RefKind; readonly name: string }, path = "") =>
  `${base}/${area}/${ref.kind}/${urlPath(ref.name)}${path === "" ? "" : `/${urlPath(path)}`}`

/** A commit's date (its own offset's day), the full time as a tooltip. */
export const when = (iso: string) => html`<time datetime="${iso}" title="${iso}">${iso.slice(0, 10)}</time>`

/** What a revision is called on a page: a branch or tag by its name, a commit by its short id. */
export const refLabel = (ref: { readonly kind: RefKind; readonly name: string }) =>
  ref.kind === "commit" ? shortSha(ref.name) : ref.name

/** Branches and tags shown in the menu at most; the branches and tags pages list them all. */
const MENU_MAX = 100

/** The branch and tag menu (a `<details>`: it opens without JavaScript); `hrefOf` makes each link. */
export const refMenu = (
  view: RepoView,
  current: { readonly kind: RefKind; readonly name: string },
  refs: RepoRefs,
  hrefOf: (kind: RefKind, name: string) => string
) => {
  const item = (kind: RefKind, name: string) =>
    html`<li><a class="dropdown-item" href="${hrefOf(kind, name)}"${
      current.kind === kind && current.name === name ? html` aria-current="true"` : empty
    }>${name}</a></li>`
  const more = (n: number, href: string, label: string) =>
    n > MENU_MAX ? html`<li><a class="dropdown-item" href="${href}">${label}</a></li>` : empty
  return html`<details class="dropdown details-reset details-overlay d-inline-block mr-2" data-testid="ref-menu">
  <summary class="btn btn-sm" title="Switch branches or tags">${icon(current.kind === "tag" ? "tag" : current.kind === "commit" ? "git-commit" : "git-branch")} <span class="text-bold">${refLabel(current)}</span> <span class="dropdown-caret"></span></summary>
  <ul class="dropdown-menu dropdown-menu-se hearth-ref-list">
    <li class="dropdown-header">Branches</li>
    ${refs.branches.slice(0, MENU_MAX).map((name) => item("branch", name))}
    ${more(refs.branches.length, `${view.base}/branches`, "All branches")}
    ${
      refs.tags.length === 0
        ? empty
        : html`<li class="dropdown-divider"></li>
    <li class="dropdown-header">Tags</li>
    ${refs.tags.slice(0, MENU_MAX).map((name) => item("tag", name))}
    ${more(refs.tags.length, `${view.base}/tags`, "All tags")}`
    }
  </ul>
</details>`
}

/** `repo / dir / sub / name`, each part a link to its directory (the last one the current page). */
export const breadcrumb = (view: RepoView, ref: { readonly kind: RefKind; readonly name: string }, path: string) => {
  const parts = path === "" ? [] : path.split("/")
  return html`<nav aria-label="Path" class="f4 d-flex flex-wrap flex-items-center wb-break-word" data-testid="breadcrumb">
  <a class="text-bold" href="${refUrl(view.base, "src", ref)}">${view.repo.name}</a>
  ${parts.map((part, i) => {
    const last = i === parts.length - 1
    return html`<span class="mx-1 color-fg-muted">/</span>${
      last
        ? html`<strong aria-current="page">${part}</strong>`
        : html`<a href="${refUrl(view.base, "src", ref, parts.slice(0, i + 1).join("/"))}">${part}</a>`
    }`
  })}
</nav>`
}

const ENTRY_ICONS: Record<string, string> = {
  dir: "file-directory-fill",
  file: "file",
  symlink: "file-symlink-file",
  submodule: "file-submodule"
}

/** Directories first, then files, each by name (as Forgejo lists a tree). */
export const sortEntries = (entries: ReadonlyArray<ContentsResponse>) =>
  [...entries].sort((a, b) => {
    const da = a.type === "dir" ? 0 : 1
    const db = b.type === "dir" ? 0 : 1
    return da - db || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  })

/** A directory's entries with the last commit that changed each. */
export const entryTable = (
  view: RepoView,
  ref: { readonly kind: RefKind; readonly name: string },
  dirPath: string,
  entries: ReadonlyArray<ContentsResponse>,
  commits: ReadonlyMap<string, CommitInfo>
) => {
  const parent = dirPath.includes("/") ? dirPath.slice(0, dirPath.lastIndexOf("/")) : ""
  return html`<table class="width-full hearth-files" data-testid="file-list">
  <caption class="sr-only">Files${dirPath === "" ? empty : html` in ${dirPath}`}</caption>
  <tbody>
  ${
    dirPath === ""
      ? empty
      : html`<tr><td colspan="3"><a href="${refUrl(view.base, "src", ref, parent)}" title="Parent directory">${icon("file-directory-fill")} ..</a></td></tr>`
  }
  ${sortEntries(entries).map((entry) => {
    const commit = commits.get(entry.last_commit_sha)
    const name =
      entry.type === "submodule"
        ? html`<span>${entry.name}</span>`
        : html`<a href="${refUrl(view.base, "src", ref, entry.path)}">${entry.name}</a>`
    return html`<tr>
    <td class="hearth-files-name wb-break-word">${icon(ENTRY_ICONS[entry.type] ?? "file")} ${name}</td>
    <td class="color-fg-muted wb-break-word">${
      commit === undefined
        ? empty
        : html`<a class="Link--secondary" href="${view.base}/commit/${commit.sha}">${subjectOf(commit.message)}</a>`
    }</td>
    <td class="hearth-files-date color-fg-muted">${commit === undefined ? empty : when(commit.committer.date)}</td>
  </tr>`
  })}
  </tbody>
</table>`
}

const copyInput = (
  id: string,
  label: string,
  value: string
) => html`<label class="f6 text-bold d-block mb-1" for="${id}">${label}</label>
<div class="input-group mb-2">
  <input id="${id}" class="form-control input-monospace input-sm" type="text" readonly value="${value}">
  <span class="input-group-button"><button class="btn btn-sm" type="button" data-copy="${id}">${icon("copy")} <span data-copy-label>Copy</span></button></span>
</div>`

/**
 * The clone URLs (HTTP, and SSH when the built-in server runs), each with a copy button; `name` is
 * the git repository's (the wiki's is `{repo}.wiki`).
 */
export const cloneBox = (view: RepoView, name = view.repo.name) => {
  const settings = view.ctx.settings
  const http = `${settings.server.ROOT_URL}${urlPath(view.owner.name)}/${urlPath(name)}.git`
  return html`<div class="hearth-clone" data-testid="clone">
${copyInput("clone-http", "Clone with HTTP", http)}
${settings.server.START_SSH_SERVER ? copyInput("clone-ssh", "Clone with SSH", sshUrl(settings, view.owner.name, name)) : empty}
<script src="${assetUrl("copy.js")}" defer></script>
</div>`
}

/** What a new, empty repository shows: how to push to it. */
export const emptyInstructions = (view: RepoView) => {
  const settings = view.ctx.settings
  const url = `${settings.server.ROOT_URL}${urlPath(view.owner.name)}/${urlPath(view.repo.name)}.git`
  const branch = view.repo.defaultBranch
  return html`<div class="Box" data-testid="empty-repo">
  <div class="Box-header"><h2 class="Box-title">This repository is empty</h2></div>
  <div class="Box-body">
    ${cloneBox(view)}
    <h3 class="h5 mt-3 mb-2">Create a new repository on the command line</h3>
    <pre class="p-2 color-bg-subtle rounded-2 f6"><code>touch README.md
git init --initial-branch=${branch}
git add README.md
git commit -m "first commit"
git remote add origin ${url}
git push -u origin ${branch}</code></pre>
    <h3 class="h5 mt-3 mb-2">Push an existing repository from the command line</h3>
    <pre class="p-2 color-bg-subtle rounded-2 f6"><code>git remote add origin ${url}
git push -u origin ${branch}</code></pre>
  </div>
</div>`
}

const linguist = lazyRequire<Record<string, { readonly color?: string } | undefined>>("linguist-languages")
const COLOR = /^#[0-9a-f]{6}$/i
const colorOf = (language: string) => {
  const color = language === "Other" ? undefined : linguist()[language]?.color
  return color !== undefined && COLOR.test(color) ? color : "#8b949e"
}

/** Languages shown by name at most; the rest are "Other". */
const LANGUAGES_SHOWN = 6

/** The languages bar: one coloured part per language (SVG attributes, not styles: the CSP allows no inline style). */
export const languageBar = (stats: LanguageStats) => {
  const entries = Object.entries(stats).filter(([, bytes]) => bytes > 0)
  const total = entries.reduce((sum, [, bytes]) => sum + bytes, 0)
  if (total === 0) return empty
  entries.sort((a, b) => b[1] - a[1])
  const shown = entries.slice(0, LANGUAGES_SHOWN)
  const rest = entries.slice(LANGUAGES_SHOWN).reduce((sum, [, bytes]) => sum + bytes, 0)
  if (rest > 0) shown.push(["Other", rest])
  const parts = shown.map(([name, bytes]) => ({ name, percent: (bytes * 100) / total, color: colorOf(name) }))
  const label = parts.map((p) => `${p.name} ${p.percent.toFixed(1)}%`).join(", ")
  let x = 0
  const rects = parts.map((p) => {
    const rect = html`<rect x="${x.toFixed(3)}%" y="0" width="${p.percent.toFixed(3)}%" height="8" fill="${p.color}"></rect>`
    x += p.percent
    return rect
  })
  return html`<div class="mb-3" data-testid="languages">
  <h2 class="h4 mb-2">Languages</h2>
  <svg class="hearth-langbar mb-2" width="100%" height="8" role="img" aria-label="${label}">${rects}</svg>
  <ul class="list-style-none f6">
    ${parts.map(
      (p) =>
        html`<li class="d-inline-flex flex-items-center mr-3"><svg width="8" height="8" aria-hidden="true"><circle cx="4" cy="4" r="4" fill="${p.color}"></circle></svg><span class="text-bold ml-1">${p.name}</span><span class="color-fg-muted ml-1">${p.percent.toFixed(1)}%</span></li>`
    )}
  </ul>
</div>`
}

/** A list of commits: subject (to the commit), author, date, short id, browse link. */
export const commitList = (view: RepoView, commits: ReadonlyArray<CommitInfo>) =>
  html`<ul class="Box" data-testid="commit-list">
${commits.map(
  (c) => html`<li class="Box-row d-flex flex-items-start">
  <div class="flex-auto min-width-0">
    <a class="text-bold Link--primary wb-break-word" href="${view.base}/commit/${c.sha}">${subjectOf(c.message)}</a>
    <div class="f6 color-fg-muted mt-1">${c.author.name} committed ${when(c.committer.date)}</div>
  </div>
  <div class="d-flex flex-items-center ml-2 flex-shrink-0">
    <a class="btn btn-sm text-mono mr-2" href="${view.base}/commit/${c.sha}" title="${c.sha}">${shortSha(c.sha)}</a>
    <a class="btn btn-sm btn-octicon" href="${refUrl(view.base, "src", { kind: "commit", name: c.sha })}" aria-label="Browse the files at ${shortSha(c.sha)}">${icon("file-code")}</a>
  </div>
</li>`
)}
</ul>`

/** Lines of code (safe HTML each, from the highlighter) as a table whose rows are the anchors `#L{n}`. */
export const codeTable = (lines: ReadonlyArray<string>): Html => {
  let out = '<table class="hearth-code highlight" data-testid="code"><tbody>'
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1
    out += `<tr id="L${n}"><td class="hearth-num"><a href="#L${n}">${n}</a></td><td class="hearth-text">${lines[i]}</td></tr>`
  }
  return raw(`${out}</tbody></table>`)
}

/** Bytes for people: `512 B`, `12.3 KiB`, `4.0 MiB`. */
export const formatBytes = (bytes: number) =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${(bytes / 1024 / 1024).toFixed(1)} MiB`
