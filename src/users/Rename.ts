// Renaming an account, user or organization (Forgejo's user_service.RenameUser, used by
// `POST /orgs/{org}/rename` and `POST /admin/users/{u}/rename`): the row, a redirect from the old
// name (URLs naming the old owner answer 307 until another account takes the name; a new account
// may take it at once, as Forgejo without USERNAME_COOLDOWN_PERIOD), then each repository's
// directory and wiki, moved through its Repository entity so that no write of it runs meanwhile.
// The poster's unmerged AGit pull requests show their head branch under the new name at once
// (Forgejo's agit.UserNameChanged); the next push of a topic finds them by poster either way.
import { existsSync, rmdirSync } from "node:fs"
import { dirname } from "node:path"
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { onAlreadyExists, transaction as sqlTransaction } from "../db/Boundary.ts"
import { doerOf } from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import { RepositoryWriter } from "../git/Repository.ts"
import * as Errors from "../http/Errors.ts"
import { userNameProblem } from "../lib/Names.ts"
import { PullsRepo } from "../pulls/Repo.ts"
import { BEING_CREATED } from "../repos/Policy.ts"
import { type RepoRow, ReposRepo } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import { wikiDir, wikiRef } from "../wiki/Location.ts"
import { type UserRow, UsersRepo } from "./Repo.ts"

export interface RenameMessages {
  /** The refusal of a name another account holds (Forgejo words it differently per route). */
  readonly taken: (name: string) => string
  /** Who renames it (the RenameUser event's doer). */
  readonly doer: Pick<UserRow, "id" | "name">
}

export class AccountRename extends Context.Service<
  AccountRename,
  {
    /**
     * The renamed account; the same account when the name does not change. 422 for a refused name,
     * 409 while one of its repositories is still being created (a fork or migration job).
     */
    readonly rename: (
      account: UserRow,
      newName: string,
      messages: RenameMessages
    ) => Effect.Effect<UserRow, Errors.ValidationFailed | Errors.Conflict | Errors.InternalError>
  }
>()("hearth/users/AccountRename") {
  static readonly layer = Layer.effect(
    AccountRename,
    Effect.gen(function* () {
      const transaction = sqlTransaction(yield* SqlClient)
      const users = yield* UsersRepo
      const repoRows = yield* ReposRepo
      const repos = yield* ReposService
      const writer = yield* RepositoryWriter
      const pulls = yield* PullsRepo
      const hub = yield* EventHub

      /** Moves one repository (and its wiki) between owners' directories. */
      const moveRepo = (repo: RepoRow, from: UserRow, to: UserRow) =>
        Effect.gen(function* () {
          const fromDir = repos.pathOf(from, repo)
          const toDir = repos.pathOf(to, repo)
          if (existsSync(fromDir)) yield* writer.move({ id: repo.id, dir: fromDir }, toDir)
          if (existsSync(wikiDir(fromDir))) yield* writer.move(wikiRef(repo.id, fromDir), wikiDir(toDir))
        })

      // Once the whole rename is done (rows and directories): name caches drop the old name, the
      // federation tells the followers (src/events/Events.ts RenameUser).
      const announce = (row: UserRow, oldName: string, doer: Pick<UserRow, "id" | "name">) =>
        hub.publish({
          _tag: "RenameUser",
          user: doerOf(row),
          oldName,
          isOrganization: row.type === "organization",
          doer: doerOf(doer)
        })

      const rename = (account: UserRow, newName: string, messages: RenameMessages) =>
        Effect.gen(function* () {
          const problem = userNameProblem(newName)
          if (problem !== undefined) return yield* Errors.validationFailed(problem)
          if (newName === account.name) return account
          const taken = () => Errors.validationFailed(messages.taken(newName))
          // Letter case only: the same directories, no redirect (Forgejo updates the name alone).
          if (newName.toLowerCase() === account.lowerName) {
            const row = yield* transaction(users.update(account.id, { name: newName })).pipe(onAlreadyExists(taken))
            yield* announce(row, account.name, messages.doer)
            return row
          }
          if (Option.isSome(yield* users.findByName(newName))) return yield* taken()
          const owned = yield* repoRows.allOwnedBy(account.id)
          // A fork or migration still writing into the old directory would lose its work.
          if (owned.some((repo) => repo.status === "creating")) return yield* Errors.conflict(BEING_CREATED)
          const renamed: UserRow = { ...account, name: newName, lowerName: newName.toLowerCase() }
          const inTheWay = owned.find((repo) => existsSync(repos.pathOf(renamed, repo)))
          if (inTheWay !== undefined) {
            return yield* Errors.validationFailed(
              `repository files already exist [uname: ${newName}, name: ${inTheWay.name}]: ` +
                `move or delete ${newName.toLowerCase()}/${inTheWay.lowerName}.git under the repository root first`
            )
          }
          const row = yield* transaction(
            Effect.gen(function* () {
              const row = yield* users.update(account.id, { name: newName })
              yield* users.removeRedirect(newName) // the name is this account's now
              yield* users.addRedirect(account.name, account.id)
              yield* pulls.renameAgitHeads(account.id, newName)
              return row
            })
          ).pipe(onAlreadyExists(taken))
          const moved: Array<RepoRow> = []
          const undo = Effect.gen(function* () {
            for (const repo of moved) yield* moveRepo(repo, renamed, account)
            yield* transaction(
              Effect.gen(function* () {
                yield* users.update(account.id, { name: account.name })
                yield* users.removeRedirect(account.name)
                yield* pulls.renameAgitHeads(account.id, account.name)
              })
            )
          }).pipe(
            Effect.ignoreCause({ log: "Error", message: `could not give ${newName} its old name ${account.name} back` })
          )
          for (const repo of owned) {
            yield* moveRepo(repo, account, renamed).pipe(
              Effect.tapError((e) =>
                Effect.andThen(
                  Effect.logError(`could not move ${account.name}/${repo.name} to ${newName}: ${e.message}`),
                  undo
                )
              ),
              Effect.mapError(() => Errors.internalError("the account's repositories could not be moved"))
            )
            moved.push(repo)
          }
          // The old owner's directory, now empty (anything else left there stays).
          if (owned.length > 0) {
            yield* Effect.sync(() => {
              try {
                rmdirSync(dirname(repos.pathOf(account, owned[0]!)))
              } catch {
                // not empty, or gone: left alone
              }
            })
          }
          yield* announce(row, account.name, messages.doer)
          return row
        })

      return AccountRename.of({ rename })
    })
  )
}
