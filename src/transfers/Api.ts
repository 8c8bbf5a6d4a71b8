// Repository transfers: start one (at once, or pending until the recipient accepts), accept, reject.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Repository } from "../repos/Schema.ts"

const ownerRepo = { owner: Schema.String, repo: Schema.String }
const signedIn = { signedIn: true, scopes: ["repository"] } as const
/** Forgejo's `reqOwner`; not while the repository is being created (TestRepositoryReadyForTransfer). */
const owner = { ...signedIn, repo: { role: "owner", changes: "settings" } } as const
/** The recipient may not see a private repository yet: the service applies the rule (Assignment.ts). */
const recipient = { ...signedIn, repo: { role: "read", checkedBy: "route" } } as const

export const TransferRepoOption = Schema.Struct({
  new_owner: Schema.String,
  team_ids: Schema.optional(Schema.NullOr(Schema.Array(Schema.Number)))
}).annotate({ identifier: "TransferRepoOption" })

export class TransfersApi extends HttpApiGroup.make("transfers").add(
  // 202 when it happened at once; 201 (with `repo_transfer`) when it waits for the recipient.
  HttpApiEndpoint.post("transferRepo", "/repos/:owner/:repo/transfer", {
    params: ownerRepo,
    payload: TransferRepoOption,
    success: Repository.pipe(HttpApiSchema.status(202))
  })
    .annotate(OpenApi.Identifier, "repoTransfer")
    .annotate(Access, owner),
  HttpApiEndpoint.post("acceptTransfer", "/repos/:owner/:repo/transfer/accept", {
    params: ownerRepo,
    success: Repository.pipe(HttpApiSchema.status(202))
  })
    .annotate(OpenApi.Identifier, "acceptRepoTransfer")
    .annotate(Access, recipient),
  HttpApiEndpoint.post("rejectTransfer", "/repos/:owner/:repo/transfer/reject", {
    params: ownerRepo,
    success: Repository
  })
    .annotate(OpenApi.Identifier, "rejectRepoTransfer")
    .annotate(Access, recipient)
) {}
