// The caller's access to a repository (Forgejo's access_model.GetUserRepoPermission, reduced to
// what exists so far): site admins and owners (the user, or an org's owner team) are owners;
// org teams that cover every repository give their level (their `repo.code` unit for push/pull);
// collaborators give theirs; a public repository can be read by whoever may see its owner.
// What the caller cannot read is answered 404, what it can read but not change 403 (CONTRACT §1.8).
import { Context, Effect, Layer, Option } from "effect"
import type { Principal } from "../http/Authentication.ts"
import * as Errors from "../http/Errors.ts"
import { type AccessMode, atLeast, OrgPolicy } from "../orgs/Policy.ts"
import { AccountPolicy } from "../users/Policy.ts"
import type { UserRow } from "../users/Repo.ts"
import { type RepoRow, ReposRepo } from "./Repo.ts"

export interface RepoAccess {
  /** The overall level (admin rights, ownership). */
  readonly mode: AccessMode
  /** The level on the code unit (what `push` and `pull` report). */
  readonly code: AccessMode
}

const OWNER: RepoAccess = { mode: "owner", code: "owner" }

const best = (a: AccessMode, b: AccessMode): AccessMode => atLeast(a, b) ? a : b

const REFUSALS: Record<"read" | "write" | "admin" | "owner", string> = {
  read: "user should have the permission to read the repo",
  write: "user should have a permission to write to a repo",
  admin: "user should be an owner or a collaborator with admin write of a repository",
  owner: "user should be the owner of the repo"
}

export class RepoPolicy extends Context.Service<RepoPolicy, {
  readonly access: (viewer: Principal | undefined, repo: RepoRow, owner: UserRow) => Effect.Effect<RepoAccess>
  /**
   * The caller's access, or 404 when it may not read the repository; 403 when a public-only token
   * reaches a private one.
   */
  readonly ensureVisible: (
    viewer: Principal | undefined,
    repo: RepoRow,
    owner: UserRow
  ) => Effect.Effect<RepoAccess, Errors.NotFound | Errors.Forbidden>
  /** As `ensureVisible`, then 403 unless the caller has at least `level`. */
  readonly ensureAccess: (
    viewer: Principal | undefined,
    repo: RepoRow,
    owner: UserRow,
    level: "read" | "write" | "admin" | "owner"
  ) => Effect.Effect<RepoAccess, Errors.NotFound | Errors.Forbidden>
}>()("hearth/repos/RepoPolicy") {
  static readonly layer = Layer.effect(
    RepoPolicy,
    Effect.gen(function*() {
      const repos = yield* ReposRepo
      const orgs = yield* OrgPolicy
      const accounts = yield* AccountPolicy

      const access = (viewer: Principal | undefined, repo: RepoRow, owner: UserRow) =>
        Effect.gen(function*() {
          const me = viewer?.user
          if (me !== undefined && (me.isAdmin || me.id === owner.id)) return OWNER
          let mode: AccessMode = "none"
          let code: AccessMode = "none"
          // Restricted users reach only what they were given explicitly.
          if (!repo.isPrivate && me?.restricted !== true && (yield* accounts.canSee(viewer, owner))) {
            mode = "read"
            code = "read"
          }
          if (me === undefined) return { mode, code }
          if (owner.type === "organization") {
            if (yield* orgs.isOwner(owner, me)) return OWNER
            // Without a team-repository table yet, only teams covering all repositories reach one.
            for (const team of yield* orgs.teamsOf(owner, me)) {
              if (!team.includesAllRepositories) continue
              mode = best(mode, team.permission)
              code = best(
                code,
                atLeast(team.permission, "admin") ? team.permission : (team.units["repo.code"] ?? "none")
              )
            }
          }
          const collaborator = yield* Effect.orDie(repos.collaboratorMode(repo.id, me.id))
          if (Option.isSome(collaborator)) {
            mode = best(mode, collaborator.value)
            code = best(code, collaborator.value)
          }
          return { mode, code }
        })

      const ensureVisible = (viewer: Principal | undefined, repo: RepoRow, owner: UserRow) =>
        Effect.gen(function*() {
          const result = yield* access(viewer, repo, owner)
          if (!atLeast(result.mode, "read")) return yield* Errors.notFound()
          if (viewer?.scopes?.publicOnly === true && repo.isPrivate) {
            return yield* Errors.forbidden("token scope is limited to public repos")
          }
          return result
        })

      return RepoPolicy.of({
        access,
        ensureVisible,
        ensureAccess: (viewer, repo, owner, level) =>
          Effect.gen(function*() {
            const result = yield* ensureVisible(viewer, repo, owner)
            const have = level === "write" ? result.code : result.mode
            if (!atLeast(have, level)) return yield* Errors.forbidden(REFUSALS[level])
            return result
          })
      })
    })
  )
}
