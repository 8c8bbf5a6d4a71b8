// Access-token scopes as Forgejo: `all`, `public-only`, and `read:`/`write:` per category.
// `write` implies `read`; `all` is every write scope.

export const categories = [
  "activitypub",
  "admin",
  "misc",
  "notification",
  "organization",
  "package",
  "issue",
  "repository",
  "user"
] as const
export type Category = (typeof categories)[number]
export type Level = "read" | "write"

/** A parsed scope set: the highest level per category, and the public-only restriction. */
export interface ScopeSet {
  readonly levels: ReadonlyMap<Category, Level>
  readonly publicOnly: boolean
}

export class InvalidScope extends Error {
  readonly scope: string
  constructor(scope: string) {
    super(`invalid access token scope: ${scope}`)
    this.scope = scope
  }
}

/** Parses scope names (each may itself be a comma-separated list); throws `InvalidScope`. */
export const parseScopes = (names: ReadonlyArray<string>): ScopeSet => {
  const levels = new Map<Category, Level>()
  let publicOnly = false
  for (const name of names.flatMap((n) => n.split(",")).map((n) => n.trim())) {
    if (name === "" || name === "sudo") continue
    if (name === "all") {
      for (const c of categories) levels.set(c, "write")
      continue
    }
    if (name === "public-only") {
      publicOnly = true
      continue
    }
    // Exactly "<level>:<category>": extra parts ("read:user:x") make it unknown.
    const [level, category, ...rest] = name.split(":")
    if (
      (level !== "read" && level !== "write") ||
      rest.length > 0 ||
      !(categories as ReadonlyArray<string>).includes(category ?? "")
    ) {
      throw new InvalidScope(name)
    }
    const c = category as Category
    if (levels.get(c) !== "write") levels.set(c, level)
  }
  return { levels, publicOnly }
}

/** The canonical list, as stored and as shown back: `all` when every category is write. */
export const formatScopes = (set: ScopeSet): Array<string> => {
  const out: Array<string> = []
  const all = categories.every((c) => set.levels.get(c) === "write")
  if (all) out.push("all")
  if (set.publicOnly) out.push("public-only")
  if (!all)
    for (const c of categories) {
      const level = set.levels.get(c)
      if (level !== undefined) out.push(`${level}:${c}`)
    }
  return out
}

export const isEmptyScope = (set: ScopeSet): boolean => set.levels.size === 0 && !set.publicOnly

/** The level a request method needs: reads for GET/HEAD/OPTIONS, writes otherwise. */
export const levelForMethod = (method: string): Level =>
  method === "GET" || method === "HEAD" || method === "OPTIONS" ? "read" : "write"

export const grants = (set: ScopeSet, level: Level, category: Category): boolean => {
  const have = set.levels.get(category)
  return have === "write" || (have === "read" && level === "read")
}

/** The scopes missing for a route (all listed categories are needed), as Forgejo words them. */
export const missingScopeMessage = (set: ScopeSet, level: Level, required: ReadonlyArray<Category>) =>
  required.every((c) => grants(set, level, c))
    ? undefined
    : `token does not have at least one of required scope(s): [${required.map((c) => `${level}:${c}`).join(" ")}]`
