// What a quota allows (Forgejo's models/quota, v13+ semantics), as pure functions of what an
// account uses and the rules of its groups; the one place these rules are written.
//
// - A rule matches a subject it names, or (walking up) one of the subject's parents; a matching
//   rule allows while the usage summed over all of its subjects is strictly below its limit
//   (-1: unlimited; 0 always denies).
// - A group allows when at least one of its rules matches and none of the matching ones denies.
// - An account passes when any of its groups allows; with no group, a built-in group with one
//   rule, `size:all` limited to `[quota.default] TOTAL`, decides.

/** Every limit subject, in Forgejo's order (`none` first). */
export const SUBJECTS = [
  "none",
  "size:all",
  "size:repos:all",
  "size:repos:public",
  "size:repos:private",
  "size:git:all",
  "size:git:lfs",
  "size:assets:all",
  "size:assets:attachments:all",
  "size:assets:attachments:issues",
  "size:assets:attachments:releases",
  "size:assets:artifacts",
  "size:assets:packages:all",
  "size:assets:wiki"
] as const

export type Subject = (typeof SUBJECTS)[number]

export const isSubject = (text: string): text is Subject => (SUBJECTS as ReadonlyArray<string>).includes(text)

/** Forgejo's message for a subject it does not know. */
export const unrecognizedSubject = (text: string) => `unrecognized quota limit subject: [subject: ${text}]`

/** The subjects of a list, or the first one that is no subject. */
export const parseSubjects = (
  texts: ReadonlyArray<string>
): { readonly subjects: Array<Subject> } | { readonly unknown: string } => {
  const unknown = texts.find((text) => !isSubject(text))
  return unknown === undefined ? { subjects: texts as Array<Subject> } : { unknown }
}

/** The subject a rule covering the parent also covers (Forgejo's subjectToParent). */
const PARENT: Partial<Record<Subject, Subject>> = {
  "size:git:all": "size:all",
  "size:git:lfs": "size:git:all",
  "size:repos:all": "size:git:all",
  "size:repos:public": "size:repos:all",
  "size:repos:private": "size:repos:all",
  "size:assets:all": "size:all",
  "size:assets:attachments:all": "size:assets:all",
  "size:assets:attachments:issues": "size:assets:attachments:all",
  "size:assets:attachments:releases": "size:assets:attachments:all",
  "size:assets:artifacts": "size:assets:all",
  "size:assets:packages:all": "size:assets:all",
  "size:assets:wiki": "size:assets:all"
}

/** Bytes an account stores, by category (Forgejo's QuotaUsed). */
export interface Used {
  readonly repos: { readonly public: number; readonly private: number }
  readonly lfs: number
  readonly attachments: { readonly issues: number; readonly releases: number }
  readonly artifacts: number
  readonly packages: number
}

export const NOTHING_USED: Used = {
  repos: { public: 0, private: 0 },
  lfs: 0,
  attachments: { issues: 0, releases: 0 },
  artifacts: 0,
  packages: 0
}

/** More than any limit in every category: only unlimited rules allow it. */
const EVERYTHING_USED: Used = {
  repos: { public: Infinity, private: Infinity },
  lfs: Infinity,
  attachments: { issues: Infinity, releases: Infinity },
  artifacts: Infinity,
  packages: Infinity
}

/** The bytes a subject counts: its categories summed (the wiki counts nothing, as in Forgejo). */
export const usageOf = (used: Used, subject: Subject): number => {
  const repos = used.repos.public + used.repos.private
  const attachments = used.attachments.issues + used.attachments.releases
  const assets = attachments + used.artifacts + used.packages
  switch (subject) {
    case "none":
      return 0
    case "size:all":
      return repos + used.lfs + assets
    case "size:repos:all":
      return repos
    case "size:repos:public":
      return used.repos.public
    case "size:repos:private":
      return used.repos.private
    case "size:git:all":
      return repos + used.lfs
    case "size:git:lfs":
      return used.lfs
    case "size:assets:all":
      return assets
    case "size:assets:attachments:all":
      return attachments
    case "size:assets:attachments:issues":
      return used.attachments.issues
    case "size:assets:attachments:releases":
      return used.attachments.releases
    case "size:assets:artifacts":
      return used.artifacts
    case "size:assets:packages:all":
      return used.packages
    case "size:assets:wiki":
      return 0
  }
}

export interface Rule {
  readonly name: string
  /** Bytes; -1 is unlimited. */
  readonly limit: number
  readonly subjects: ReadonlyArray<Subject>
}

export interface Group {
  readonly name: string
  readonly rules: ReadonlyArray<Rule>
}

export interface Verdict {
  /** The rule (or group) has something to say about the subject. */
  readonly match: boolean
  readonly allow: boolean
}

const NO_MATCH: Verdict = { match: false, allow: false }

export const evaluateRule = (rule: Rule, used: Used, subject: Subject): Verdict => {
  let covered: Subject | undefined = subject
  while (covered !== undefined && !rule.subjects.includes(covered)) covered = PARENT[covered]
  if (covered === undefined) return NO_MATCH
  if (rule.limit === -1) return { match: true, allow: true }
  const sum = rule.subjects.reduce((total, s) => total + usageOf(used, s), 0)
  return { match: true, allow: sum < rule.limit }
}

export const evaluateGroup = (group: Group, used: Used, subject: Subject): Verdict => {
  let match = false
  for (const rule of group.rules) {
    const verdict = evaluateRule(rule, used, subject)
    if (!verdict.match) continue
    if (!verdict.allow) return { match: true, allow: false }
    match = true
  }
  return match ? { match: true, allow: true } : NO_MATCH
}

/** The group that applies to an account in no group: `size:all` up to `[quota.default] TOTAL`. */
export const defaultGroup = (total: number): Group => ({
  name: "builtin-default-group",
  rules: [{ name: "builtin-default-rule", limit: total, subjects: ["size:all"] }]
})

/**
 * The verdict of `evaluateGroups` when it does not depend on what the account uses, else
 * `undefined`. Evaluation only ever turns from allow to deny as usage grows, so what is allowed
 * with unbounded usage is always allowed (e.g. an unlimited group), and what is denied with none
 * is always denied (a limit of 0, or no rule covering the subject): no need to sum the usage then.
 */
export const verdictWithoutUsage = (
  groups: ReadonlyArray<Group>,
  subject: Subject,
  defaultTotal: number
): boolean | undefined => {
  if (evaluateGroups(groups, EVERYTHING_USED, subject, defaultTotal)) return true
  if (!evaluateGroups(groups, NOTHING_USED, subject, defaultTotal)) return false
  return undefined
}

/** Whether an account in `groups` may store more for `subject` (`defaultTotal` when it has none). */
export const evaluateGroups = (
  groups: ReadonlyArray<Group>,
  used: Used,
  subject: Subject,
  defaultTotal: number
): boolean => {
  const applying = groups.length === 0 ? [defaultGroup(defaultTotal)] : groups
  return applying.some((group) => {
    const verdict = evaluateGroup(group, used, subject)
    return verdict.match && verdict.allow
  })
}
