// E-mail addresses over HTTP: the caller's own only.
import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { signedInCaller } from "../http/Caller.ts"
import { apiGroup } from "../http/Group.ts"
import { EmailsService } from "./Service.ts"

export const EmailsHttp = apiGroup(HearthApi, "emails", (handlers) =>
  Effect.gen(function* () {
    const emails = yield* EmailsService
    return handlers
      .handle("listEmails", () => Effect.flatMap(signedInCaller, (me) => emails.list(me.user)))
      .handle("addEmails", ({ payload }) =>
        Effect.flatMap(signedInCaller, (me) => emails.add(me.user, me.user.isAdmin, payload.emails ?? []))
      )
      .handle("deleteEmails", ({ payload }) =>
        Effect.flatMap(signedInCaller, (me) => emails.remove(me.user, payload.emails ?? []))
      )
      .handle("activateEmail", ({ payload }) =>
        Effect.flatMap(signedInCaller, (me) => emails.activate(me.user, payload.token))
      )
  })
)
