// The caller's access to a repository (Forgejo's access_model.GetUserRepoPermission, reduced to
// what exists so far): site admins and owners (the user, or an org's owner team) are owners;
// org teams that cover every repository give their level (their `repo.code` unit for push/pull);
// collaborators give theirs; a public repository can be read by whoever may see its owner.
// What the caller cannot read is answered 404, what it can read but not change 403 (Forgejo's `repoAssignment`,
// `reqRepoWriter`).
import { Context, Effect, Layer, Option } from "effect"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { type AccessMode, atLeast } from "../lib/AccessMode.ts"
import { OrgPolicy } from "../orgs/Policy.ts"
import { OrgsRepo, type TeamRow } from "../orgs/Repo.ts"
import { AccountPolicy } from "../users/Policy.ts"
import type { UserRow } from "../users/Repo.ts"
import { type CollaboratorMode, type RepoFilter, type RepoRow, ReposRepo } from "./Repo.ts"

export interface RepoAccess {
  /** The overall level (admin rights, ownership). */
  readonly mode: AccessMode
  /** The level on the code unit (what `push` and `pull` report). */
  readonly code: AccessMode
}

const OWNER: RepoAccess = { mode: "owner", code: "owner" }

const best = (a: AccessMode, b: AccessMode): AccessMode => (atLeast(a, b) ? a : b)

const REFUSALS: Record<"read" | "write" | "admin" | "owner", string> = {
  read: "user should have the permission to read the repo",
  write: "user should have a permission to write to a repo",
  admin: "user should be an owner or a collaborator with admin write of a repository",
  owner: "user should be the owner of the repo"
}

/** Why a repository whose git data a job is still making (a fork, a migration) refuses changes. */
/**
 * Which repositories a search shows `viewer` (GET /repos/search, the web's explore and home): private
 * ones only to signed-in callers that did not opt out (`withPrivate`), never to public-only tokens;
 * restricted users only ever get what they were given; site admins everything.
 */
export const searchFilter = (viewer: Principal | undefined, withPrivate: boolean): RepoFilter => {
  if (viewer === undefined) return { publicOwners: ["public"] }
  const publicOnly = viewer.scopes?.publicOnly === true
  const privateToo = withPrivate && !publicOnly
  if (viewer.user.restricted) return { publicOwners: [], viewerId: viewer.user.id, publicOnly: !privateToo }
  if (!privateToo) return { publicOwners: ["public"] }
  return viewer.user.isAdmin
    ? { all: true, publicOwners: [] }
    : { publicOwners: ["public", "limited"], viewerId: viewer.user.id }
}

export const BEING_CREATED = "repository is being created, try again in a moment"

/**
 * 409 while the repository is `creating` (its fork or migration job has not finished): the one
 * rule every write to a repository checks, content (`ensureWritable`), settings, transfers and
 * pushes alike. Reads meanwhile see the repository as it is: empty until the copy lands.
 */
export const ensureCreated = (repo: Pick<RepoRow, "status">): Effect.Effect<void, Errors.Conflict> =>
  repo.status === "creating" ? Effect.fail(Errors.conflict(BEING_CREATED)) : Effect.void

/**
 * What every change to a repository's content checks after it was opened for the caller (Forgejo's
 * order): write access to code (403), then not being created (409), not archived (423); a pull
 * mirror only takes what it fetches (403).
 */
export const ensureWritable = (opened: {
  readonly owner: UserRow
  readonly repo: RepoRow
  readonly access: RepoAccess
}) =>
  !atLeast(opened.access.code, "write")
    ? Effect.fail(Errors.forbidden(REFUSALS.write))
    : opened.repo.status === "creating"
      ? ensureCreated(opened.repo)
      : opened.repo.isArchived
        ? Effect.fail(
            Errors.locked(`<Repository ${opened.repo.id}:${opened.owner.name}/${opened.repo.name}> is archived`)
          )
        : opened.repo.isMirror
          ? Effect.fail(Errors.forbidden("Git Repository is a mirror."))
          : Effect.void

export class RepoPolicy extends Context.Service<
  RepoPolicy,
  {
    readonly access: (viewer: Principal | undefined, repo: RepoRow, owner: UserRow) => Effect.Effect<RepoAccess>
    /** `access` for each item of a list, from a few batched queries (not several per row). */
    readonly accessMany: (
      viewer: Principal | undefined,
      items: ReadonlyArray<{ readonly repo: RepoRow; readonly owner: UserRow }>
    ) => Effect.Effect<Array<RepoAccess>>
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
  }
