// Wiki page names (Forgejo's services/wiki/wiki_path.go): a page has three forms — the title users
// type, the web path (URL segment, `sub_url`, the webhook's `page`) and the git path (the file in
// the wiki repository). Pure functions, named after Forgejo's, with its escaping rules: Go's
// url.QueryEscape/QueryUnescape/PathUnescape and util.PathJoinRelX are reproduced exactly, so the
// same page has the same names in both forges. Nothing here can name a file outside the wiki: the
// result of every mapping is a cleaned, relative path.
import { posix } from "node:path"

/** Names the web UI uses for its own pages (`/wiki/_pages`, `/wiki/_new`, …): no page may take them. */
const RESERVED = ["_pages", "_new", "_edit", "raw"]

/** Go's url.QueryEscape: everything but `A-Za-z0-9-_.~` percent-encoded (upper-case), space as `+`. */
export const queryEscape = (s: string): string => {
  let out = ""
  for (const byte of Buffer.from(s, "utf8")) {
    const c = String.fromCharCode(byte)
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c
    else if (c === " ") out += "+"
    else out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`
  }
  return out
}

/** Go's url.QueryUnescape (`plus`) or PathUnescape: `undefined` for a malformed `%` escape. */
const percentDecode = (s: string, plus: boolean): string | undefined => {
  const bytes: Array<number> = []
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!
    if (c === "%") {
      const hex = s.slice(i + 1, i + 3)
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined
      bytes.push(Number.parseInt(hex, 16))
      i += 2
    } else if (c === "+" && plus) bytes.push(0x20)
    else bytes.push(...Buffer.from(c, "utf8"))
  }
  return Buffer.from(bytes).toString("utf8")
}
export const queryUnescape = (s: string) => percentDecode(s, true)
export const pathUnescape = (s: string) => percentDecode(s, false)

/**
 * Go's util.PathJoinRelX: backslashes become slashes, each element is cleaned as if absolute (so
 * `..` cannot climb above the root), joined, and made relative again; "" stays "", "/" is ".".
 */
export const pathJoinRelX = (...elements: ReadonlyArray<string>): string => {
  const cleaned = elements.filter((e) => e !== "").map((e) => posix.normalize(`/${e.replaceAll("\\", "/")}`))
  if (cleaned.length === 0) return ""
  const joined = posix.normalize(posix.join(...cleaned))
  const trimmed = joined.length > 1 ? joined.replace(/\/+$/, "") : joined
  return trimmed === "/" ? "." : trimmed.slice(1)
}

const DASH_MARKER = ".-"
const hasDashMarker = (s: string) => s.endsWith(DASH_MARKER)

/** One web path segment as the text it stands for (Forgejo's `unescapeSegment`). */
const unescapeSegment = (s: string): string => {
  const plain = hasDashMarker(s) ? s.slice(0, -DASH_MARKER.length) : s.replaceAll("-", " ")
  // Forgejo keeps the marker-free text when it cannot be unescaped (it is "not a must").
  return queryUnescape(plain) ?? plain
}

/** Text as one web path segment (Forgejo's `escapeSegToWeb`). */
const escapeSegToWeb = (s: string, hadDashMarker: boolean): string => {
  const marked = hadDashMarker || s.includes("-") || s.endsWith(".md") ? `${s}${DASH_MARKER}` : s.replaceAll(" ", "-")
  return queryEscape(marked)
}

/** The title a user typed as a web path (`UserTitleToWebPath`): `unnamed` when nothing is left. */
export const userTitleToWebPath = (title: string): string => {
  const path = pathJoinRelX(escapeSegToWeb(title.trim(), false))
  return path === "" || path === "." ? "unnamed" : path
}

/** The web path from the raw (still escaped) `{pageName}` of a request (`WebPathFromRequest`). */
export const webPathFromRequest = (raw: string): string => pathJoinRelX(raw).replaceAll("/", "%2F")

/** Each segment of a web path as text (`WebPathSegments`). */
const webPathSegments = (webPath: string) => webPath.split("/").map(unescapeSegment)

/** The reserved segment a web path uses, if any (`validateWebPath`). */
export const reservedSegment = (webPath: string): string | undefined =>
  webPathSegments(webPath).find((segment) => RESERVED.includes(segment))

/** The file a web path names (`WebPathToGitPath`); a path ending in `.md` names its file directly. */
export const webPathToGitPath = (webPath: string): string => {
  if (webPath.endsWith(".md")) return pathJoinRelX(pathUnescape(webPath) ?? webPath)
  const segments = webPath.split("/").map((segment) =>
    escapeSegToWeb(unescapeSegment(segment), hasDashMarker(segment))
      // A space is safe in a git path.
      .replaceAll("%20", " ")
      .replaceAll("+", " ")
  )
  return `${segments.join("/")}.md`
}

/** The web path of a file of the wiki (`GitPathToWebPath`), or `undefined` when it is no page. */
export const gitPathToWebPath = (gitPath: string): string | undefined => {
  if (!gitPath.endsWith(".md")) return undefined
  const segments: Array<string> = []
  for (const segment of gitPath.slice(0, -3).split("/")) {
    const plain = hasDashMarker(segment) ? segment.slice(0, -DASH_MARKER.length) : segment.replaceAll("-", " ")
    const text = queryUnescape(plain)
    if (text === undefined) return undefined
    segments.push(escapeSegToWeb(text, hasDashMarker(segment)))
  }
  return segments.join("/")
}

/** The title shown for a web path (`WebPathToUserTitle`'s display part). */
export const webPathToUserTitle = (webPath: string): string => {
  let display = posix.basename(webPath)
  if (display.endsWith(".md")) {
    display = display.slice(0, -3)
    display = pathUnescape(display) ?? display
  }
  return unescapeSegment(display)
}
