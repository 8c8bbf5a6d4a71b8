// The markdown renderer every feature uses (issues, comments, READMEs, wikis, releases, and the
// /markdown routes): GitHub-flavoured markdown with the forge's references, made safe.
import { Context, Effect, Layer } from "effect"
import { Settings } from "../config/Settings.ts"
import * as Errors from "../http/Errors.ts"
import { IssuesService } from "../issues/Service.ts"
import { issueCandidates, mentionCandidates } from "./References.ts"
import type { Mode, Renderer } from "./Render.ts"
import { MarkdownRepo, type MentionViewer } from "./Repo.ts"

export type { Mode } from "./Render.ts"
export type { MentionViewer } from "./Repo.ts"

// marked and sanitize-html (~25 MB, ~70 ms to load) are loaded on the first render, not at start.
let renderModule: Promise<typeof import("./Render.ts")> | undefined
const loadRender = () => (renderModule ??= import("./Render.ts"))

export interface RenderRequest {
  readonly text: string
  /** `markdown`: plain; `gfm`, `comment`, `wiki`, `file`: with references, mentions, wiki links. */
  readonly mode: Mode
  /** The repository the text belongs to: `/owner/repo` (under ROOT_URL) or a full URL. */
  readonly context?: string | undefined
  /** A wiki page: links resolve under `{context}/wiki`, images under `{context}/wiki/raw`. */
  readonly wiki?: boolean | undefined
  /** Who will read it: decides which limited or private accounts `@mentions` link to. */
  readonly viewer?: MentionViewer | undefined
  /**
   * A name for this exact text (a blob id): the HTML is kept, and a render of the same text with
   * the same options and the same mentionable accounts is answered from it (a README shown on
   * every visit of a repository's home is rendered once).
   */
  readonly cacheKey?: string | undefined
}

/** Rendered texts kept (`cacheKey`), counted in characters of their HTML. */
const CACHE_CHARACTERS = 8 * 1024 * 1024

export class MarkdownRenderer extends Context.Service<
  MarkdownRenderer,
  {
    /** The HTML of `request.text` ("" for an empty text); 413 when it is over MAX_RENDER_SIZE. */
    readonly render: (request: RenderRequest) => Effect.Effect<string, Errors.PayloadTooLarge>
    /**
     * Many texts of one context for one reader (an issue's comments): as `render` each, but the
     * mentionable accounts and the visible issue references of all of them are read at once (two
     * queries, not two per text). A text over MAX_RENDER_SIZE gives `undefined`.
     */
    readonly renderMany: (
      texts: ReadonlyArray<{ readonly text: string; readonly cacheKey?: string | undefined }>,
      common: Omit<RenderRequest, "text" | "cacheKey">
    ) => Effect.Effect<ReadonlyArray<string | undefined>>
  }
