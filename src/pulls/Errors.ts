// The refusal only pull requests answer with: 405 for a merge that is not allowed now (Forgejo's
// `CheckPullMergeable`: merged, work in progress, not mergeable, style not allowed). Rendered as
// every error is (`{message, url}`).
import { Schema } from "effect"

const body = { message: Schema.String, url: Schema.String }

export class MethodNotAllowed extends Schema.Error<MethodNotAllowed>("MethodNotAllowed")(body, {
  httpApiStatus: 405
}) {}

export const methodNotAllowed = (message: string) => new MethodNotAllowed({ message, url: "" })
