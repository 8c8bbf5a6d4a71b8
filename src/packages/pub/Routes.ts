// The Pub registry (Forgejo's routers/api/packages/pub/pub.go; CONTRACT-PACKAGES §4): the hosted
// Pub repository spec v2 under `/api/packages/{owner}/pub`, for `dart pub publish` and `dart pub
// get`. Publishing: `versions/new` → multipart POST of the `.tar.gz` (read on its way to storage:
// `pubspec.yaml` and the README) → 204 with `Location` → finalize. Resolving: the version list,
// then each `archive_url`. Every answer, errors included, is `application/vnd.pub.v2+json`;
// errors are Pub's `{"error":{"code","message"}}`, and 401/403 carry Pub's
// `WWW-Authenticate: Bearer realm="pub", message="…"`, which `dart pub` prints.
//
// Where Forgejo departs from the spec, Hearth follows the spec: `latest` is the highest version
// (Forgejo's is the lowest), `archive_sha256` is sent (the client checks the download against it),
// a valid token without permission is 403, not 401 (on a 401 `dart pub` deletes its token), a bad
// archive or pubspec is 400, not 500 (the client retries a 500 seven times), and the spec's
// deprecated paths (`…/api/packages/<p>/versions/<v>`, `…/packages/<p>/versions/<v>.tar.gz`) are
// served besides Forgejo's.
import { STATUS_CODES } from "node:http"
import type { Readable } from "node:stream"
import { Effect, Layer } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { Settings } from "../../config/Settings.ts"
import type { Principal } from "../../http/Caller.ts"
import { formatTime } from "../../http/Json.ts"
import { compareSemver, parseSemver } from "../../lib/Semver.ts"
import { readMultipartUpload } from "../../storage/Multipart.ts"
import type { UserRow } from "../../users/Repo.ts"
import { makeRegistryRoute, type RenderError, servePackageFile } from "../Registry.ts"
import type { PackageVersion } from "../Repo.ts"
import { PackagesService, type Stored } from "../Service.ts"
import { scanTarGz, type TarScanResult } from "../TarGz.ts"
import { MAX_UNPACKED, readPubMetadata, wanted } from "./Metadata.ts"

const TYPE = "pub"
export const PUB_MEDIA_TYPE = "application/vnd.pub.v2+json"

/** A Pub JSON answer: the v2 media type, a trailing newline (as Forgejo's). */
const pubJson = (status: number, body: unknown, headers?: Record<string, string>) =>
  HttpServerResponse.text(`${JSON.stringify(body)}\n`, {
    status,
    contentType: PUB_MEDIA_TYPE,
    ...(headers ? { headers } : {})
  })

