// Where links and images point: relative targets resolve against the render's context (the
// repository URL), as Forgejo's markup does; absolute ones and fragments stay as written.
import { isSafeUrl } from "./Sanitize.ts"
import type { RenderOptions } from "./State.ts"

const ABSOLUTE = /^(?:[a-z][a-z0-9+.-]*:|\/\/)/i

const join = (base: string, path: string) => `${base}/${path.replace(/^(?:\.\/)+/, "").replace(/^\/+/, "")}`

/** A link's target (`wiki`: a wiki page links to other pages under `/wiki`). */
export const resolveLink = (options: RenderOptions, href: string): string => {
  if (href === "" || href.startsWith("#") || href.startsWith("?") || ABSOLUTE.test(href)) return href
  if (options.base === "" || href.startsWith("/")) return href
  return join(options.wiki ? `${options.base}/wiki` : options.base, href)
}

/** An image's source (in a wiki, the raw file of the wiki repository). */
export const resolveMedia = (options: RenderOptions, src: string): string => {
  if (src === "" || ABSOLUTE.test(src) || options.base === "" || src.startsWith("/")) return src
  return join(options.wiki ? `${options.base}/wiki/raw` : options.base, src)
}

const IMAGE = /\.(?:png|jpe?g|gif|webp|svg|bmp|ico|avif)$/i

/**
 * A `[[Page]]` / `[[Name|Page]]` wiki link, as Forgejo renders it: spaces in the page name become
 * dashes; a page that names an image shows the image (from the wiki's raw files) inside the link.
 */
export const wikiLink = (
  options: RenderOptions,
  inner: string,
  escapeHtml: (s: string) => string,
  rel: (href: string) => string
): string => {
  const bar = inner.indexOf("|")
  const name = (bar < 0 ? inner : inner.slice(0, bar)).trim()
  let page = (bar < 0 ? inner : inner.slice(bar + 1)).trim()
  const absolute = ABSOLUTE.test(page)
  if (IMAGE.test(page)) {
    const src = absolute ? page : resolveMedia({ ...options, wiki: true }, page)
    const title = page.slice(page.lastIndexOf("/") + 1)
    if (!isSafeUrl(src, true)) return `<img title="${escapeHtml(title)}" alt="${escapeHtml(name)}" />`
    return `<a href="${escapeHtml(src)}" rel="${rel(src)}"><img src="${escapeHtml(src)}" title="${escapeHtml(title)}" alt="${escapeHtml(name)}" /></a>`
  }
  if (!absolute) {
    page = page.replace(/ /g, "-").split("/").map(encodeURIComponent).join("/")
    if (options.base !== "") page = options.wiki ? `${options.base}/wiki/${page}` : `${options.base}/${page}`
  }
  if (!isSafeUrl(page, false)) return `<a>${escapeHtml(name)}</a>`
  return `<a href="${escapeHtml(page)}" rel="${rel(page)}">${escapeHtml(name)}</a>`
}
