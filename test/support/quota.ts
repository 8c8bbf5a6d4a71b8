// Stored quota rules that allow nothing, for the tests of a forge whose [quota] ENABLED is false.
import { Effect } from "effect"
import { QuotaRepo } from "../../src/quota/Repo.ts"
import type { Hearth } from "./hearth.ts"

/** Puts the accounts in a group "jail" whose one rule allows 0 bytes of anything. */
export const jail = (hearth: Hearth, userIds: ReadonlyArray<number>) =>
  hearth.run(
    Effect.gen(function* () {
      const quota = yield* QuotaRepo
      yield* quota.insertRule({ name: "none", limit: 0, subjects: ["size:all"] })
      yield* quota.insertGroup("jail")
      yield* quota.addRule("jail", "none")
      for (const id of userIds) yield* quota.addUser("jail", id)
    })
  )
