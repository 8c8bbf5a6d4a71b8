// Avatar routes: who may change which avatar (Forgejo's `reqOrgOwnership` for organizations, the
// repository assignment's admin rule for repositories), and the base64 body.
import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { signedInCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { OrgPolicy } from "../orgs/Policy.ts"
import { OrgsService } from "../orgs/Service.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { AccountPolicy } from "../users/Policy.ts"
import { AvatarsService } from "./Service.ts"

/** Go's `base64.StdEncoding` (line breaks ignored, padding required); 400 otherwise, as Forgejo. */
const decodeImage = (image: string | undefined) => {
  const text = (image ?? "").replace(/[\r\n]/g, "")
  return text.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(text)
    ? Effect.succeed(new Uint8Array(Buffer.from(text, "base64")))
    : Effect.fail(Errors.badRequest("the image is not valid base64 (standard alphabet, with padding)"))
}

export const AvatarsHttp = apiGroup(HearthApi, "avatars", (handlers) =>
  Effect.gen(function* () {
    const avatars = yield* AvatarsService
    const orgs = yield* OrgsService
    const accounts = yield* AccountPolicy
    const policy = yield* OrgPolicy

    /** The organization of the path, once the caller is known to own it (404 when not visible). */
    const ownedOrg = (name: string) =>
      Effect.gen(function* () {
        const caller = yield* signedInCaller
        const org = yield* orgs.get(name)
        yield* accounts.ensureVisible(caller, org)
        yield* policy.ensureOwner(caller, org)
        return org
      })

    return handlers
      .handle("updateUserAvatar", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          yield* avatars.setAccount(caller.user, yield* decodeImage(payload.image))
        })
      )
      .handle("deleteUserAvatar", () => Effect.flatMap(signedInCaller, (caller) => avatars.removeAccount(caller.user)))
      .handle("updateOrgAvatar", ({ params, payload }) =>
        Effect.gen(function* () {
          const org = yield* ownedOrg(params.org)
          yield* avatars.setAccount(org, yield* decodeImage(payload.image))
        })
      )
      .handle("deleteOrgAvatar", ({ params }) => Effect.flatMap(ownedOrg(params.org), avatars.removeAccount))
      .handle("updateRepoAvatar", ({ payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          yield* avatars.setRepo(opened.repo, yield* decodeImage(payload.image))
        })
      )
      .handle("deleteRepoAvatar", () => Effect.flatMap(CurrentRepo, (opened) => avatars.removeRepo(opened.repo)))
  })
)
