// The Vagrant registry (Forgejo's routers/api/packages/vagrant/vagrant.go; CONTRACT-PACKAGES §3)
// under `/api/packages/{owner}/vagrant`: `vagrant box add <that URL>/{name}` reads the box's
// metadata (HEAD, then GET: versions, providers, URLs, sha512 checksums) and downloads the box;
// boxes are published with a plain PUT of the file (curl --upload-file). Errors are Vagrant
// Cloud's `{"errors":["…"]}`.
//
// Where Forgejo answers 500 (a box that is not a gzip-compressed tar, a broken info.json, a
// urlencoded form) or an empty message, Hearth answers 400 with the reason. Versions are those Vagrant itself
// can read (Metadata.ts), and the name `authenticate` (the sign-in check's path, whose metadata
// could never be fetched) is refused.
import type { Readable } from "node:stream"
import { type MultipartStream, make as makeParser, type Part } from "@effect/platform-node/NodeMultipartParser"
import { Effect, Layer, Option } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { Settings } from "../../config/Settings.ts"
import { contentLength, requestBody } from "../../storage/Http.ts"
import { BlobStorage } from "../../storage/Service.ts"
import { makeRegistryRoute, REALM, type RegistryCaller, servePackageFile } from "../Registry.ts"
import { PackagesService } from "../Service.ts"
import {
  type BoxMetadata,
  compareVersions,
  invalidName,
  invalidProvider,
  invalidVersion,
  readBoxMetadata,
  UnreadableBox
} from "./Metadata.ts"

const TYPE = "vagrant"
/** The file property naming the provider (Forgejo's vagrant.provider), in the case it was uploaded. */
const PROVIDER_PROPERTY = "vagrant.provider"
/** Vagrant treats a URL as box metadata when its HEAD answers with a JSON content type. */
const JSON_TYPE = "application/json;charset=utf-8"

/** Vagrant Cloud's error shape, `{"errors":["…"]}` (with the realm on a 401, so clients know to sign in). */
export const vagrantError = (status: number, message: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(JSON.stringify({ errors: [message] }), {
    status,
    contentType: JSON_TYPE,
    headers: status === 401 ? { "www-authenticate": REALM } : {}
  })

const jsonResponse = (body: unknown) => HttpServerResponse.text(JSON.stringify(body), { contentType: JSON_TYPE })

/** The metadata a version keeps (empty members left out), as Forgejo stores it. */
const metadataOf = (json: string): BoxMetadata => {
  if (json === "") return {}
  try {
    return JSON.parse(json) as BoxMetadata
  } catch {
    return {}
  }
}

/**
 * The first file of a multipart form, as a stream (the form is parsed as it arrives), or why
 * there is none. `release` stops reading the form.
 */
const formFile = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function* () {
    if (!/;\s*boundary=/i.test(request.headers["content-type"] ?? ""))
      return "the form has no multipart boundary in its Content-Type"
    let parser: MultipartStream
    try {
      parser = makeParser({ headers: request.headers, maxParts: 32, maxFieldSize: 64 * 1024 })
    } catch {
      return "the form has no multipart boundary in its Content-Type"
    }
    const source = requestBody(request)
    source.pipe(parser)
    parser.on("error", () => {})
    const release = () => {
      source.unpipe(parser)
      parser.destroy()
    }
    const parts = parser[Symbol.asyncIterator]()
    for (;;) {
      const step = yield* Effect.promise(() =>
        parts.next().then(
          (next) => next,
          () => undefined
        )
      )
      if (step === undefined || step.done === true) {
        release()
        return step === undefined ? "the body is not a readable multipart form" : "the form has no file (the box)"
      }
      if ((step.value as Part)._tag === "File") return { body: step.value as Readable, release }
    }
  })

