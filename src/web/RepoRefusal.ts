// A repository page's write rule (Policy.ts `repoRefusal`, the API's rule for the same change) as
// a page: the 404 page for what the viewer may not see, 403 for a reader, 423 for an archived
// repository, 409 while it is being created. `what` says in words what only writers may do.
import type { HttpServerResponse } from "effect/http"
import type { RepoRule } from "../http/Access.ts"
import { repoRefusal } from "../repos/Policy.ts"
import type { RepoView } from "./RepoFrame.ts"
import type { Web } from "./Web.ts"

export const refusalPage = (
  web: Web,
  view: RepoView,
  rule: RepoRule,
  what: string
): HttpServerResponse.HttpServerResponse | undefined => {
  const refusal = repoRefusal(view.caller, view, rule)
  if (refusal === undefined) return undefined
  switch (refusal.kind) {
    case "hidden":
    case "unit-disabled":
      return web.notFound(view.ctx)
    case "role":
      return web.errorPage(
        view.ctx,
        403,
        "Forbidden",
        `Only the repository's writers may ${what}. Ask its owner for write access.`
      )
    case "archived":
      return web.errorPage(view.ctx, 423, "Archived", `The repository is archived: nobody may ${what} now.`)
    case "mirror":
      return web.errorPage(view.ctx, 403, "Forbidden", `The repository is a mirror: nobody may ${what} here.`)
    case "creating":
      return web.errorPage(view.ctx, 409, "Not yet", "The repository is still being created. Try again in a moment.")
    default:
      return web.errorPage(view.ctx, 403, "Forbidden", refusal.message)
  }
}
