// Paging as Forgejo: `page` (1-based) and `limit` (default [api] DEFAULT_PAGING_NUM, at most
// [api] MAX_RESPONSE_ITEMS); lists answer `X-Total-Count` and, where Forgejo does, `Link`.
import { Effect, Schema } from "effect"
import { HttpServerRequest } from "effect/http"
import { Settings } from "../config/Settings.ts"
import * as ResponseHeaders from "./ResponseHeaders.ts"

/** Query fields of a paged list. Non-numeric values read as 0, as Forgejo does. */
export const PageQuery = {
  page: Schema.optional(Schema.String),
  limit: Schema.optional(Schema.String)
}

export interface Page {
  readonly page: number
  readonly limit: number
  readonly offset: number
}

/**
 * A form integer as Forgejo's `FormInt` reads it (Go's `strconv.Atoi`): an optionally signed run of
 * decimal digits, anything else 0. Go saturates a value beyond int64 at its maximum; here it stays
 * a (large) number, which `resolvePage` bounds.
 */
const toInt = (value: string | undefined): number =>
  value !== undefined && /^[+-]?\d+$/.test(value) ? Number(value) : 0

/**
 * The largest row offset a page may start at: what an int holds (git's `--skip` is one). A page
 * beyond it is clamped, not refused: Forgejo's `FormInt` saturates a huge `page` too (and then
 * overflows the offset), and a page past the end of a list is simply empty.
 */
export const MAX_OFFSET = 2 ** 31 - 1

/** Resolves `page`/`limit`; `max` caps the size (defaults to MAX_RESPONSE_ITEMS). */
export const resolvePage = (
  query: { readonly page?: string | undefined; readonly limit?: string | undefined },
  max?: number
) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const cap = max ?? settings.api.MAX_RESPONSE_ITEMS
    const requested = toInt(query.limit)
    const limit = Math.min(requested <= 0 ? settings.api.DEFAULT_PAGING_NUM : requested, cap)
    const page = Math.min(Math.max(1, toInt(query.page)), Math.floor(MAX_OFFSET / limit) + 1)
    return { page, limit, offset: (page - 1) * limit } satisfies Page
  })

/**
 * For the lists Forgejo answers whole when `page` is absent or not a positive number (e.g.
 * `GetUserFollowers`, `GetForks`): the resolved page, and the window to read — `undefined` for
 * every row.
 */
export const resolveWindow = (query: { readonly page?: string | undefined; readonly limit?: string | undefined }) =>
  Effect.map(resolvePage(query), (page) => ({ page, window: toInt(query.page) > 0 ? page : undefined }))

/**
 * Forgejo's `Link` header: next, last, first, prev (comma-joined), each the request URL under
 * ROOT_URL with `page` replaced; query keys sorted. No links when there is nothing to list.
 */
export const linkHeader = (rootUrl: string, requestUrl: string, page: Page, total: number): string | undefined => {
  if (total <= 0) return undefined
  const url = new URL(requestUrl, "http://placeholder")
  const last = Math.max(1, Math.ceil(total / page.limit))
  const current = Math.min(page.page, last)
  const at = (n: number) => {
    const params = new URLSearchParams(url.searchParams)
    params.set("page", String(n))
    params.sort()
    return `<${rootUrl}${url.pathname.replace(/^\//, "")}?${params.toString()}>`
  }
  const links: Array<string> = []
  if (total > page.page * page.limit) links.push(`${at(current + 1)}; rel="next"`)
  if (current < last) links.push(`${at(last)}; rel="last"`)
  if (current > 1) links.push(`${at(1)}; rel="first"`)
  if (current > 1) links.push(`${at(current - 1)}; rel="prev"`)
  return links.length === 0 ? undefined : links.join(",")
}

/**
 * Sets `X-Total-Count` (and `Link` when `withLink`) on the response of the current request.
 * `withPageCount` adds the headers Forgejo's commit list keeps "for backwards compatibility"
 * (`GetAllCommits`): `X-Page`, `X-PerPage`, `X-Total`, `X-PageCount` (pages of `limit` rows) and
 * `X-HasMore` (`true` while the page is before the last one).
 */
export const setListHeaders = (
  page: Page,
  total: number,
  options: { readonly withLink?: boolean; readonly withPageCount?: boolean } = {}
) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const request = yield* HttpServerRequest.HttpServerRequest
    const link = options.withLink === true ? linkHeader(settings.server.ROOT_URL, request.url, page, total) : undefined
    const exposed = ["X-Total-Count", ...(link === undefined ? [] : ["Link"])]
    const pageCount = Math.ceil(total / page.limit)
    const paging =
      options.withPageCount === true
        ? {
            "x-page": String(page.page),
            "x-perpage": String(page.limit),
            "x-total": String(total),
            "x-pagecount": String(pageCount),
            "x-hasmore": String(page.page < pageCount)
          }
        : undefined
    if (paging !== undefined) exposed.push("X-Page", "X-PerPage", "X-Total", "X-PageCount", "X-HasMore")
    yield* ResponseHeaders.append({
      "x-total-count": String(total),
      ...(link === undefined ? {} : { link }),
      ...paging,
      "access-control-expose-headers": exposed.join(", ")
    })
  })
