// Static files of the web pages, served from the packages in node_modules (no CDN, no copy in the
// repository): one stylesheet made of Primer CSS (`@primer/css`) and its colour themes
// (`@primer/primitives`, light and dark chosen by prefers-color-scheme) with Hearth's few rules
// after them (highlighted code, repository pages), htmx (`htmx.org`), the clone URLs' copy
// button (static/copy.js) and the favicon (an octicon). Each is read once, on first use,
// and served at a URL holding a digest of its content, so it can be cached for a year
// (`immutable`); a new version of a package gives a new URL. Brotli and gzip are made once per file.
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { brotliCompressSync, gzipSync, constants as zlib } from "node:zlib"
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { packagePath, packageRequire } from "../lib/PackageRoot.ts"
import { HIGHLIGHT_CSS } from "./code/Highlight.ts"
import { iconDocument } from "./Icons.ts"
import { REPO_CSS } from "./RepoStyles.ts"

const packageFile = (specifier: string) => readFileSync(packageRequire.resolve(specifier), "utf8")

// Hearth's own rules: only what Primer's classes do not say.
const HEARTH_CSS = `
.hearth-main { min-height: calc(100vh - 200px); }
.hearth-footer { border-top: 1px solid var(--borderColor-muted); }
.hearth-header .Header-link { white-space: nowrap; }
.hearth-search { width: 16rem; }
`

interface Asset {
  readonly body: Uint8Array
  readonly contentType: string
  gzip?: Uint8Array
  br?: Uint8Array
}

interface Catalog {
  /** name ("hearth.css") → its URL path. */
  readonly urls: ReadonlyMap<string, string>
  /** file name in the URL → the asset. */
  readonly files: ReadonlyMap<string, Asset>
}

let catalog: Catalog | undefined

const build = (): Catalog => {
  const css = [
    packageFile("@primer/css/dist/primitives.css"),
    packageFile("@primer/primitives/dist/css/functional/themes/light.css"),
    packageFile("@primer/primitives/dist/css/functional/themes/dark.css"),
    packageFile("@primer/css/dist/core.css"),
    packageFile("@primer/css/dist/product.css"),
    packageFile("@primer/css/dist/markdown.css"),
    HEARTH_CSS,
    HIGHLIGHT_CSS,
    REPO_CSS
  ].join("\n")
  const sources: ReadonlyArray<readonly [string, string, string]> = [
    ["hearth.css", css, "text/css; charset=utf-8"],
    ["htmx.js", packageFile("htmx.org/dist/htmx.min.js"), "text/javascript; charset=utf-8"],
    ["favicon.svg", iconDocument("flame", "#e16f24"), "image/svg+xml"],
    ["copy.js", readFileSync(packagePath("src/web/static/copy.js"), "utf8"), "text/javascript; charset=utf-8"]
  ]
  const urls = new Map<string, string>()
  const files = new Map<string, Asset>()
  for (const [name, text, contentType] of sources) {
    const body = new TextEncoder().encode(text)
    const digest = createHash("sha256").update(body).digest("hex").slice(0, 16)
    const dot = name.lastIndexOf(".")
    const file = `${name.slice(0, dot)}.${digest}${name.slice(dot)}`
    urls.set(name, `/assets/${file}`)
    files.set(file, { body, contentType })
  }
  return { urls, files }
}

/** The URL path of a named asset ("hearth.css", "htmx.js", "favicon.svg"). */
export const assetUrl = (name: string): string => {
  catalog ??= build()
  const url = catalog.urls.get(name)
  if (url === undefined) throw new Error(`web: no asset named ${name}`)
  return url
}

const serve = Effect.gen(function* () {
  catalog ??= build()
  const request = yield* HttpServerRequest.HttpServerRequest
  const { file } = yield* HttpRouter.params
  const asset = file === undefined ? undefined : catalog.files.get(file)
  if (asset === undefined) return HttpServerResponse.empty({ status: 404 })
  // Brotli (made once, at its best quality) when accepted: the stylesheet is 39 KB instead of 65 KB.
  const accept = request.headers["accept-encoding"] ?? ""
  const encoding = /\bbr\b/.test(accept) ? "br" : /\bgzip\b/.test(accept) ? "gzip" : undefined
  if (encoding === "br")
    asset.br ??= brotliCompressSync(asset.body, { params: { [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY } })
  if (encoding === "gzip") asset.gzip ??= gzipSync(asset.body, { level: 9 })
  return HttpServerResponse.uint8Array(encoding === "br" ? asset.br! : encoding === "gzip" ? asset.gzip! : asset.body, {
    contentType: asset.contentType,
    headers: {
      "cache-control": "public, max-age=31536000, immutable",
      vary: "accept-encoding",
      ...(encoding === undefined ? {} : { "content-encoding": encoding })
    }
  })
})

/** `GET /assets/{file}`. */
export const AssetRoutes = HttpRouter.add("GET", "/assets/:file", serve)
