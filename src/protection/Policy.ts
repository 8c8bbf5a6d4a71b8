// Branch and tag protection rules that need no database (Forgejo's models/git/protected_branch.go,
// protected_branch_list.go, protected_tag.go): which rule covers a branch, file and tag patterns,
// and the messages a refused push or merge shows.
import { compileGlob, isGlob } from "../lib/Glob.ts"
import type { BranchRule, TagRule } from "./Repo.ts"

/**
 * The rule that covers `branch` (Forgejo's `GetFirstMatched`): a rule of that exact name
 * (compared case-insensitively) wins; else the first glob rule that matches (`*` stays within
 * one `/` segment, `**` crosses them), by priority and then age.
 */
export const matchRule = <R extends Pick<BranchRule, "ruleName" | "priority" | "id">>(
  rules: ReadonlyArray<R>,
  branch: string
) => {
  const lower = branch.toLowerCase()
  const exact = rules.find((r) => !isGlob(r.ruleName) && r.ruleName.toLowerCase() === lower)
  if (exact !== undefined) return exact
  return listOrder(rules.filter((r) => isGlob(r.ruleName))).find(
    (r) => compileGlob(r.ruleName, "/")?.test(branch) ?? false
  )
}

/** The list order (Forgejo's `FindRepoProtectedBranchRules` sorted): plain names first, then globs, each by priority and age. */
export const listOrder = <R extends Pick<BranchRule, "ruleName" | "priority" | "id">>(rules: ReadonlyArray<R>) =>
  [...rules].sort(
    (a, b) => Number(isGlob(a.ruleName)) - Number(isGlob(b.ruleName)) || a.priority - b.priority || a.id - b.id
  )

/** Forgejo's `getFilePatterns`: `;`-separated, trimmed, lower-cased globs with `.` and `/` as separators. */
export const filePatterns = (text: string): Array<RegExp> =>
  text
    .split(";")
    .map((p) => p.trim().toLowerCase())
    .filter((p) => p !== "")
    .flatMap((p) => {
      const re = compileGlob(p, "./")
      return re === undefined ? [] : [re]
    })

export const matchesAny = (patterns: ReadonlyArray<RegExp>, path: string) =>
  patterns.some((re) => re.test(path.toLowerCase()))

/** Whether a tag rule's pattern covers `tag`: `/…/` is a regular expression, anything else a glob (Forgejo's `EnsureCompiledPattern`). */
export const tagPatternMatches = (rule: Pick<TagRule, "namePattern">, tag: string): boolean => {
  const pattern = rule.namePattern
  if (pattern.length >= 2 && pattern.startsWith("/") && pattern.endsWith("/")) {
    try {
      return new RegExp(pattern.slice(1, -1)).test(tag)
    } catch {
      return false
    }
  }
  return compileGlob(pattern)?.test(tag) ?? false
}

/** Whether a tag pattern compiles (a regular expression between slashes, or a glob). */
export const validTagPattern = (pattern: string): boolean => {
  if (pattern.length >= 2 && pattern.startsWith("/") && pattern.endsWith("/")) {
    try {
      new RegExp(pattern.slice(1, -1))
      return true
    } catch {
      return false
    }
  }
  return compileGlob(pattern) !== undefined
}

// The messages of Forgejo's routers/private/hook_pre_receive.go (printed as `remote: Hearth: …`).
export const PushMessages = {
  defaultBranchDeleted: (b: string) => `branch ${b} is the default branch and cannot be deleted`,
  deletion: (b: string) => `branch ${b} is protected from deletion`,
  forcePush: (b: string) => `branch ${b} is protected from force push`,
  unverified: (b: string, sha: string) => `branch ${b} is protected from unverified commit ${sha}`,
  protectedFile: (b: string, path: string) => `branch ${b} is protected from changing file ${path}`,
  notAllowed: (b: string) => `Not allowed to push to protected branch ${b}`,
  tag: (t: string) => `Tag ${t} is protected`
} as const

/** The reasons `CheckPullBranchProtections` gives, in its order (services/pull/merge.go). */
export const MergeReasons = {
  statuses: "Not all required status checks successful",
  approvals: "Does not have enough approvals",
  rejected: "There are requested changes",
  officialRequests: "There are official review requests",
  outdated: "The head branch is behind the base branch",
  protectedFiles: "Changed protected files"
} as const
