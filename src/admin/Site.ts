// Site administration beyond accounts: every e-mail address (Forgejo's admin `SearchEmails`) and
// the repositories on disk that have no row (Forgejo's "unadopted" repositories: a directory
// `{ROOT}/{owner}/{name}.git` of an existing account, left by a restore or a failed deletion),
// listed, adopted (the row made from the bare repository) or deleted.
import { readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { Context, Effect, Layer, Option } from "effect"
import { Settings } from "../config/Settings.ts"
import * as Git from "../git/Git.ts"
import * as Errors from "../http/Errors.ts"
import type { Page } from "../http/Pagination.ts"
import { repoNameProblem } from "../lib/Names.ts"
import type { RepoRow } from "../repos/Repo.ts"
import { ReposRepo } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { AdminRepo, type EmailEntry } from "./Repo.ts"

/** A glob as Forgejo's `glob.Compile` reads it: `*` and `?` within one path segment, case-insensitive. */
const globOf = (pattern: string): RegExp =>
  new RegExp(
    `^${pattern
      .split("")
      .map((c) => (c === "*" ? "[^/]*" : c === "?" ? "[^/]" : c.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
      .join("")}$`,
    "i"
  )

/**
 * Whether `owner/name` matches Forgejo's `pattern`: `owner-glob/name-glob`, or one glob that
 * either part may match.
 */
const matcher = (pattern: string): ((owner: string, name: string) => boolean) => {
  if (pattern === "") return () => true
  const slash = pattern.indexOf("/")
  if (slash < 0) {
    const glob = globOf(pattern)
    return (owner, name) => glob.test(owner) || glob.test(name)
  }
  const owner = globOf(pattern.slice(0, slash))
  const name = globOf(pattern.slice(slash + 1))
  return (o, n) => owner.test(o) && name.test(n)
}

const isDirectory = (path: string) => {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

const listDir = (path: string) => {
  try {
    return readdirSync(path).sort()
  } catch {
    return []
  }
}

export class AdminSite extends Context.Service<
  AdminSite,
  {
    readonly searchEmails: (keyword: string, page: Page) => Effect.Effect<{ rows: Array<EmailEntry>; total: number }>
    /** `owner/name` of each unadopted repository matching `pattern`, by name. */
    readonly unadopted: (pattern: string, page: Page) => Effect.Effect<{ rows: Array<string>; total: number }>
    /** Makes the row of an unadopted repository (private, as Forgejo); 404 when there is none of that name. */
    readonly adopt: (
      ownerName: string,
      name: string,
      doer: UserRow
    ) => Effect.Effect<RepoRow, Errors.NotFound | Errors.Conflict>
    /** Removes an unadopted repository's directory; 404 when there is none of that name. */
    readonly removeUnadopted: (ownerName: string, name: string) => Effect.Effect<void, Errors.NotFound>
  }
>()("hearth/admin/AdminSite") {
  static readonly layer = Layer.effect(
    AdminSite,
    Effect.gen(function* () {
      const settings = yield* Settings
      const repo = yield* AdminRepo
      const users = yield* UsersRepo
      const repoRows = yield* ReposRepo
      const repos = yield* ReposService
      const root = settings.repository.ROOT

      /** The owner and directory of an unadopted repository named in a path, or 404. */
      const unadoptedAt = (ownerName: string, name: string) =>
        Effect.gen(function* () {
          if (repoNameProblem(name) !== undefined) return yield* Errors.notFound()
          const owner = yield* users.findByName(ownerName)
          if (Option.isNone(owner)) return yield* Errors.notFound()
          const dir = repos.pathOf(owner.value, { lowerName: name.toLowerCase() })
          if (Option.isSome(yield* repoRows.findByName(owner.value.id, name)) || !isDirectory(dir)) {
            return yield* Errors.notFound()
          }
          return { owner: owner.value, dir }
        })

      return AdminSite.of({
        searchEmails: (keyword, page) => repo.searchEmails(keyword, page),
        unadopted: (pattern, page) =>
          Effect.gen(function* () {
            const matches = matcher(pattern)
            const found: Array<string> = []
            for (const ownerDir of listDir(root)) {
              if (!isDirectory(join(root, ownerDir))) continue
              // Directories of accounts that do not exist are not Hearth's to offer (Forgejo skips them).
              const owner = yield* users.findByName(ownerDir)
              if (Option.isNone(owner) || owner.value.lowerName !== ownerDir) continue
              for (const entry of listDir(join(root, ownerDir))) {
                if (!entry.endsWith(".git") || entry.endsWith(".wiki.git")) continue
                const name = entry.slice(0, -".git".length)
                if (repoNameProblem(name) !== undefined || !matches(owner.value.name, name)) continue
                if (!isDirectory(join(root, ownerDir, entry))) continue
                if (Option.isSome(yield* repoRows.findByName(owner.value.id, name))) continue
                found.push(`${owner.value.name}/${name}`)
              }
            }
            return { rows: found.slice(page.offset, page.offset + page.limit), total: found.length }
          }),
        adopt: (ownerName, name, doer) =>
          Effect.gen(function* () {
            const { owner, dir } = yield* unadoptedAt(ownerName, name)
            const head = yield* Git.headBranch(dir).pipe(Effect.orElseSucceed(() => Option.none<string>()))
            const row = yield* repos.insertRow(
              owner,
              { name, description: "", default_branch: Option.getOrElse(head, () => "main"), is_private: true },
              doer
            )
            // Emptiness, size and (when HEAD names no branch) the default branch, from the git data.
            yield* repos.recordGitChange(owner, row)
            return row
          }),
        removeUnadopted: (ownerName, name) =>
          Effect.gen(function* () {
            const { dir } = yield* unadoptedAt(ownerName, name)
            yield* Git.removeRepository(dir)
          })
      })
    })
  )
}
