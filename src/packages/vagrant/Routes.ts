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
import { Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { Settings } from "../../config/Settings.ts"
import { contentLength, requestBody } from "../../storage/Http.ts"
import { readMultipartUpload } from "../../storage/Multipart.ts"
import { makeRegistryRoute, REALM, type RegistryCaller, servePackageFile } from "../Registry.ts"
import { PackagesService, type Stored } from "../Service.ts"
import {
  type BoxMetadata,
  boxMetadataOf,
  compareVersions,
  invalidName,
  invalidProvider,
  invalidVersion,
  scanBox,
  UnreadableBox,
  unpackBound
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
        // The box is read as it streams to storage (its info.json, and whether it is a box at all),
        // as Pub reads its archive: never buffered, never read back. A form (Forgejo's too): the
        // first file of any field is the box, through the one multipart reader (storage/Multipart.ts).
        const isForm = type.startsWith("multipart/form-data")
        if (isForm && !/;\s*boundary=/i.test(type))
          return vagrantError(400, "the form has no multipart boundary in its Content-Type")
        const length = isForm ? undefined : contentLength(request)
        let received = 0
        // Disk images compress a few times over; hundreds of times is a bomb (a GiB at least is
        // read). Without a Content-Length, bounded by the bytes received so far.
        const scan = scanBox(() => unpackBound(length ?? received))
        let stored: Stored | undefined
        let info: Effect.Effect<BoxMetadata, UnreadableBox> | undefined
        const put = (body: AsyncIterable<Uint8Array>) =>
          Effect.gen(function* () {
            const teed = (async function* () {
              for await (const chunk of body) {
                received += chunk.length
                await scan.write(chunk)
                yield chunk
              }
            })()
            stored = yield* packages
              .store({ owner, caller: caller!, type: TYPE }, teed, length)
              .pipe(Effect.onError(() => Effect.promise(() => scan.end().catch(() => undefined))))
            const read = yield* Effect.promise(() =>
              scan.end().then(
                (found) => {
                  try {
                    return Effect.succeed(boxMetadataOf(found))
                  } catch (error) {
                    return Effect.fail(error as UnreadableBox)
                  }
                },
                (error) =>
                  Effect.fail(
                    error instanceof UnreadableBox
                      ? error
                      : new UnreadableBox(`the box cannot be read: ${String(error)}`)
                  )
              )
            )
            info = read
            return stored.blob
          })
        if (isForm) {
          const form = yield* readMultipartUpload(request, {
            fileField: undefined,
            maxSize: Number.MAX_SAFE_INTEGER,
            accept: () => Effect.void,
            put
          }).pipe(
            // Refused or cut off after the box was stored (a later part, the client gone): give it back.
            Effect.onError(() => (stored === undefined ? Effect.void : stored.discard))
          )
          if (form.file === undefined) return vagrantError(400, "the form has no file (the box)")
        } else yield* put(requestBody(request))
        const read = yield* Effect.result(info!)
        if (read._tag === "Failure") {
          yield* stored!.discard
          return vagrantError(400, read.failure.message)
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
          stored!
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
