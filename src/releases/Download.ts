// Downloading release assets outside the API: `GET /{owner}/{repo}/releases/download/{tag}/{name}`
// (Forgejo's web route `repo.RedirectDownload`), and the release half of `/attachments/{uuid}`
// (src/issues/AttachmentsHttp.ts). An uploaded asset is streamed as any stored file
// (src/storage/Serve.ts); an external one redirects to its URL (Forgejo's `ServeAttachment`).
import { Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { makeViewerOf } from "../auth/Viewer.ts"
import { serveStored } from "../storage/Serve.ts"
import { BlobStorage } from "../storage/Service.ts"
import { type Download, ReleaseAssets } from "./Assets.ts"

/** The response for a found asset. */
export const serveDownload = (request: HttpServerRequest.HttpServerRequest, download: Download) =>
  download.kind === "external"
    ? Effect.succeed(HttpServerResponse.redirect(download.url, { status: 302 }))
    : serveStored(request, download.asset)

export const ReleaseDownloadRoutes = Layer.unwrap(
  Effect.gen(function* () {
    const assets = yield* ReleaseAssets
    const storage = yield* BlobStorage
    const viewerOf = yield* makeViewerOf
    const handler = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const params = yield* HttpRouter.params
      const viewer = yield* viewerOf(request)
      // What follows `/releases/download/`: the name is its last segment, the tag all before it
      // (a tag may hold `/`: release/v1.0).
      const path = `${params.tag ?? ""}/${params["*"] ?? ""}`
      const cut = path.lastIndexOf("/")
      const found = yield* Effect.option(
        assets.downloadByName(viewer, params.owner ?? "", params.repo ?? "", path.slice(0, cut), path.slice(cut + 1))
      )
      if (Option.isNone(found)) return HttpServerResponse.empty({ status: 404 })
      return yield* serveDownload(request, found.value)
    }).pipe(Effect.provideService(BlobStorage, storage))
    return HttpRouter.add("GET", "/:owner/:repo/releases/download/:tag/*", handler)
  })
)
