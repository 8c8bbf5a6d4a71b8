// Serving avatars outside the API, at Forgejo's URLs: `/avatars/{hash}` (accounts),
// `/repo-avatars/{hash}` (repositories), and Hearth's `/avatars/identicon/{name}` for an account
// without one. A hash names its bytes for ever, so they are cached as immutable; `?size=` gives a
// smaller square (the stored one is at most AVATAR_SIZE pixels). Anyone may fetch them, as Forgejo.
import { Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { AvatarOwner } from "./Repo.ts"
import { AvatarsService } from "./Service.ts"
import { AVATAR_SIZE } from "./Url.ts"

const IMMUTABLE = "public, max-age=31536000, immutable"

/** `?size=` as a side in pixels, 1 to AVATAR_SIZE; the stored size without (or for nonsense). */
const sizeOf = (request: HttpServerRequest.HttpServerRequest) => {
  const raw = new URL(request.url, "http://x").searchParams.get("size")
  const size = raw !== null && /^\d{1,4}$/.test(raw) ? Number(raw) : AVATAR_SIZE
  return Math.min(Math.max(size, 1), AVATAR_SIZE)
}

const png = (body: Uint8Array, cacheControl: string) =>
  HttpServerResponse.uint8Array(body, {
    contentType: "image/png",
    headers: { "cache-control": cacheControl, "x-content-type-options": "nosniff" }
  })

export const AvatarRoutes = Layer.unwrap(
  Effect.gen(function* () {
    const avatars = yield* AvatarsService
    const stored = (owner: AvatarOwner) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const params = yield* HttpRouter.params
        const found = yield* avatars.read(owner, params.hash ?? "", sizeOf(request))
        if (Option.isNone(found)) return HttpServerResponse.empty({ status: 404 })
        return png(found.value, IMMUTABLE)
      })
    const identicon = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const params = yield* HttpRouter.params
      const name = params.name ?? ""
      // A name is at most 40 characters (src/lib/Names.ts); anything longer names no one.
      if (name === "" || name.length > 255) return HttpServerResponse.empty({ status: 404 })
      // The picture changes only with the name, but an uploaded avatar replaces this URL: cached a day.
      return png(yield* avatars.identicon(name, sizeOf(request)), "public, max-age=86400")
    })
    return Layer.mergeAll(
      HttpRouter.add("GET", "/avatars/identicon/:name", identicon),
      HttpRouter.add("GET", "/avatars/:hash", stored("user")),
      HttpRouter.add("GET", "/repo-avatars/:hash", stored("repo"))
    )
  })
)