export const VagrantRoutes = Layer.unwrap(
  Effect.gen(function* () {
    const settings = yield* Settings
    if (!settings.packages.ENABLED) return Layer.empty
    const packages = yield* PackagesService
    const registryRoute = yield* makeRegistryRoute(vagrantError)
    const root = settings.server.ROOT_URL
    const boxUrl = (owner: string, name: string, version: string, file: string) =>
      `${root}api/packages/${[owner, TYPE, name, version, file].map((s, i) => (i === 1 ? s : encodeURIComponent(s))).join("/")}`

    /** The box's metadata document (Forgejo's EnumeratePackageVersions). */
    const metadata = (owner: RegistryCaller["owner"], name: string) =>
      Effect.gen(function* () {
        const index = yield* packages.index(owner, TYPE, name)
        // Ascending by version, as Vagrant lists them; equal ones in upload order (a stable sort).
        const versions = [...index.versions].sort((a, b) => compareVersions(a.version.version, b.version.version))
        const description = metadataOf(versions.at(-1)?.version.metadataJson ?? "").description
        return {
          name: index.pkg.name,
          ...(description === undefined || description === "" ? {} : { description }),
          versions: versions.map(({ version, files }) => ({
            version: version.version,
            status: "active",
            providers: files.map((file) => ({
              name: file.properties.get(PROVIDER_PROPERTY) ?? file.name.replace(/\.box$/, ""),
              url: boxUrl(owner.name, index.pkg.name, version.version, file.name),
              checksum: file.sha512,
              checksum_type: "sha512"
            }))
          }))
        }
      })

    const base = "/api/packages/:owner/vagrant"

    const authenticate = registryRoute("read", (_request, { caller }) =>
      Effect.succeed(
        caller === undefined ? vagrantError(401, "Invalid access token") : HttpServerResponse.empty({ status: 200 })
      )
    )

    const enumerate = registryRoute("read", (_request, { owner }, params) =>
      Effect.gen(function* () {
        // Also HEAD (the router's fallback to GET; Node sends no body): what Vagrant asks first, to
        // learn from the content type that the URL is metadata rather than a box.
        return jsonResponse(yield* metadata(owner, params.name ?? ""))
      })
    )

    const download = registryRoute("read", (request, { owner }, params) =>
      Effect.gen(function* () {
        const row = yield* packages.version(owner, TYPE, params.name ?? "", params.version ?? "")
        const file = yield* Effect.option(packages.file(row, params.provider ?? ""))
        if (Option.isNone(file)) return vagrantError(404, "package file does not exist")
        return yield* servePackageFile(request, file.value, packages.countDownload(row))
      })
    )

    const upload = registryRoute("write", (request, { owner, caller }, params) =>
      Effect.gen(function* () {
        const name = params.name ?? ""
        const version = params.version ?? ""
        const provider = params.provider ?? ""
        const invalid = invalidName(name) ?? invalidVersion(version) ?? invalidProvider(provider)
        if (invalid !== undefined) return vagrantError(400, invalid)
        const type = (request.headers["content-type"] ?? "").toLowerCase()
        if (type.startsWith("application/x-www-form-urlencoded"))
          return vagrantError(
            400,
            "send the box itself as the request body (curl --upload-file my.box <url>), or as a file of a multipart form"
          )
        // A form (Forgejo's too): the first file of any field is the box.
        const form = type.startsWith("multipart/form-data") ? yield* formFile(request) : undefined
        if (typeof form === "string") return vagrantError(400, form)
        const stored = yield* packages
          .store(
            { owner, caller: caller!, type: TYPE },
            form?.body ?? requestBody(request),
            form === undefined ? contentLength(request) : undefined
          )
          .pipe(Effect.ensuring(Effect.sync(() => form?.release())))
        const storage = yield* BlobStorage
        const read = yield* storage.open(stored.blob.sha256).pipe(
          Effect.flatMap((opened) =>
            Effect.tryPromise({
              try: () => readBoxMetadata(opened.readable(), opened.size),
              catch: (error) =>
                error instanceof UnreadableBox ? error : new UnreadableBox(`the box cannot be read: ${String(error)}`)
            })
          ),
          Effect.result
        )
        if (read._tag === "Failure") {
          yield* stored.discard
          const error = read.failure
          return vagrantError(400, error instanceof UnreadableBox ? error.message : "the box cannot be read")
        }
        yield* packages.create(
          {
            owner,
            caller: caller!,
            type: TYPE,
            name,
            version,
            semverCompatible: true,
            mode: "add",
            metadataJson: JSON.stringify(read.success),
            file: {
              name: provider.toLowerCase(),
              isLead: true,
              properties: [{ name: PROVIDER_PROPERTY, value: provider.slice(0, -".box".length) }]
            }
          },
          stored
        )
        return HttpServerResponse.empty({ status: 201 })
      })
    )

    return Layer.mergeAll(
      HttpRouter.add("GET", `${base}/authenticate`, authenticate),
      HttpRouter.add("GET", `${base}/:name`, enumerate),
      HttpRouter.add("GET", `${base}/:name/:version/:provider`, download),
      HttpRouter.add("PUT", `${base}/:name/:version/:provider`, upload)
    )
  })
)