>()("hearth/markdown/MarkdownRenderer") {
  static readonly layer = Layer.effect(
    MarkdownRenderer,
    Effect.gen(function* () {
      const settings = yield* Settings
      const repo = yield* MarkdownRepo
      const issues = yield* IssuesService
      const appUrl = settings.server.ROOT_URL.endsWith("/") ? settings.server.ROOT_URL : `${settings.server.ROOT_URL}/`
      const subPath = new URL(appUrl).pathname
      const maxSize = settings.markdown.MAX_RENDER_SIZE
      let renderer: Renderer | undefined
      // Oldest first; a text larger than the whole cache is not kept.
      const cache = new Map<string, string>()
      let cached = 0
      const keep = (key: string, rendered: string) => {
        if (rendered.length > CACHE_CHARACTERS) return
        cached -= cache.get(key)?.length ?? 0
        cache.delete(key)
        cache.set(key, rendered)
        cached += rendered.length
        for (const [k, v] of cache) {
          if (cached <= CACHE_CHARACTERS) break
          cache.delete(k)
          cached -= v.length
        }
      }
      const getRenderer = Effect.suspend(() =>
        renderer !== undefined
          ? Effect.succeed(renderer)
          : Effect.promise(loadRender).pipe(Effect.map(({ makeRenderer }) => (renderer ??= makeRenderer(appUrl))))
      )

      /** The absolute URL a context names (Forgejo joins a relative one to ROOT_URL). */
      const baseOf = (context: string | undefined): string => {
        const trimmed = (context ?? "").trim().replace(/\/+$/, "")
        if (trimmed === "") return ""
        if (/^https?:\/\//i.test(trimmed)) return trimmed
        const path = trimmed.startsWith(subPath) ? trimmed.slice(subPath.length) : trimmed.replace(/^\/+/, "")
        return `${appUrl}${path}`
      }

      /** `owner/repo` of a context under ROOT_URL (`#N` points into it), lower-cased. */
      const repoOf = (base: string): string | undefined => {
        if (!base.startsWith(appUrl)) return undefined
        const [owner, name] = base.slice(appUrl.length).split("/")
        return owner && name ? `${owner}/${name}`.toLowerCase() : undefined
      }

      /** The issue references of the texts that exist and the viewer may read (`issueKey`s). */
      const linkableIssues = (texts: ReadonlyArray<string>, base: string, viewer: MentionViewer | undefined) =>
        Effect.gen(function* () {
          const keys = [...new Set(texts.flatMap((text) => issueCandidates(text)))]
          if (keys.length === 0) return new Set<string>()
          const own = repoOf(base)
          const refs = keys.flatMap((key) => {
            const [path, index] = key.split("#") as [string, string]
            const full = path === "" ? own : path
            if (full === undefined) return []
            const [owner, name] = full.split("/") as [string, string]
            return [{ key, ref: { owner, repo: name, index: Number(index) } }]
          })
          const visible = yield* issues.visibleReferences(
            viewer?.id,
            refs.map((r) => r.ref)
          )
          return new Set(
            refs.filter((r) => visible.has(`${r.ref.owner}/${r.ref.repo}#${r.ref.index}`)).map((r) => r.key)
          )
        })

      const renderWith = (
        request: RenderRequest,
        base: string,
        mentionable: ReadonlySet<string>,
        issueLinks: ReadonlySet<string>
      ) =>
        Effect.gen(function* () {
          const mode = request.mode
          const options = {
            mode,
            base,
            issues: issueLinks,
            wiki: request.wiki === true || mode === "wiki",
            appUrl,
            mentionable
          }
          if (request.cacheKey === undefined) return (yield* getRenderer).render(request.text, options)
          const key = [
            request.cacheKey,
            request.text.length,
            mode,
            options.base,
            options.wiki,
            // What the reader may see decides the links: the mentionable accounts, the visible issues.
            [...mentionable].sort().join(","),
            [...issueLinks].sort().join(",")
          ].join("\0")
          const hit = cache.get(key)
          if (hit !== undefined) {
            cache.delete(key)
            cache.set(key, hit)
            return hit
          }
          const rendered = (yield* getRenderer).render(request.text, options)
          keep(key, rendered)
          return rendered
        })

      return {
        render: (request) =>
          Effect.gen(function* () {
            if (request.text === "") return ""
            const size = Buffer.byteLength(request.text)
            if (size > maxSize) {
              return yield* Errors.payloadTooLarge(
                `the text to render is ${size} bytes, more than the ${maxSize} this server renders ` +
                  "([markdown] MAX_RENDER_SIZE)"
              )
            }
            const mode = request.mode
            const names = mode === "markdown" ? [] : mentionCandidates(request.text)
            const mentionable = names.length === 0 ? new Set<string>() : yield* repo.mentionable(names, request.viewer)
            const base = baseOf(request.context)
            const issueLinks =
              mode === "markdown" ? new Set<string>() : yield* linkableIssues([request.text], base, request.viewer)
            return yield* renderWith(request, base, mentionable, issueLinks)
          }),
        renderMany: (texts, common) =>
          Effect.gen(function* () {
            const mode = common.mode
            const small = texts.map((t) => t.text !== "" && Buffer.byteLength(t.text) <= maxSize)
            const kept = texts.filter((_, i) => small[i]).map((t) => t.text)
            const names = mode === "markdown" ? [] : [...new Set(kept.flatMap((text) => mentionCandidates(text)))]
            const mentionable = names.length === 0 ? new Set<string>() : yield* repo.mentionable(names, common.viewer)
            const base = baseOf(common.context)
            const issueLinks =
              mode === "markdown" ? new Set<string>() : yield* linkableIssues(kept, base, common.viewer)
            return yield* Effect.forEach(texts, (t, i) => {
              if (t.text === "") return Effect.succeed("")
              if (!small[i]) return Effect.succeed(undefined)
              // Each text's own names and references (what its cached HTML depends on).
              const own = new Set(mentionCandidates(t.text).filter((n) => mentionable.has(n)))
              const links = new Set(issueCandidates(t.text).filter((k) => issueLinks.has(k)))
              return renderWith({ ...common, ...t }, base, mode === "markdown" ? new Set<string>() : own, links)
            })
          })
      }
    })
  ).pipe(Layer.provide(MarkdownRepo.layer))
}