>()("hearth/repos/RepoPolicy") {
  static readonly layer = Layer.effect(
    RepoPolicy,
    Effect.gen(function* () {
      const repos = yield* ReposRepo
      const orgs = yield* OrgPolicy
      const orgRows = yield* OrgsRepo
      const accounts = yield* AccountPolicy

      // The rules, with the per-owner and per-repository lookups passed in so that a list can
      // answer them from a few batched queries instead of several per row.
      const decide = (
        viewer: Principal | undefined,
        repo: RepoRow,
        owner: UserRow,
        lookup: {
          readonly canSee: (owner: UserRow) => Effect.Effect<boolean>
          readonly isOrgOwner: (org: UserRow, me: UserRow) => Effect.Effect<boolean>
          readonly teamsOf: (org: UserRow, me: UserRow) => Effect.Effect<ReadonlyArray<TeamRow>>
          readonly teamRepos: (team: TeamRow) => Effect.Effect<ReadonlySet<number>>
          readonly collaborator: (repo: RepoRow, me: UserRow) => Effect.Effect<Option.Option<CollaboratorMode>>
        }
      ) =>
        Effect.gen(function* () {
          const me = viewer?.user
          if (me !== undefined && (me.isAdmin || me.id === owner.id)) return OWNER
          let mode: AccessMode = "none"
          let code: AccessMode = "none"
          // Restricted users reach only what they were given explicitly.
          if (!repo.isPrivate && me?.restricted !== true && (yield* lookup.canSee(owner))) {
            mode = "read"
            code = "read"
          }
          if (me === undefined) return { mode, code }
          if (owner.type === "organization") {
            if (yield* lookup.isOrgOwner(owner, me)) return OWNER
            // A team reaches every repository of its organization, or those given to it.
            for (const team of yield* lookup.teamsOf(owner, me)) {
              if (!team.includesAllRepositories && !(yield* lookup.teamRepos(team)).has(repo.id)) continue
              mode = best(mode, team.permission)
              code = best(
                code,
                atLeast(team.permission, "admin") ? team.permission : (team.units["repo.code"] ?? "none")
              )
            }
          }
          const collaborator = yield* lookup.collaborator(repo, me)
          if (Option.isSome(collaborator)) {
            mode = best(mode, collaborator.value)
            code = best(code, collaborator.value)
          }
          return { mode, code } as RepoAccess
        })

      const access = (viewer: Principal | undefined, repo: RepoRow, owner: UserRow) =>
        decide(viewer, repo, owner, {
          canSee: (o) => accounts.canSee(viewer, o),
          isOrgOwner: orgs.isOwner,
          teamsOf: orgs.teamsOf,
          teamRepos: (team) => orgRows.teamRepoIds(team.id),
          collaborator: (r, me) => repos.collaboratorMode(r.id, me.id)
        })

      const accessMany = (
        viewer: Principal | undefined,
        items: ReadonlyArray<{ readonly repo: RepoRow; readonly owner: UserRow }>
      ) =>
        Effect.gen(function* () {
          const me = viewer?.user
          const modes =
            me === undefined
              ? new Map<number, CollaboratorMode>()
              : yield* repos.collaboratorModes(
                  items.map((i) => i.repo.id),
                  me.id
                )
          // Each owner is looked at once per list.
          const seen = new Map<number, boolean>()
          const orgOwner = new Map<number, boolean>()
          const teams = new Map<number, ReadonlyArray<TeamRow>>()
          const teamRepos = new Map<number, ReadonlySet<number>>()
          const once = <A>(cache: Map<number, A>, id: number, compute: Effect.Effect<A>) =>
            cache.has(id)
              ? Effect.succeed(cache.get(id)!)
              : Effect.tap(compute, (value) => Effect.sync(() => cache.set(id, value)))
          return yield* Effect.forEach(items, ({ owner, repo }) =>
            decide(viewer, repo, owner, {
              canSee: (o) => once(seen, o.id, accounts.canSee(viewer, o)),
              isOrgOwner: (org, user) => once(orgOwner, org.id, orgs.isOwner(org, user)),
              teamsOf: (org, user) => once(teams, org.id, orgs.teamsOf(org, user)),
              teamRepos: (team) => once(teamRepos, team.id, orgRows.teamRepoIds(team.id)),
              collaborator: (r) => Effect.succeed(Option.fromNullishOr(modes.get(r.id)))
            })
          )
        })

      const ensureVisible = (viewer: Principal | undefined, repo: RepoRow, owner: UserRow) =>
        Effect.gen(function* () {
          const result = yield* access(viewer, repo, owner)
          if (!atLeast(result.mode, "read")) return yield* Errors.notFound()
          if (viewer?.scopes?.publicOnly === true && repo.isPrivate) {
            return yield* Errors.forbidden("token scope is limited to public repos")
          }
          return result
        })

      return RepoPolicy.of({
        access,
        accessMany,
        ensureVisible,
        ensureAccess: (viewer, repo, owner, level) =>
          Effect.gen(function* () {
            const result = yield* ensureVisible(viewer, repo, owner)
            const have = level === "write" ? result.code : result.mode
            if (!atLeast(have, level)) return yield* Errors.forbidden(REFUSALS[level])
            return result
          })
      })
    })
  )
}
