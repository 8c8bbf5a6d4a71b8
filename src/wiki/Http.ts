// Handlers of the wiki group: the repository is opened by the assignment (404 when the wiki unit is
// off or the caller may not read it; 403/423 for writes), the page name is read raw from the URL.
import { Effect } from "effect"
import { HttpServerRequest } from "effect/http"
import { HearthApi } from "../Api.ts"
import { Settings } from "../config/Settings.ts"
import { signedInCaller } from "../http/Caller.ts"
import { apiGroup } from "../http/Group.ts"
import { setListHeaders } from "../http/Pagination.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { webPathFromRequest } from "./Paths.ts"
import { REVISIONS_PER_PAGE, WikiService } from "./Service.ts"

/** Go's `FormInt`: a decimal integer, anything else 0. */
const formInt = (value: string | undefined) => (value !== undefined && /^[+-]?\d{1,9}$/.test(value) ? Number(value) : 0)

/**
 * The web path of the page named after `/wiki/page/` or `/wiki/revisions/` in the request's path,
 * still escaped as sent (Forgejo's `WebPathFromRequest(ctx.PathParamRaw("pageName"))`).
 */
const requestedPage = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const path = request.url.split("?")[0] ?? ""
  const at = /\/repos\/[^/]+\/[^/]+\/wiki\/(?:page|revisions)\//.exec(path)
  return webPathFromRequest(at === null ? "" : path.slice(at.index + at[0].length))
})

export const WikiHttp = apiGroup(HearthApi, "wiki", (handlers) =>
  Effect.gen(function* () {
    const wiki = yield* WikiService
    const settings = yield* Settings

    return handlers
      .handle("createWikiPage", ({ payload }) =>
        Effect.gen(function* () {
          const doer = yield* signedInCaller
          return yield* wiki.create(yield* CurrentRepo, doer, payload)
        })
      )
      .handle("getWikiPage", () =>
        Effect.gen(function* () {
          return yield* wiki.page(yield* CurrentRepo, yield* requestedPage)
        })
      )
      .handle("editWikiPage", ({ payload }) =>
        Effect.gen(function* () {
          const doer = yield* signedInCaller
          return yield* wiki.edit(yield* CurrentRepo, doer, yield* requestedPage, payload)
        })
      )
      .handle("deleteWikiPage", () =>
        Effect.gen(function* () {
          const doer = yield* signedInCaller
          yield* wiki.remove(yield* CurrentRepo, doer, yield* requestedPage)
        })
      )
      .handle("listWikiPages", ({ query }) =>
        Effect.gen(function* () {
          // Forgejo's own paging here: `limit` of 1 or less is the default, and not capped.
          const page = Math.max(1, formInt(query.page))
          const given = formInt(query.limit)
          const limit = given <= 1 ? settings.api.DEFAULT_PAGING_NUM : given
          const listed = yield* wiki.pages(yield* CurrentRepo, page, limit)
          yield* setListHeaders({ page, limit, offset: (page - 1) * limit }, listed.total)
          return listed.pages
        })
      )
      .handle("listWikiPageRevisions", ({ query }) =>
        Effect.gen(function* () {
          const page = Math.max(1, formInt(query.page))
          const listed = yield* wiki.revisions(yield* CurrentRepo, yield* requestedPage, page)
          yield* setListHeaders(
            { page, limit: REVISIONS_PER_PAGE, offset: (page - 1) * REVISIONS_PER_PAGE },
            listed.count
          )
          return { commits: listed.commits, count: listed.count }
        })
      )
  })
)
