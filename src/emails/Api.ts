// The signed-in user's e-mail addresses (Forgejo's /user/emails), plus Hearth's activation
// route: an added address is unverified until its owner sends the token mailed (or, without a
// mail server, logged) for it.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Id } from "../http/Json.ts"

export const Email = Schema.Struct({
  email: Schema.String,
  verified: Schema.Boolean,
  primary: Schema.Boolean,
  user_id: Id,
  username: Schema.String
}).annotate({ identifier: "Email" })
export type Email = typeof Email.Type

const Emails = Schema.Array(Email)
const EmailList = Schema.Struct({ emails: Schema.optional(Schema.Array(Schema.String)) })

const rule = { signedIn: true, scopes: ["user"] } as const

export class EmailsApi extends HttpApiGroup.make("emails").add(
  HttpApiEndpoint.get("listEmails", "/user/emails", { success: Emails })
    .annotate(OpenApi.Identifier, "userListEmails")
    .annotate(Access, rule),
  HttpApiEndpoint.post("addEmails", "/user/emails", {
    payload: EmailList.annotate({ identifier: "CreateEmailOption" }),
    success: Emails.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "userAddEmail")
    .annotate(Access, rule),
  HttpApiEndpoint.delete("deleteEmails", "/user/emails", {
    payload: EmailList.annotate({ identifier: "DeleteEmailOption" }),
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "userDeleteEmail")
    .annotate(Access, rule),
  HttpApiEndpoint.post("activateEmail", "/user/emails/activate", {
    payload: Schema.Struct({ token: Schema.String }).annotate({ identifier: "ActivateEmailOption" }),
    success: Email
  })
    .annotate(OpenApi.Identifier, "userActivateEmail")
    .annotate(Access, rule)
) {}