/** A header parameter's quoted value: printable ASCII, no quote or backslash. */
const quoted = (message: string) => message.replace(/[^\x20-\x7e]/g, " ").replace(/["\\]/g, "'")

/** Pub's error JSON; `code` is the status text (Forgejo's), and 401/403 say why in Pub's challenge. */
export const renderPubError: RenderError = (status, message) =>
  pubJson(
    status,
    { error: { code: STATUS_CODES[status] ?? "Error", message } },
    status === 401 || status === 403
      ? { "www-authenticate": `Bearer realm="pub", message="${quoted(message)}"` }
      : undefined
  )

/** One version as the spec shows it, with the archive's SHA-256 when its file is known. */
const versionJson = (base: string, row: PackageVersion, sha256: string | undefined) => {
  let pubspec: unknown = null
  try {
    pubspec = (JSON.parse(row.version.metadataJson) as { pubspec?: unknown }).pubspec ?? null
  } catch {
    // An unreadable metadata JSON shows no pubspec.
  }
  return {
    version: row.version.version,
    archive_url: `${base}/${encodeURIComponent(row.pkg.name)}/files/${encodeURIComponent(row.version.version)}.tar.gz`,
    ...(sha256 !== undefined ? { archive_sha256: sha256 } : {}),
    ...(pubspec !== null ? { pubspec } : {}),
    published: formatTime(row.version.createdAt)
  }
}

export const PubRoutes = Layer.unwrap(
  Effect.gen(function* () {
    const settings = yield* Settings
    if (!settings.packages.ENABLED) return Layer.empty
    const packages = yield* PackagesService
    const route = yield* makeRegistryRoute(renderPubError)

    /** `{ROOT_URL}api/packages/{owner}/pub/api/packages`: where every URL this registry hands out starts. */
    const baseOf = (owner: UserRow) =>
      `${settings.server.ROOT_URL}api/packages/${encodeURIComponent(owner.name)}/pub/api/packages`

    /** The version's archive digest (its one file). */
    const archiveSha256 = (row: PackageVersion) => Effect.map(packages.files(row), (files) => files[0]?.sha256)

    const one = (owner: UserRow, name: string, version: string) =>
      Effect.gen(function* () {
        const row = yield* packages.version(owner, TYPE, name, version)
        return pubJson(200, versionJson(baseOf(owner), row, yield* archiveSha256(row)))
      })

    const download = (request: HttpServerRequest.HttpServerRequest, owner: UserRow, name: string, file: string) =>
      Effect.gen(function* () {
        const row = yield* packages.version(owner, TYPE, name, file.replace(/\.tar\.gz$/, ""))
        const files = yield* packages.files(row)
        if (files[0] === undefined) return renderPubError(404, "package file does not exist")
        return yield* servePackageFile(request, files[0], packages.countDownload(row))
      })

    /**
     * The multipart upload: the `file` part streams to storage (the owner's quota and limits apply
     * as it arrives) and through the gzip/tar reader at once; then the pubspec decides. A refused
     * archive gives its blob back.
     */
    const upload = (request: HttpServerRequest.HttpServerRequest, owner: UserRow, caller: Principal) =>
      Effect.gen(function* () {
        if (!/^multipart\/form-data\s*;/i.test(request.headers["content-type"] ?? ""))
          return renderPubError(
            400,
            'the upload must be multipart/form-data with the package archive in its "file" part'
          )
        let stored: Stored | undefined
        let scanned: TarScanResult | undefined
        const put = (body: Readable) =>
          Effect.gen(function* () {
            const scan = scanTarGz({ want: wanted, maxUnpacked: MAX_UNPACKED })
            const teed = (async function* () {
              for await (const chunk of body as AsyncIterable<Uint8Array>) {
                await scan.write(chunk)
                yield chunk
              }
            })()
            stored = yield* packages
              .store({ owner, caller, type: TYPE }, teed, undefined)
              .pipe(Effect.onError(() => Effect.promise(() => scan.end())))
            scanned = yield* Effect.promise(() => scan.end())
            return stored.blob
          })
        const form = yield* readMultipartUpload(request, {
          fileField: "file",
          maxSize: Number.MAX_SAFE_INTEGER,
          accept: () => Effect.void,
          put
        }).pipe(
          // Refused or cut off after the file was stored (a later part, the client gone): give it back.
          Effect.onError(() => (stored === undefined ? Effect.void : stored.discard))
        )
        if (form.file === undefined || stored === undefined || scanned === undefined)
          return renderPubError(400, 'the upload has no "file" part (the package archive)')
        const metadata = readPubMetadata(scanned)
        if ("refused" in metadata) {
          yield* stored.discard
          return renderPubError(400, metadata.refused)
        }
        yield* packages.create(
          {
            owner,
            caller,
            type: TYPE,
            name: metadata.name,
            version: metadata.version,
            semverCompatible: true,
            mode: "strict",
            metadataJson: metadata.metadataJson,
            file: { name: `${metadata.version.toLowerCase()}.tar.gz`, isLead: true }
          },
          stored
        )
        const finalize = `${baseOf(owner)}/versions/new/finalize/${encodeURIComponent(metadata.name)}/${encodeURIComponent(metadata.version)}`
        return HttpServerResponse.empty({ status: 204, headers: { location: finalize } })
      })

    const base = "/api/packages/:owner/pub"
    const api = `${base}/api/packages`
    return Layer.mergeAll(
      HttpRouter.add(
        "GET",
        `${api}/versions/new`,
        route("write", (_request, { owner }) =>
          Effect.succeed(pubJson(200, { url: `${baseOf(owner)}/versions/new/upload`, fields: {} }))
        )
      ),
      HttpRouter.add(
        "POST",
        `${api}/versions/new/upload`,
        route("write", (request, { owner, caller }) => upload(request, owner, caller!))
      ),
      HttpRouter.add(
        "GET",
        `${api}/versions/new/finalize/:name/:version`,
        route("write", (_request, { owner }, params) =>
          Effect.map(packages.version(owner, TYPE, params.name ?? "", params.version ?? ""), (row) =>
            pubJson(200, { success: { message: `${row.pkg.name} ${row.version.version} is published.` } })
          )
        )
      ),
      HttpRouter.add(
        "GET",
        `${api}/:name`,
        route("read", (_request, { owner }, params) =>
          Effect.gen(function* () {
            // The versions with their files in one go (not a query per version).
            const index = yield* packages.index(owner, TYPE, params.name ?? "")
            const listed = index.versions.map(({ version, files }) => ({
              row: { pkg: index.pkg, version },
              sha256: files[0]?.sha256,
              semver: parseSemver(version.version)
            }))
            // Ascending by semver precedence; a version that is not semver (none is stored by this registry) first.
            listed.sort((a, b) =>
              a.semver === undefined || b.semver === undefined
                ? Number(b.semver === undefined) - Number(a.semver === undefined)
                : compareSemver(a.semver, b.semver)
            )
            // The highest release, or the highest pre-release when there is no release (pub.dev's `latest`).
            const releases = listed.filter((v) => v.semver !== undefined && v.semver.prerelease.length === 0)
            const pool = releases.length > 0 ? releases : listed
            const latest = pool[pool.length - 1]!
            const at = baseOf(owner)
            return pubJson(200, {
              name: index.pkg.name,
              latest: versionJson(at, latest.row, latest.sha256),
              versions: listed.map((v) => versionJson(at, v.row, v.sha256))
            })
          })
        )
      ),
      // The spec's deprecated "inspect a version", and Forgejo's path for it.
      HttpRouter.add(
        "GET",
        `${api}/:name/versions/:version`,
        route("read", (_request, { owner }, params) => one(owner, params.name ?? "", params.version ?? ""))
      ),
      HttpRouter.add(
        "GET",
        `${api}/:name/:version`,
        route("read", (_request, { owner }, params) => one(owner, params.name ?? "", params.version ?? ""))
      ),
      HttpRouter.add(
        "GET",
        `${api}/:name/files/:file`,
        route("read", (request, { owner }, params) => download(request, owner, params.name ?? "", params.file ?? ""))
      ),
      // The spec's deprecated download.
      HttpRouter.add(
        "GET",
        `${base}/packages/:name/versions/:file`,
        route("read", (request, { owner }, params) => download(request, owner, params.name ?? "", params.file ?? ""))
      )
    )
  })
)
