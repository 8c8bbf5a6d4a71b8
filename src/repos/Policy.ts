// The caller's access to a repository (Forgejo's access_model.GetUserRepoPermission, reduced to
// what exists so far): site admins and owners (the user, or an org's owner team) are owners;
// org teams that cover every repository give their level (their `repo.code` unit for push/pull);
// collaborators give theirs; a public repository can be read by whoever may see its owner.
// What the caller cannot read is answered 404, what it can read but not change 403 (Forgejo's `repoAssignment`,
// `reqRepoWriter`): `repoRefusal` is that rule, applied by the repository assignment of every API
// route (Assignment.ts) and by git over HTTP and SSH (GitHttp.ts).
import { Context, Effect, Layer, Option } from "effect"
import type { RepoRule, RepoUnit } from "../http/Access.ts"
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

/**
 * Why a repository whose git data a job is still making (a fork, a migration) refuses changes:
 * 409 for every route that changes it (settings, content, transfers), and the hook refuses pushes.
 */
export const BEING_CREATED = "repository is being created, try again in a moment"

/** A repository opened for a caller: the rows and the caller's access. */
export interface OpenedRepo {
  readonly owner: UserRow
  readonly repo: RepoRow
  readonly access: RepoAccess
}

/** The repository of a route's path as the repository assignment opens it (`CurrentRepo`). */
export interface OpenedRepository extends OpenedRepo {
  /** The bare repository on disk. */
  readonly path: string
  /** The authenticated caller, if any. */
  readonly caller: Principal | undefined
}

/** Why a caller may not use a repository as a route needs; `kind` lets git word it its own way. */
export interface RepoRefusal {
  readonly kind: "hidden" | "public-only" | "unit-disabled" | "role" | "creating" | "archived" | "mirror"
  readonly reason: "not-found" | "forbidden" | "conflict" | "locked"
  readonly message: string
}

/** Forgejo's `reqRepoReader(unit)` refusal when the unit is on but the caller cannot read it. */
const UNIT_READ_REFUSED = "user should have specific read permission or be a repo admin or a site admin"

/** Whether the repository has `unit` switched on (code cannot be switched off). */
export const unitEnabled = (repo: RepoRow, unit: RepoUnit): boolean => {
  switch (unit) {
    case "code":
      return true
    case "issues":
      return repo.units.hasIssues
    case "pulls":
      return repo.units.hasPullRequests
    case "wiki":
      return repo.units.hasWiki
    case "releases":
      return repo.units.hasReleases
    case "packages":
      return repo.units.hasPackages
  }
}

/** The caller's level for `rule`: code for what touches git data, the overall level otherwise. */
const levelFor = (access: RepoAccess, rule: RepoRule): AccessMode =>
  (rule.role === "write" && rule.unit === undefined) || rule.unit === "code" ? access.code : access.mode

/**
 * The one rule for using a repository (Forgejo's `repoAssignment`, the public-only token check,
 * `reqRepoReader/Writer(unit)`, `reqRepoAdmin`, `reqOwner`, `mustNotBeArchived`, in that order),
 * shared by the API's repository assignment and git over HTTP and SSH: `undefined` when allowed.
 */
export const repoRefusal = (
  caller: Principal | undefined,
  opened: OpenedRepo,
  rule: RepoRule
): RepoRefusal | undefined => {
  const { access, repo, owner } = opened
  if (!atLeast(access.mode, "read")) return { kind: "hidden", reason: "not-found", message: "" }
  if (caller?.scopes?.publicOnly === true && repo.isPrivate) {
    return { kind: "public-only", reason: "forbidden", message: "token scope is limited to public repos" }
  }
  if (rule.unit !== undefined && !unitEnabled(repo, rule.unit)) {
    return { kind: "unit-disabled", reason: "not-found", message: "" }
  }
  if (!atLeast(levelFor(access, rule), rule.role)) {
    const message = rule.role === "read" && rule.unit !== undefined ? UNIT_READ_REFUSED : REFUSALS[rule.role]
    return { kind: "role", reason: "forbidden", message }
  }
  if (rule.changes === undefined) return undefined
  if (repo.status === "creating") return { kind: "creating", reason: "conflict", message: BEING_CREATED }
  if (rule.changes === "settings") return undefined
  if (repo.isArchived) {
    return {
      kind: "archived",
      reason: "locked",
      message: `<Repository ${repo.id}:${owner.name}/${repo.name}> is archived`
    }
  }
  if (rule.changes === "content" && repo.isMirror)
    return { kind: "mirror", reason: "forbidden", message: "Git Repository is a mirror." }
  return undefined
}

/** `repoRefusal` as the API's error, or nothing. */
export const ensureAllowed = (
  caller: Principal | undefined,
  opened: OpenedRepo,
  rule: RepoRule
): Effect.Effect<void, Errors.NotFound | Errors.Forbidden | Errors.Conflict | Errors.Locked> => {
  const refused = repoRefusal(caller, opened, rule)
  return refused === undefined ? Effect.void : Effect.fail(Errors.refusal(refused.reason, refused.message))
}

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

      // The one rule (repoRefusal) for a repository reached by id (`/repositories/{id}`) or at an old name.
      const ensureVisible = (viewer: Principal | undefined, repo: RepoRow, owner: UserRow) =>
        Effect.tap(
          access(viewer, repo, owner),
          (result) => ensureAllowed(viewer, { owner, repo, access: result }, { role: "read" })
          // Without `changes` the rule refuses with 404 or 403 only.
        ) as Effect.Effect<RepoAccess, Errors.NotFound | Errors.Forbidden>

      return RepoPolicy.of({
        access,
        accessMany,
        ensureVisible
      })
    })
  )
}
