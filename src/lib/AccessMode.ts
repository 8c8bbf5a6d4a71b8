// Access levels to a repository or an organization's teams, lowest first (Forgejo's
// models/perm `AccessMode`): what a team grants, what a caller has on a repository, what a route
// requires.

export const ACCESS_MODES = ["none", "read", "write", "admin", "owner"] as const
export type AccessMode = (typeof ACCESS_MODES)[number]

export const accessRank = (mode: AccessMode): number => ACCESS_MODES.indexOf(mode)

/** Whether `have` grants at least `need`. */
export const atLeast = (have: AccessMode, need: AccessMode): boolean => accessRank(have) >= accessRank(need)

export const isAccessMode = (s: string): s is AccessMode => (ACCESS_MODES as ReadonlyArray<string>).includes(s)
