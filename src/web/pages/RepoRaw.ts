// A file's bytes, `/{owner}/{repo}/raw/{branch|tag|commit}/{name}/{path}` (Forgejo's
// `routers/web/repo/download.go` `SingleDownload`, `routers/common/serve.go`): the content type
// from the bytes (images by their signature, UTF-8 text as text/plain, anything else as
// application/octet-stream, downloaded), SVG as an image, always with `X-Content-Type-Options:
// nosniff` and Forgejo's `Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline';
// sandbox`, so that a file served from the forge's origin never runs script there.
import { Effect, Option } from "effect"
import { HttpServerResponse } from "effect/http"
import { contentTypeOf } from "../../git/Readers.ts"
import type { RefKind } from "../RepoData.ts"
import type { RepoFrame, RepoView } from "../RepoFrame.ts"
import type { Web } from "../Web.ts"

const KINDS: ReadonlyArray<RefKind> = ["branch", "tag", "commit"]

/** Forgejo's header for served files (`httplib.ServeSetHeaders`, SVG and the rest alike here). */
export const RAW_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"

/** The content type a raw file is served with. */
export const rawContentType = (name: string, bytes: Uint8Array) => {
  const sniffed = contentTypeOf(bytes)
  // An SVG is text to the signature check; served as an image under the sandbox, as Forgejo does.
  if (
    /\.svg$/i.test(name) &&
    sniffed.startsWith("text/plain") &&
    /<svg[\s>]/i.test(new TextDecoder().decode(bytes.subarray(0, 4096)))
  )
    return "image/svg+xml"
  return sniffed
}

/** A file's bytes as served from the forge's origin (also the wiki's files, RepoWiki.ts). */
export const rawFileResponse = (name: string, bytes: Uint8Array, cacheControl: string) => {
  const contentType = rawContentType(name, bytes)
  const disposition = contentType === "application/octet-stream" ? "attachment" : "inline"
  return HttpServerResponse.uint8Array(bytes, {
    contentType,
    headers: {
      "content-security-policy": RAW_CSP,
      "x-content-type-options": "nosniff",
      "content-disposition": `${disposition}; filename*=UTF-8''${encodeURIComponent(name)}`,
      "cache-control": cacheControl,
      "x-service-object-type": "blob"
    }
  })
}

export const RepoRawPages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const { contents, data } = frame

    const serve = (kind: RefKind) => (view: RepoView) =>
      Effect.gen(function* () {
        const ref = yield* data.resolve(view.handle, kind, view.rest.slice(2))
        if (Option.isNone(ref) || ref.value.path === "") return web.notFound(view.ctx)
        const entry = yield* contents.entryAt(view.handle, ref.value.tree, ref.value.path)
        if (Option.isNone(entry) || entry.value.type !== "blob") return web.notFound(view.ctx)
        const { bytes } = yield* contents.blob(view.handle, entry.value.sha)
        const name = ref.value.path.slice(ref.value.path.lastIndexOf("/") + 1)
        // A commit's file never changes; a branch's or tag's may.
        return rawFileResponse(
          name,
          bytes,
          kind === "commit" ? "private, max-age=86400, immutable" : "private, max-age=300"
        )
      })

    return KINDS.map((kind) => frame.route("GET", `/:owner/:repo/raw/${kind}/*`, {}, serve(kind)))
  })
