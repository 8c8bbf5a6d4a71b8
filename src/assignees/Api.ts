// Who may be assigned to a repository's issues and pull requests, and who may be asked to review
// (Forgejo's routers/api/v1/repo/collaborators.go GetAssignees and GetReviewers): signed-in readers.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { User } from "../users/Schema.ts"

const reader = { signedIn: true, scopes: ["repository"], repo: { role: "read" } } as const
const ownerRepo = { owner: Schema.String, repo: Schema.String }

export class AssigneesApi extends HttpApiGroup.make("assignees").add(
  HttpApiEndpoint.get("listAssignees", "/repos/:owner/:repo/assignees", {
    params: ownerRepo,
    success: Schema.Array(User)
  })
    .annotate(OpenApi.Identifier, "repoGetAssignees")
    .annotate(Access, reader),
  HttpApiEndpoint.get("listReviewers", "/repos/:owner/:repo/reviewers", {
    params: ownerRepo,
    success: Schema.Array(User)
  })
    .annotate(OpenApi.Identifier, "repoGetReviewers")
    .annotate(Access, reader)
) {}
