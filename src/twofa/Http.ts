import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { passwordCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { TwoFactor } from "./Service.ts"

export const TwoFactorHttp = apiGroup(HearthApi, "twofa", (handlers) =>
  Effect.gen(function* () {
    const twoFactor = yield* TwoFactor
    return handlers
      .handle("enrollTwoFactor", () =>
        Effect.flatMap(passwordCaller, (me) => twoFactor.enroll(me.user.id, me.user.name))
      )
      .handle("verifyTwoFactor", ({ payload }) =>
        Effect.flatMap(passwordCaller, (me) => twoFactor.confirm(me.user.id, payload.passcode.trim()))
      )
      .handle("disableTwoFactor", () =>
        Effect.gen(function* () {
          // With the factor enabled, the password sign-in of this very request has already
          // required and spent a valid passcode from X-Forgejo-OTP / X-Gitea-OTP.
          const me = yield* passwordCaller
          if (!(yield* twoFactor.disable(me.user.id))) return yield* Errors.notFound()
        })
      )
  })
)
