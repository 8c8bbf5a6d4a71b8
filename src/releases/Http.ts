// Handlers of the release routes (Api.ts) and the Release object (Forgejo's
// services/convert/release.go `ToAPIRelease`).
import { Effect } from "effect"
import { HttpServerRequest } from "effect/http"
import { HearthApi } from "../Api.ts"
import { Settings } from "../config/Settings.ts"
import { signedInCaller } from "../http/Caller.ts"
import { apiGroup } from "../http/Group.ts"
import { respond } from "../http/Json.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { Attachment } from "../issues/AttachmentsSchema.ts"
import { QuotaService } from "../quota/Service.ts"
import { CurrentRepo, type OpenedRepository } from "../repos/Assignment.ts"
import { Release } from "./Api.ts"
import { ReleaseAssets } from "./Assets.ts"
import { makeReleasePresenter } from "./Present.ts"
import type { ReleaseRow } from "./Repo.ts"
import { ReleasesService } from "./Service.ts"

/** Go's `strconv.ParseBool` as Forgejo's `FormOptionalBool` uses it: anything else is "not given". */
const formOptionalBool = (value: string | undefined): boolean | undefined => {
  if (value === undefined) return undefined
  if (["1", "t", "T", "TRUE", "true", "True"].includes(value)) return true
  if (["0", "f", "F", "FALSE", "false", "False"].includes(value)) return false
  return undefined
}

/** A tag with `/` that reached a `/{tag}/{rest}/*` route, put back together. */
const joinTag = (params: { readonly tag: string; readonly rest: string; readonly "*"?: string | undefined }) =>
  [params.tag, params.rest, params["*"]].filter((part) => part !== undefined && part !== "").join("/")

export const ReleasesHttp = apiGroup(HearthApi, "releases", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const service = yield* ReleasesService
    const quota = yield* QuotaService
    const assets = yield* ReleaseAssets

    const presenter = yield* makeReleasePresenter(settings)
    /** Forgejo's `ToAPIRelease`, for the viewer of `opened`. */
    const present = (opened: OpenedRepository, rows: ReadonlyArray<ReleaseRow>) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        return yield* presenter({ ownerName: opened.owner.name, repoName: opened.repo.name }, rows, opened.caller, {
          githubFormat: (request.headers["accept"] ?? "").includes("application/vnd.github+json")
        })
      })
    const presentOne = (opened: OpenedRepository, row: ReleaseRow) =>
      Effect.map(present(opened, [row]), (converted) => converted[0]!)

    /** Create and edit may add a tag: charged to the owner's quota first (Forgejo: `size:repos:all`). */
    const openForGrowth = Effect.gen(function* () {
      const caller = yield* signedInCaller
      const opened = yield* CurrentRepo
      yield* quota.enforce(opened.owner, "size:repos:all")
      return { caller, opened }
    })

    const byTag = (tag: string) =>
      Effect.gen(function* () {
        const opened = yield* CurrentRepo
        return yield* presentOne(opened, yield* service.byTag(opened, tag))
      })
    const removeByTag = (tag: string) =>
      Effect.gen(function* () {
        const caller = yield* signedInCaller
        const opened = yield* CurrentRepo
        yield* service.remove(opened, caller, yield* service.byTag(opened, tag))
      })

    return handlers
      .handle("listReleases", ({ query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const page = yield* resolvePage(query)
          const listed = yield* service.list(
            opened,
            {
              draft: formOptionalBool(query.draft),
              prerelease: formOptionalBool(query["pre-release"]),
              q: query.q
            },
            page
          )
          yield* setListHeaders(page, listed.total, { withLink: true })
          return yield* present(opened, listed.rows)
        })
      )
      .handle("createRelease", ({ payload }) =>
        Effect.gen(function* () {
          const { caller, opened } = yield* openForGrowth
          const saved = yield* service.create(opened, caller, payload)
          return respond(Release, yield* presentOne(opened, saved.release), 201)
        })
      )
      .handle("getLatestRelease", () =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return yield* presentOne(opened, yield* service.latest(opened))
        })
      )
      .handle("getReleaseByTag", ({ params }) => byTag(params.tag))
      .handle("getReleaseByTagDeep", ({ params }) => byTag(joinTag(params)))
      .handle("deleteReleaseByTag", ({ params }) => removeByTag(params.tag))
      .handle("deleteReleaseByTagDeep", ({ params }) => removeByTag(joinTag(params)))
      .handle("getRelease", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return yield* presentOne(opened, yield* service.get(opened, params.id))
        })
      )
      .handle("editRelease", ({ params, payload }) =>
        Effect.gen(function* () {
          const { caller, opened } = yield* openForGrowth
          const saved = yield* service.edit(opened, caller, params.id, payload)
          return yield* presentOne(opened, saved.release)
        })
      )
      .handle("deleteRelease", ({ params }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const opened = yield* CurrentRepo
          yield* service.remove(opened, caller, yield* service.get(opened, params.id))
        })
      )
      .handle("listReleaseAssets", ({ params }) =>
        Effect.flatMap(CurrentRepo, (opened) => assets.list(opened, params.id))
      )
      .handle("createReleaseAsset", ({ params, query }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const opened = yield* CurrentRepo
          const request = yield* HttpServerRequest.HttpServerRequest
          return respond(Attachment, yield* assets.create(opened, caller, params.id, request, query), 201)
        })
      )
      .handle("getReleaseAsset", ({ params }) =>
        Effect.flatMap(CurrentRepo, (opened) => assets.get(opened, params.id, params.attachment_id))
      )
      .handle("editReleaseAsset", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(Attachment, yield* assets.edit(opened, params.id, params.attachment_id, payload), 201)
        })
      )
      .handle("deleteReleaseAsset", ({ params }) =>
        Effect.flatMap(CurrentRepo, (opened) => assets.remove(opened, params.id, params.attachment_id))
      )
  })
)
