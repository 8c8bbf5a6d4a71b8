// Names: the length bounds of names in requests, the user/organization and repository name rules
// (Forgejo's models/user `IsUsableUsername`, models/repo `IsUsableRepoName`), and git's ref,
// branch and revision rules (`git check-ref-format`; Forgejo's `GitRefName` binding). One
// validator of each, used by every slice that takes such a name.
import { Schema } from "effect"

/**
 * The longest names, in characters: Forgejo's binding sizes (`MaxSize`), else the width of the
 * column Forgejo keeps them in (255). Request schemas declare them (`BoundedName`) and each
 * slice's validator checks the same figure. Unbounded names reached the database's indexes, which
 * refuse long values (a 500).
 */
export const NAME_MAX = {
  /** Users and organizations (`Username;MaxSize(40)`). */
  user: 40,
  /** Repositories (`AlphaDashDot;MaxSize(100)`). */
  repo: 100,
  /** Branches given to the API (`GitRefName;MaxSize(100)`). */
  branch: 100,
  /** Tags: unbound in Forgejo's binding; a ref's components are file names too. */
  tag: 255,
  team: 255,
  token: 255,
  keyTitle: 255,
  oauth2App: 255,
  /** Quota groups and rules (the primary key of Forgejo's tables). */
  quota: 255
} as const

/**
 * A name in a request body, at most `max` characters. The refusal is Forgejo's binding message
 * (`[Field]: MaxSize (n)`), the same the slice's own validator gives, and the bound is shown in the
 * OpenAPI document (`maxLength`).
 */
export const BoundedName = (field: string, max: number) =>
  Schema.String.check(Schema.isMaxLength(max, { message: `[${field}]: MaxSize (${max})` }))

// Forgejo's reserved names (models/user/user.go) and reserved patterns.
const RESERVED_USER_NAMES = new Set([
  ".",
  "..",
  ".well-known",
  "admin",
  "api",
  "assets",
  "attachments",
  "avatar",
  "avatars",
  "captcha",
  "commits",
  "debug",
  "error",
  "explore",
  "favicon.ico",
  "ghost",
  "issues",
  "login",
  "manifest.json",
  "metrics",
  "milestones",
  "new",
  "notifications",
  "org",
  "pulls",
  "raw",
  "repo",
  "repo-avatars",
  "robots.txt",
  "search",
  "serviceworker.js",
  "ssh_info",
  "swagger.v1.json",
  "user",
  "v2",
  "gitea-actions",
  "forgejo-actions"
])
const RESERVED_USER_SUFFIXES = [".keys", ".gpg", ".rss", ".atom", ".png"]
const VALID_USER_NAME = /^[\da-zA-Z][-.\w]*$/
const INVALID_USER_NAME = /[-._]{2,}|[-._]$/

/** Why a user or organization name is refused, or `undefined` when it is fine. */
export const userNameProblem = (name: string): string | undefined => {
  if (name.length === 0) return "[UserName]: Required"
  if (name.length > NAME_MAX.user) return `[UserName]: MaxSize (${NAME_MAX.user})`
  if (!VALID_USER_NAME.test(name) || INVALID_USER_NAME.test(name)) {
    return `[UserName]: must be valid alpha or numeric or dash(-_) or dot characters: "${name}"`
  }
  const lower = name.toLowerCase()
  if (RESERVED_USER_NAMES.has(lower) || RESERVED_USER_SUFFIXES.some((s) => lower.endsWith(s))) {
    return `name is reserved [name: ${name}]`
  }
  return undefined
}

const VALID_REPO_NAME = /^[-.\w]+$/
const RESERVED_REPO_NAMES = new Set([".", "..", "-"])
const RESERVED_REPO_PATTERNS = [".git", ".wiki", ".rss", ".atom"]

/** Why a repository name is refused, or `undefined`. */
export const repoNameProblem = (name: string): string | undefined => {
  if (name.length === 0) return "[Name]: Required"
  if (name.length > NAME_MAX.repo) return `[Name]: MaxSize (${NAME_MAX.repo})`
  if (!VALID_REPO_NAME.test(name)) {
    return `[Name]: must contain only alphanumeric, dash ('-'), underscore ('_') and dot ('.') characters: "${name}"`
  }
  const lower = name.toLowerCase()
  if (RESERVED_REPO_NAMES.has(lower)) return `name is reserved [name: ${name}]`
  const pattern = RESERVED_REPO_PATTERNS.find((suffix) => lower.endsWith(suffix))
  if (pattern !== undefined) return `name pattern is not allowed [pattern: *${pattern}]`
  return undefined
}

/**
 * Why `name` is not a valid ref name by `git check-ref-format` rules, or `undefined` when it is.
 * `allowOneLevel` accepts names without a `/` (branch and tag short names).
 * Also rejects a leading `-` (it would read as an option) and `HEAD`-like ambiguity is left to callers.
 */
export const refNameProblem = (
  name: string,
  options: { readonly allowOneLevel?: boolean } = {}
): string | undefined => {
  if (name.length === 0) return "ref name is empty"
  if (name.length > 1024) return "ref name is too long"
  if (name.startsWith("-")) return "ref name must not start with '-'"
  if (name === "@") return "ref name must not be '@'"
  if (name.startsWith("/") || name.endsWith("/")) return "ref name must not start or end with '/'"
  if (name.endsWith(".")) return "ref name must not end with '.'"
  if (name.includes("..")) return "ref name must not contain '..'"
  if (name.includes("//")) return "ref name must not contain '//'"
  if (name.includes("@{")) return "ref name must not contain '@{'"
  for (const char of name) {
    const code = char.charCodeAt(0)
    // Control characters (NUL included), DEL, space and the revision/glob syntax characters.
    if (code < 0x20 || code === 0x7f) return "ref name must not contain control characters"
    if (" ~^:?*[\\".includes(char)) return `ref name must not contain '${char}'`
  }
  for (const component of name.split("/")) {
    if (component.startsWith(".")) return "ref name components must not start with '.'"
    if (component.endsWith(".lock")) return "ref name components must not end with '.lock'"
    // Each component is a file name in the repository (a loose ref): longer ones cannot be written.
    if (Buffer.byteLength(component) > 255) return "ref name components must be at most 255 bytes"
  }
  if (!options.allowOneLevel && !name.includes("/")) return "ref name must contain '/'"
  return undefined
}

/** True when `name` passes `git check-ref-format` (see `refNameProblem`). */
export const isValidRefName = (name: string, options: { readonly allowOneLevel?: boolean } = {}): boolean =>
  refNameProblem(name, options) === undefined

/**
 * Why `name` is not a valid branch (or tag) short name, or `undefined`. `HEAD` and `@` name the
 * current branch to git (`git check-ref-format --branch`), so neither can be a branch's name.
 */
export const branchNameProblem = (name: string): string | undefined =>
  name === "HEAD" || name === "@"
    ? `'${name}' is not a valid branch name`
    : (refNameProblem(`refs/heads/${name}`) ?? (name.startsWith("-") ? "ref name must not start with '-'" : undefined))

/** A revision expression given to git: a ref, a sha, `name^{commit}`, `name~2`… never an option or range. */
export const revisionProblem = (revision: string): string | undefined => {
  if (revision.length === 0 || revision.length > 1024) return "revision is empty or too long"
  if (revision.startsWith("-")) return "revision must not start with '-'"
  if (revision.includes("..")) return "revision must not contain '..'"
  if (/[\x00-\x20\x7f]/.test(revision)) return "revision must not contain spaces or control characters"
  return undefined
}
