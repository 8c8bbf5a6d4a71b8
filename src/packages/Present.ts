// The Package and PackageFile objects of the API (Forgejo's modules/structs/package.go,
// services/convert/package.go): one Package per version; `repository` is null unless the package
// is linked and the viewer may read that repository (CONTRACT-PACKAGES §5, §6).
import { Effect, Option } from "effect"
import { Settings } from "../config/Settings.ts"
import type { Principal } from "../http/Caller.ts"
import { formatTime } from "../http/Json.ts"
import { RepoPolicy, repoRefusal } from "../repos/Policy.ts"
import { RepoPresenter } from "../repos/Present.ts"
import { ReposRepo } from "../repos/Repo.ts"
import type { Repository } from "../repos/Schema.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { ghostUser, toApiUser, type User } from "../users/Schema.ts"
import type { DigestedFileRow, PackageVersion } from "./Repo.ts"

export interface PackageJson {
  readonly id: number
  readonly owner: User
  readonly creator: User
  readonly repository: Repository | null
  readonly type: string
  readonly name: string
  readonly version: string
  readonly html_url: string
  readonly created_at: string
}

export interface PackageFileJson {
  readonly id: number
  /** Capital S, as Forgejo (the Go field has no JSON tag). */
  readonly Size: number
  readonly name: string
  readonly md5: string
  readonly sha1: string
  readonly sha256: string
  readonly sha512: string
}

export const toPackageFile = (file: DigestedFileRow): PackageFileJson => ({
  id: file.id,
  Size: file.size,
  name: file.name,
  md5: file.md5,
  sha1: file.sha1,
  sha256: file.sha256,
  sha512: file.sha512
})

/** Forgejo's `{AppURL}{owner}/-/packages/{type}/{lower_name}/{lower_version}`. */
export const packageHtmlUrl = (root: string, owner: UserRow, row: PackageVersion): string =>
  `${root}${encodeURIComponent(owner.name)}/-/packages/${row.pkg.type}/${encodeURIComponent(row.pkg.lowerName)}/` +
  encodeURIComponent(row.version.lowerVersion)

export const makePackagePresenter = Effect.gen(function* () {
  const settings = yield* Settings
  const users = yield* UsersRepo
  const repos = yield* ReposRepo
  const repoPolicy = yield* RepoPolicy
  const repoPresenter = yield* RepoPresenter
  const root = settings.server.ROOT_URL

  const linkedRepository = (viewer: Principal | undefined, repoId: number | null) =>
    Effect.gen(function* () {
      if (repoId === null) return null
      const repo = yield* repos.findById(repoId)
      if (Option.isNone(repo)) return null
      const owner = yield* users.findById(repo.value.ownerId)
      if (Option.isNone(owner)) return null
      const access = yield* repoPolicy.access(viewer, repo.value, owner.value)
      const opened = { repo: repo.value, owner: owner.value, access }
      if (repoRefusal(viewer, opened, { role: "read" }) !== undefined) return null
      return yield* repoPresenter.one(viewer, opened)
    })

  return (viewer: Principal | undefined, owner: UserRow, rows: ReadonlyArray<PackageVersion>) =>
    Effect.forEach(rows, (row) =>
      Effect.gen(function* () {
        // The viewer's own versions (what it just published, for the event) need no look-up.
        const creator =
          row.version.creatorId === null
            ? Option.none<UserRow>()
            : row.version.creatorId === viewer?.user.id
              ? Option.some(viewer.user)
              : yield* users.findById(row.version.creatorId)
        return {
          id: row.version.id,
          owner: toApiUser(settings, owner, viewer),
          creator: toApiUser(
            settings,
            Option.getOrElse(creator, () => ghostUser),
            viewer
          ),
          repository: yield* linkedRepository(viewer, row.pkg.repoId),
          type: row.pkg.type,
          name: row.pkg.name,
          version: row.version.version,
          html_url: packageHtmlUrl(root, owner, row),
          created_at: formatTime(row.version.createdAt)
        } satisfies PackageJson
      })
    )
})
