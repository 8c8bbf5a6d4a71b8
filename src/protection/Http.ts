import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { apiGroup } from "../http/Group.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { ProtectionService } from "./Service.ts"

export const ProtectionHttp = apiGroup(HearthApi, "protection", (handlers) =>
  Effect.gen(function* () {
    const protection = yield* ProtectionService
    // The assignment opened the repository for a repository admin (and refused archived ones for changes).
    const at = CurrentRepo
    return handlers
      .handle("listBranchProtections", () => Effect.flatMap(at, (r) => protection.listBranchRules(r)))
      .handle("createBranchProtection", ({ payload }) =>
        Effect.flatMap(at, (r) => protection.createBranchRule(r, payload))
      )
      .handle("updateBranchProtectionPriorities", ({ payload }) =>
        Effect.flatMap(at, (r) => protection.setPriorities(r, payload.ids))
      )
      .handle("getBranchProtection", ({ params }) =>
        Effect.flatMap(at, (r) => protection.getBranchRule(r, params.name))
      )
      .handle("editBranchProtection", ({ params, payload }) =>
        Effect.flatMap(at, (r) => protection.editBranchRule(r, params.name, payload))
      )
      .handle("deleteBranchProtection", ({ params }) =>
        Effect.flatMap(at, (r) => protection.deleteBranchRule(r, params.name))
      )
      .handle("listTagProtections", () => Effect.flatMap(at, (r) => protection.listTagRules(r)))
      .handle("createTagProtection", ({ payload }) => Effect.flatMap(at, (r) => protection.createTagRule(r, payload)))
      .handle("getTagProtection", ({ params }) => Effect.flatMap(at, (r) => protection.getTagRule(r, params.id)))
      .handle("editTagProtection", ({ params, payload }) =>
        Effect.flatMap(at, (r) => protection.editTagRule(r, params.id, payload))
      )
      .handle("deleteTagProtection", ({ params }) => Effect.flatMap(at, (r) => protection.deleteTagRule(r, params.id)))
  })
)
