// Hearth's API errors: the generic refusals every slice may use (bad request, forbidden, not found…).
// They are one family with each slice's own domain errors: any error class whose schema carries an
// `httpApiStatus` annotation is rendered by `ErrorResponses` (Middleware.ts) as Forgejo's
// `{message, url}` (url = ROOT_URL + "api/swagger"; further fields of the class join the body),
// 404 with an empty body.
import { Schema, SchemaAST } from "effect"
import { HttpApiSchema } from "effect/http-api"

const body = { message: Schema.String, url: Schema.String }

const make =
  <Self>() =>
  <Tag extends string>(tag: Tag, status: number) =>
    Schema.Error<Self>(tag)(body, { httpApiStatus: status })

export class BadRequest extends make<BadRequest>()("BadRequest", 400) {}
export class Unauthorized extends make<Unauthorized>()("Unauthorized", 401) {}
export class Forbidden extends make<Forbidden>()("Forbidden", 403) {}
export class Conflict extends make<Conflict>()("Conflict", 409) {}
/** 412: the request is sound but the item's state forbids it (an issue with open dependencies). */
export class PreconditionFailed extends make<PreconditionFailed>()("PreconditionFailed", 412) {}
/** 413; a refusal by quota also names the account charged (`user_id`, `username`), as Forgejo's body does. */
export class PayloadTooLarge extends Schema.Error<PayloadTooLarge>("PayloadTooLarge")(
  { ...body, user_id: Schema.optionalKey(Schema.Number), username: Schema.optionalKey(Schema.String) },
  { httpApiStatus: 413 }
) {}
/** 422; a refusal of repository topics also carries Forgejo's `invalidTopics` (`APIInvalidTopicsError`). */
export class ValidationFailed extends Schema.Error<ValidationFailed>("ValidationFailed")(
  {
    ...body,
    invalidTopics: Schema.optionalKey(Schema.NullOr(Schema.Union([Schema.String, Schema.Array(Schema.String)])))
  },
  { httpApiStatus: 422 }
) {}
export class Locked extends make<Locked>()("Locked", 423) {}
export class TooManyRequests extends Schema.Error<TooManyRequests>("TooManyRequests")(
  { ...body, retryAfterSeconds: Schema.Number },
  { httpApiStatus: 429 }
) {}
export class InternalError extends make<InternalError>()("InternalError", 500) {}
/** Another server (a federation peer) that a request depended on failed or did not answer. */
export class BadGateway extends make<BadGateway>()("BadGateway", 502) {}

export class NotFound extends Schema.Error<NotFound>("NotFound")({}, { httpApiStatus: 404 }) {}
export const NotFoundEmpty = NotFound.pipe(HttpApiSchema.asNoContent({ decode: () => new NotFound() }))

/** The errors every endpoint may answer with (declared once, on the API-wide middleware). */
export const commonErrors = [
  BadRequest,
  Unauthorized,
  Forbidden,
  NotFoundEmpty,
  Conflict,
  PreconditionFailed,
  PayloadTooLarge,
  ValidationFailed,
  Locked,
  TooManyRequests,
  InternalError,
  BadGateway
] as const

export type ApiError =
  | BadRequest
  | Unauthorized
  | Forbidden
  | NotFound
  | Conflict
  | PreconditionFailed
  | PayloadTooLarge
  | ValidationFailed
  | Locked
  | TooManyRequests
  | InternalError
  | BadGateway

// Short constructors: `url` is filled in when the response is rendered.
export const badRequest = (message: string) => new BadRequest({ message, url: "" })
export const unauthorized = (message: string) => new Unauthorized({ message, url: "" })
export const forbidden = (message: string) => new Forbidden({ message, url: "" })
export const notFound = () => new NotFound()
export const conflict = (message: string) => new Conflict({ message, url: "" })
export const preconditionFailed = (message: string) => new PreconditionFailed({ message, url: "" })
export const payloadTooLarge = (message: string) => new PayloadTooLarge({ message, url: "" })
/** The account `owner` is over its quota for what the request would store (Forgejo's `EnforceQuotaAPI`, services/context/quota.go). */
export const quotaExceeded = (owner: { readonly id: number; readonly name: string }) =>
  new PayloadTooLarge({ message: "quota exceeded", url: "", user_id: owner.id, username: owner.name })
