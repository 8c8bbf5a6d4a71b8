// Adding a collaborator (Forgejo's repo_module.AddCollaborator), shared by PUT
// /repos/{o}/{r}/collaborators/{name} and the web's collaboration page: one set of rules and
// messages — a known permission, no organization, not the owner, and neither the owner nor the user
// blocked the other.
import { Effect } from "effect"
import { BlocksService } from "../blocks/Service.ts"
import * as Errors from "../http/Errors.ts"
import type { UserRow } from "../users/Repo.ts"
import type { CollaboratorMode, RepoRow } from "./Repo.ts"
import { ReposService } from "./Service.ts"

export const COLLABORATOR_MODES: ReadonlyArray<CollaboratorMode> = ["read", "write", "admin"]

export const makeAddCollaborator = Effect.gen(function* () {
  const repos = yield* ReposService
  const blocks = yield* BlocksService
  return (owner: UserRow, repo: RepoRow, user: UserRow, permission: string) =>
    Effect.gen(function* () {
      if (!(COLLABORATOR_MODES as ReadonlyArray<string>).includes(permission)) {
        return yield* Errors.validationFailed(`[Permission]: must be one of read, write, admin: "${permission}"`)
      }
      if (user.type === "organization") {
        return yield* Errors.validationFailed(`an organization cannot be a collaborator [name: ${user.name}]`)
      }
      if (user.id === owner.id) {
        return yield* Errors.validationFailed(`the repository owner cannot be a collaborator [name: ${user.name}]`)
      }
      yield* blocks.ensureNeitherBlocked(owner, user)
      yield* repos.setCollaborator(repo, user, permission as CollaboratorMode)
    })
})
