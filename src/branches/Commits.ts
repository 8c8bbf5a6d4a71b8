// Commits as the API answers them (Forgejo's `Commit`, services/convert `ToCommit`): the one
// conversion the commit routes (Http.ts) and a pull request's commits (src/pulls) share.
import { Effect, Option } from "effect"
import { Settings } from "../config/Settings.ts"
import { CommitSigner } from "../git/SigningRules.ts"
import type { Principal } from "../http/Caller.ts"
import { parseFormBool } from "../http/Query.ts"
import type { RepoRow } from "../repos/Repo.ts"
import type { UserRow } from "../users/Repo.ts"
import { toApiUser, type User } from "../users/Schema.ts"
import { UsersService } from "../users/Service.ts"
import type { Commit } from "./Api.ts"
import * as Reader from "./Service.ts"

/** Forgejo's detail switches: absent or empty is on. */
const switchOn = (value: string | undefined) => parseFormBool(value) ?? true

export interface DetailOptions {
  readonly stat: boolean
  readonly files: boolean
  readonly verification: boolean
}

export const detailOptions = (query: {
  readonly stat?: string | undefined
  readonly files?: string | undefined
  readonly verification?: string | undefined
}): DetailOptions => ({
  stat: switchOn(query.stat),
  files: switchOn(query.files),
  verification: switchOn(query.verification)
})

/** `toCommits` and the e-mail look-up it uses, for the routes that answer commits. */
export const makeCommitPresenter = Effect.gen(function* () {
  const settings = yield* Settings
  const users = yield* UsersService
  const signer = yield* CommitSigner
  const root = settings.server.ROOT_URL
  const apiBase = (owner: UserRow, repo: RepoRow) => `${root}api/v1/repos/${owner.name}/${repo.name}`
  const htmlBase = (owner: UserRow, repo: RepoRow) => `${root}${owner.name}/${repo.name}`

  /** Accounts behind commit e-mails (null when none), looked up once per address. */
  const accountsByEmail = (emails: ReadonlyArray<string>, viewer: Principal | undefined) =>
    Effect.gen(function* () {
      const found = new Map<string, User | null>()
      for (const email of emails) {
        const key = email.toLowerCase()
        if (found.has(key)) continue
        const row = yield* users.byCommitEmail(email)
        found.set(key, Option.isSome(row) ? toApiUser(settings, row.value, viewer) : null)
      }
      return (email: string) => found.get(email.toLowerCase()) ?? null
    })

  const toCommits = (
    owner: UserRow,
    repo: RepoRow,
    path: string,
    commits: ReadonlyArray<Reader.CommitInfo>,
    viewer: Principal | undefined,
    options: DetailOptions
  ) =>
    Effect.gen(function* () {
      const userOf = yield* accountsByEmail(
        commits.flatMap((c) => [c.author.email, c.committer.email]),
        viewer
      )
      const shas = commits.map((c) => c.sha)
      // A few git calls for the whole page, each only when asked for.
      const stats = options.stat ? yield* Reader.commitStats(path, shas) : undefined
      const files = options.files ? yield* Reader.commitFiles(path, shas) : undefined
      const signatures = options.verification ? yield* Reader.commitSignatures(path, shas) : undefined
      // Forgejo's ToVerification: a key the committer registered, the instance's key, or why not.
      const verifications = new Map<string, Commit["commit"]["verification"]>()
      if (signatures !== undefined) {
        for (const c of commits)
          verifications.set(c.sha, yield* signer.verify(signatures.get(c.sha), c.committer.email))
      }
      const api = apiBase(owner, repo)
      return commits.map(
        (c): Commit => ({
          url: `${api}/git/commits/${c.sha}`,
          sha: c.sha,
          created: c.committer.date,
          html_url: `${htmlBase(owner, repo)}/commit/${c.sha}`,
          commit: {
            url: `${api}/git/commits/${c.sha}`,
            author: c.author,
            committer: c.committer,
            message: c.message,
            tree: { url: `${api}/git/trees/${c.tree}`, sha: c.tree, created: c.committer.date },
            verification: verifications.get(c.sha) ?? null
          },
          author: userOf(c.author.email),
          committer: userOf(c.committer.email),
          parents: c.parents.map((p) => ({ url: `${api}/git/commits/${p}`, sha: p, created: c.committer.date })),
          files: files === undefined ? null : (files.get(c.sha) ?? []),
          stats: stats === undefined ? null : (stats.get(c.sha) ?? { total: 0, additions: 0, deletions: 0 })
        })
      )
    })

  return { accountsByEmail, toCommits, verify: signer.verify }
})
