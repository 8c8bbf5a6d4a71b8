// The generic registry (Forgejo's routers/api/packages/generic/generic.go): any file, under
// `/api/packages/{owner}/generic/{name}/{version}/{file}` — CI artefacts uploaded and fetched with
// curl. PUT 201 (409 for a file that exists), GET/HEAD the file (§2.7), DELETE a file (the last
// one takes its version) or a whole version, 204. Errors are plain text, as Forgejo's.
import { Effect, Layer } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { Settings } from "../../config/Settings.ts"
import { contentLength, requestBody } from "../../storage/Http.ts"
import type { BlobStorage } from "../../storage/Service.ts"
import { makeRegistryRoute, plainText, type RegistryCaller, servePackageFile } from "../Registry.ts"
import { PackagesService } from "../Service.ts"

const TYPE = "generic"

// Forgejo's patterns (Go's \w is ASCII).
const NAME = /^[-_+.A-Za-z0-9]+$/
const FILENAME = /^[-_+=:;.()[\]{}~!@#$%^& A-Za-z0-9]+$/

/** Why the path's name, version or file name is refused (Forgejo's sanitizeParameters), if it is. */
export const invalidParameter = (name: string, version: string, filename: string | undefined): string | undefined => {
  if (!NAME.test(name) || name === "." || name === ".." || (name.length === 1 && !/[A-Za-z0-9]/.test(name)))
    return "invalid package name"
  if (
    filename !== undefined &&
    (!FILENAME.test(filename) || filename.trim() !== filename || filename === "." || filename === "..")
  )
    return "invalid filename"
  // A version is free text, but not a path: no separators, no dot segments, no edge spaces.
  if (version === "" || version.trim() !== version || /[/\\]/.test(version) || version === "." || version === "..")
    return "invalid package version"
  return undefined
}

export const GenericRoutes = Layer.unwrap(
  Effect.gen(function* () {
    const settings = yield* Settings
    if (!settings.packages.ENABLED) return Layer.empty
    const packages = yield* PackagesService
    const registryRoute = yield* makeRegistryRoute(plainText)

    /** A route on `{name}/{version}[/{file}]`: the parameters checked first (400 as plain text). */
    const route = (
      need: "read" | "write",
      withFile: boolean,
      work: (
        request: HttpServerRequest.HttpServerRequest,
        allowed: RegistryCaller,
        p: { readonly name: string; readonly version: string; readonly file: string }
      ) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, BlobStorage>
    ) =>
      registryRoute(need, (request, allowed, params) => {
        const p = { name: params.name ?? "", version: params.version ?? "", file: params.file ?? "" }
        const invalid = invalidParameter(p.name, p.version, withFile ? p.file : undefined)
        return invalid !== undefined ? Effect.succeed(plainText(400, invalid)) : work(request, allowed, p)
      })

    const download = route("read", true, (request, { owner }, p) =>
      Effect.gen(function* () {
        const row = yield* packages.version(owner, TYPE, p.name, p.version)
        const file = yield* packages.file(row, p.file)
        return yield* servePackageFile(request, file, file.isLead ? packages.countDownload(row) : Effect.void)
      })
    )
    const base = "/api/packages/:owner/generic/:name/:version"
    return Layer.mergeAll(
      HttpRouter.add(
        "PUT",
        `${base}/:file`,
        route("write", true, (request, { owner, caller }, p) =>
          Effect.as(
            packages.upload(
              {
                owner,
                caller: caller!,
                type: TYPE,
                name: p.name,
                version: p.version,
                mode: "add",
                file: { name: p.file, isLead: true }
              },
              requestBody(request),
              contentLength(request)
            ),
            HttpServerResponse.empty({ status: 201 })
          )
        )
      ),
      HttpRouter.add("GET", `${base}/:file`, download),
      HttpRouter.add(
        "DELETE",
        `${base}/:file`,
        route("write", true, (_request, { owner, caller }, p) =>
          Effect.gen(function* () {
            const row = yield* packages.version(owner, TYPE, p.name, p.version)
            const file = yield* packages.file(row, p.file)
            yield* packages.removeFile(caller!, owner, row, file)
            return HttpServerResponse.empty({ status: 204 })
          })
        )
      ),
      HttpRouter.add(
        "DELETE",
        base,
        route("write", false, (_request, { owner, caller }, p) =>
          Effect.gen(function* () {
            const row = yield* packages.version(owner, TYPE, p.name, p.version)
            yield* packages.removeVersion(caller!, owner, row)
            return HttpServerResponse.empty({ status: 204 })
          })
        )
      )
    )
  })
)
