// What no request may carry, whatever the route: a request target (path and query) that does not
// decode to UTF-8 text, or that holds a NUL or another control character; a Basic user name of
// that kind; JSON strings with a NUL or a lone surrogate. None of these can name anything:
// PostgreSQL refuses NUL in text, git refuses control characters in names and paths, and a lone
// surrogate cannot be written as UTF-8. Refused at the edge (Edge.ts) with a message, instead of
// reaching the database or git and failing there.
import { isUtf8 } from "node:buffer"

const CONTROL = /[\x00-\x1f\x7f]/

const decode = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

/** A value for a message: short, and with control characters shown escaped. */
const shown = (text: string) => JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text)

/**
 * Why a request target (`/path?query`, as received) cannot be served, or `undefined`. Every
 * percent-escape must decode to UTF-8, and no decoded path segment, query name or value may hold
 * a control character (NUL included).
 */
export const requestTargetProblem = (url: string): string | undefined => {
  // Node refuses raw control characters in a request line itself; only escapes can carry them.
  if (!url.includes("%")) return undefined
  const mark = url.indexOf("?")
  const path = mark < 0 ? url : url.slice(0, mark)
  if (path.includes("%")) {
    const decoded = decode(path)
    if (decoded === undefined) return "the URL path is not valid percent-encoded UTF-8"
    if (CONTROL.test(decoded)) return "the URL path contains a NUL or control character"
  }
  if (mark < 0) return undefined
  for (const pair of url.slice(mark + 1).split("&")) {
    if (!pair.includes("%")) continue
    const equals = pair.indexOf("=")
    const rawName = equals < 0 ? pair : pair.slice(0, equals)
    const name = decode(rawName.replaceAll("+", " "))
    if (name === undefined || CONTROL.test(name)) {
      return "a query parameter name is not valid percent-encoded UTF-8 or contains a control character"
    }
    if (equals < 0) continue
    const value = decode(pair.slice(equals + 1).replaceAll("+", " "))
    if (value === undefined) return `the query parameter ${shown(name)} is not valid percent-encoded UTF-8`
    if (CONTROL.test(value)) return `the query parameter ${shown(name)} contains a NUL or control character`
  }
  return undefined
}

/**
 * Why the user name of a Basic `Authorization` header cannot name an account, or `undefined`
 * (also for any other header: only Basic carries a name, base64-encoded, so only it can smuggle
 * bytes that no header may hold).
 */
export const basicUserNameProblem = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined) return undefined
  const match = /^\s*basic\s+(\S+)\s*$/i.exec(authorization)
  if (match === null) return undefined
  const bytes = Buffer.from(match[1]!, "base64")
  const colon = bytes.indexOf(0x3a)
  const name = colon < 0 ? bytes : bytes.subarray(0, colon)
  if (!isUtf8(name)) return "the user name in the Authorization header is not valid UTF-8"
  if (name.some((byte) => byte < 0x20 || byte === 0x7f)) {
    return "the user name in the Authorization header contains a NUL or control character"
  }
  return undefined
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

const stringProblem = (text: string): string | undefined =>
  text.includes("\0")
    ? "must not contain a NUL character"
    : LONE_SURROGATE.test(text)
      ? "is not valid Unicode text (a lone surrogate)"
      : undefined

/** The first string in a parsed JSON value (keys included) that no field may hold, and where. */
const findBadString = (value: unknown, path: Array<string | number>): { path: string; problem: string } | undefined => {
  if (typeof value === "string") {
    const problem = stringProblem(value)
    return problem === undefined ? undefined : { path: path.join("."), problem }
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findBadString(value[i], [...path, i])
      if (found !== undefined) return found
    }
    return undefined
  }
  if (typeof value === "object" && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      const keyProblem = stringProblem(key)
      if (keyProblem !== undefined) return { path: path.join("."), problem: `has a key that ${keyProblem}` }
      const found = findBadString(inner, [...path, key])
      if (found !== undefined) return found
    }
  }
  return undefined
}

// In JSON text a NUL or a surrogate can only be written as an escape: look for those first.
const SUSPECT_ESCAPE = /\\u(0000|[dD][89a-fA-F])/

/**
 * Why a JSON request body cannot be taken, in the style of the other body failures
 * (`[field.0.name]: …`), or `undefined`. Bytes that are not UTF-8 are refused as a whole; strings
 * (and keys) must hold neither NUL nor a lone surrogate. A body that is not JSON at all is left to
 * the schema decoding, which says so.
 */
export const jsonBodyProblem = (bytes: Uint8Array, text: string): string | undefined => {
  if (!isUtf8(bytes)) return "request body is not valid UTF-8"
  if (!SUSPECT_ESCAPE.test(text)) return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  const found = findBadString(value, [])
  if (found === undefined) return undefined
  return found.path === "" ? `request body: ${found.problem}` : `[${found.path}]: ${found.problem}`
}

/** As `jsonBodyProblem`, for a value already parsed (an ActivityPub activity): `[path]: …`. */
export const jsonStringsProblem = (value: unknown): string | undefined => {
  const found = findBadString(value, [])
  if (found === undefined) return undefined
  return found.path === "" ? found.problem : `[${found.path}]: ${found.problem}`
}
