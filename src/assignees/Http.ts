// Assignees: the candidates with write access (Forgejo's GetRepoAssignees: the access table's
// `mode >= write`); reviewers: the candidates with read access or more, but the caller (Forgejo's
// GetReviewers; for a public repository its watchers and the organization's members too).
import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { Settings } from "../config/Settings.ts"
import { signedInCaller } from "../http/Caller.ts"
import { apiGroup } from "../http/Group.ts"
import { type AccessMode, atLeast } from "../lib/AccessMode.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { RepoPolicy } from "../repos/Policy.ts"
import { toApiUser } from "../users/Schema.ts"
import { AssigneesRepo } from "./Repo.ts"

export const AssigneesHttp = apiGroup(HearthApi, "assignees", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const people = yield* AssigneesRepo
    const policy = yield* RepoPolicy

    /** The candidates whose access to the current repository is at least `mode`. */
    const withAccess = (mode: AccessMode, withWatchers: boolean) =>
      Effect.gen(function* () {
        const { repo, owner } = yield* CurrentRepo
        const me = yield* signedInCaller
        const candidates = yield* people.candidates({ id: repo.id, ownerId: owner.id }, withWatchers)
        const kept = yield* Effect.filter(candidates, (user) =>
          Effect.map(policy.access({ user, scopes: undefined, method: "password" }, repo, owner), (access) =>
            atLeast(access.mode, mode)
          )
        )
        return { kept, me }
      })

    return handlers
      .handle("listAssignees", () =>
        Effect.map(withAccess("write", false), ({ kept, me }) => kept.map((u) => toApiUser(settings, u, me)))
      )
      .handle("listReviewers", () =>
        Effect.gen(function* () {
          const { repo } = yield* CurrentRepo
          const { kept, me } = yield* withAccess("read", !repo.isPrivate)
          return kept.filter((u) => u.id !== me.user.id).map((u) => toApiUser(settings, u, me))
        })
      )
  })
)