export const validationFailed = (message: string) => new ValidationFailed({ message, url: "" })
/** Forgejo's `APIInvalidTopicsError`: the refused topic names (one, several, or null for too many). */
export const invalidTopics = (message: string, invalid: string | ReadonlyArray<string> | null) =>
  new ValidationFailed({ message, url: "", invalidTopics: invalid })
export const locked = (message: string) => new Locked({ message, url: "" })
export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  new TooManyRequests({ message, url: "", retryAfterSeconds })
export const internalError = (message: string) => new InternalError({ message, url: "" })
export const badGateway = (message: string) => new BadGateway({ message, url: "" })

/**
 * Why something was refused, in words that do not depend on the protocol answering it: the git
 * entity's `WriteRejected`, smart HTTP's `Denied` and federation's `RemoteError` carry one. This is
 * the one mapping from a reason to an HTTP status (`refusal` gives the API error for it).
 */
export const REASON_STATUS = {
  "bad-request": 400,
  unauthorized: 401,
  forbidden: 403,
  "not-found": 404,
  conflict: 409,
  invalid: 422,
  locked: 423,
  failed: 500,
  "remote-failed": 502
} as const
export type Reason = keyof typeof REASON_STATUS

interface RefusalOf {
  readonly "bad-request": BadRequest
  readonly unauthorized: Unauthorized
  readonly forbidden: Forbidden
  readonly "not-found": NotFound
  readonly conflict: Conflict
  readonly invalid: ValidationFailed
  readonly locked: Locked
  readonly failed: InternalError
  readonly "remote-failed": BadGateway
}

/** The API error answering a refusal for `reason` (404 drops the message: its body is empty). */
export const refusal = <R extends Reason>(reason: R, message: string): RefusalOf[R] => {
  const make: { readonly [K in Reason]: (message: string) => RefusalOf[K] } = {
    "bad-request": badRequest,
    unauthorized,
    forbidden,
    "not-found": notFound,
    conflict,
    invalid: validationFailed,
    locked,
    failed: internalError,
    "remote-failed": badGateway
  }
  return make[reason](message)
}

/**
 * The HTTP status an error declares: the `httpApiStatus` annotation of its class's schema, as
 * HttpApi reads it for declared errors (`Schema.Error`/`Schema.TaggedError` classes, e.g.
 * `class RepoArchived extends Schema.TaggedError<RepoArchived>()("RepoArchived", { message: Schema.String },
 * { httpApiStatus: 423 }) {}`). `undefined` for anything else: a defect, not a refusal.
 */
export const statusOf = (error: unknown): number | undefined => {
  if (typeof error !== "object" || error === null) return undefined
  const ast = (error.constructor as { readonly ast?: SchemaAST.AST } | undefined)?.ast
  if (ast === undefined || !SchemaAST.isAST(ast)) return undefined
  const status = SchemaAST.resolve(ast)?.httpApiStatus
  return typeof status === "number" ? status : undefined
}

const OwnerName = Schema.Struct({ owner: Schema.String, name: Schema.String })

/**
 * The repository named in the URL now lives under another name (renamed or transferred): a domain
 * error of the repository assignment (src/repos/Assignment.ts), answered by ErrorResponses with a
 * 307 to the same URL under the new `owner/name`, as Forgejo's `repoAssignment` redirects. Git
 * over HTTP and SSH answer it their own way (GitHttp.ts, ssh/Server.ts).
 */
export class RepositoryMoved extends Schema.Error<RepositoryMoved>("RepositoryMoved")(
  { from: OwnerName, to: OwnerName },
  { httpApiStatus: 307 }
) {
  /** `path` (which names the old `owner/name`) with the new one in its place. */
  relocate(path: string): string {
    const segment = (owner: string, name: string) => `/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`
    const old = segment(this.from.owner, this.from.name)
    const at = path.toLowerCase().indexOf(old.toLowerCase())
    if (at < 0) return path
    return path.slice(0, at) + segment(this.to.owner, this.to.name) + path.slice(at + old.length)
  }
}
