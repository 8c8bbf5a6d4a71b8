// The common package service every registry (src/packages/<type>) and the management API build on
// (Forgejo's services/packages/packages.go; CONTRACT-PACKAGES §1, §5, §7): creating a version with
// a file, whose bytes stream into the blob storage under the size limits; deleting versions and
// files; linking to a repository; listing; and the `package` events.
//
// An upload is stored before its rows are written (a long upload must not hold a transaction). If
// the rows cannot be written (a duplicate, a limit), the put's hold is dropped at once, so that a
// refused or aborted upload leaves no blob behind; a body that stops half-way is never a blob.
import { Context, Effect, Layer, Option } from "effect"
import { Settings } from "../config/Settings.ts"
import { EventHub } from "../events/Hub.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import type { Page } from "../http/Pagination.ts"
import { QuotaService } from "../quota/Service.ts"
import { RepoPolicy, repoRefusal } from "../repos/Policy.ts"
import { ReposRepo } from "../repos/Repo.ts"
import type { BlobBody, PutOptions, StoredBlob } from "../storage/Service.ts"
import { BlobStorage } from "../storage/Service.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { toApiUser } from "../users/Schema.ts"
import { makePackagePresenter, type PackageJson, packageHtmlUrl } from "./Present.ts"
import {
  type DigestedFileRow,
  type FileRow,
  type ListFilter,
  type PackageRow,
  PackagesRepo,
  type PackageVersion,
  PROPERTY_FILE,
  PROPERTY_PACKAGE,
  PROPERTY_VERSION,
  type PropertyInput,
  type VersionRow
} from "./Repo.ts"

/** Forgejo's messages (services/packages/packages.go). */
export const TYPE_SIZE_EXCEEDED = "maximum allowed package type size exceeded"
export const OWNER_SIZE_EXCEEDED = "maximum allowed package storage quota exceeded"
export const OWNER_COUNT_EXCEEDED = "maximum allowed package count exceeded"
export const VERSION_EXISTS = "package version already exists"
export const FILE_EXISTS = "package file already exists"
export const PACKAGE_NOT_FOUND = "package does not exist"

export interface Upload {
  readonly owner: UserRow
  readonly caller: Principal
  readonly type: string
  readonly name: string
  readonly version: string
  readonly semverCompatible?: boolean
  /** "strict": an existing version is a 409 (Pub); "add": the file joins it (Vagrant, generic). */
  readonly mode: "strict" | "add"
  readonly metadataJson?: string
  readonly packageProperties?: ReadonlyArray<PropertyInput>
  readonly versionProperties?: ReadonlyArray<PropertyInput>
  readonly file: {
    readonly name: string
    readonly compositeKey?: string
    readonly isLead: boolean
    readonly properties?: ReadonlyArray<PropertyInput>
  }
}

/** A package's versions with their files and each file's properties: what a registry's index shows. */
export interface PackageIndex {
  readonly pkg: PackageRow
  /** Non-internal versions, oldest first. */
  readonly versions: ReadonlyArray<{
    readonly version: VersionRow
    readonly files: ReadonlyArray<DigestedFileRow & { readonly properties: ReadonlyMap<string, string> }>
  }>
}

export type UploadError = Errors.Forbidden | Errors.Conflict | Errors.PayloadTooLarge | Errors.BadRequest

export interface Stored {
  readonly blob: StoredBlob
  /** Give the blob back (a refused upload): nothing is left behind. */
  readonly discard: Effect.Effect<void>
}

export class PackagesService extends Context.Service<
  PackagesService,
  {
    /**
     * Streams `body` into the blob storage under the uploader's limits (Forgejo's LIMIT_SIZE_<TYPE>
     * and LIMIT_TOTAL_OWNER_SIZE: 403; skipped for site admins) after the owner's quota pre-check
     * (`size:assets:packages:all`: 413). For a registry that reads the file before it is saved
     * (a box's metadata, a pubspec); `create` saves it.
     */
    readonly store: (
      upload: Pick<Upload, "owner" | "caller" | "type">,
      body: BlobBody,
      length: number | undefined,
      /** Digests to compute on the way as well (to check them before answering); see PutOptions. */
      digests?: PutOptions["digests"]
    ) => Effect.Effect<Stored, UploadError>
    /** Saves a stored file as a version's file (creating package and version as needed). */
    readonly create: (
      upload: Upload,
      stored: Stored,
      /** More rows of the version, written in its transaction (a container manifest's blobs). */
      also?: (row: PackageVersion) => Effect.Effect<void>
    ) => Effect.Effect<{ readonly row: PackageVersion; readonly created: boolean }, UploadError>
    /** `store` then `create`. */
    readonly upload: (
      upload: Upload,
      body: BlobBody,
      length: number | undefined
    ) => Effect.Effect<{ readonly row: PackageVersion; readonly created: boolean }, UploadError>
    readonly version: (
      owner: UserRow,
      type: string,
      name: string,
      version: string
    ) => Effect.Effect<PackageVersion, Errors.NotFound>
    /** The version's files with their digests (computed now for a file whose upload's computation has not finished). */
    readonly files: (row: PackageVersion) => Effect.Effect<Array<DigestedFileRow>>
    /**
     * The package's non-internal versions (oldest first) with their files and file properties, in
     * three queries whatever their number (a registry's version list); 404 when it has no version.
     */
    readonly index: (owner: UserRow, type: string, name: string) => Effect.Effect<PackageIndex, Errors.NotFound>
    /** One file (to serve it: its digests may not be computed yet). */
    readonly file: (row: PackageVersion, name: string, compositeKey?: string) => Effect.Effect<FileRow, Errors.NotFound>
    /** Deletes a version and announces it (webhook `deleted`). */
    readonly removeVersion: (caller: Principal, owner: UserRow, row: PackageVersion) => Effect.Effect<void>
    /** Deletes a file; the last file of a version takes the version with it (Forgejo's generic registry). */
    readonly removeFile: (caller: Principal, owner: UserRow, row: PackageVersion, file: FileRow) => Effect.Effect<void>
    readonly countDownload: (row: PackageVersion) => Effect.Effect<void>
    readonly list: (
      viewer: Principal | undefined,
      owner: UserRow,
      filter: ListFilter,
      page: Page
    ) => Effect.Effect<{ readonly items: Array<PackageJson>; readonly total: number }>
    readonly present: (viewer: Principal | undefined, owner: UserRow, row: PackageVersion) => Effect.Effect<PackageJson>
    /** The package files counted in `owner`'s quota (Forgejo's QuotaUsedPackage list), one per file. */
    readonly quotaList: (
      owner: UserRow,
      page: Page
    ) => Effect.Effect<{
      readonly items: Array<{ name: string; type: string; version: string; size: number; html_url: string }>
      readonly total: number
    }>
    /** Links the package to a repository of its owner (Forgejo's LinkPackage). */
    readonly link: (
      caller: Principal,
      owner: UserRow,
      type: string,
      name: string,
      repoName: string
    ) => Effect.Effect<void, Errors.NotFound | Errors.BadRequest | Errors.Forbidden>
    readonly unlink: (
      caller: Principal,
      owner: UserRow,
      type: string,
      name: string
    ) => Effect.Effect<void, Errors.NotFound | Errors.BadRequest | Errors.Forbidden>
  }
>()("hearth/packages/PackagesService") {
  static readonly layer = Layer.effect(
    PackagesService,
    Effect.gen(function* () {
      const settings = yield* Settings
      const repo = yield* PackagesRepo
      const storage = yield* BlobStorage
      const quota = yield* QuotaService
      const hub = yield* EventHub
      const repos = yield* ReposRepo
      const repoPolicy = yield* RepoPolicy
      const presenter = yield* makePackagePresenter
      const users = yield* UsersRepo
      const limits = settings.packages

      const typeLimit = (type: string): number =>
        (limits as unknown as Record<string, number>)[`LIMIT_SIZE_${type.toUpperCase()}`] ?? -1

      /** acquire + release in one transaction: the hold ends, and an unused blob goes after commit. */
      const discard = (blob: StoredBlob) =>
        repo
          .transaction(Effect.andThen(storage.acquire(blob), storage.release(blob.sha256)))
          .pipe(Effect.ignoreCause({ log: "Warn", message: "could not give back a refused package file" }))

      const store = (
        upload: Pick<Upload, "owner" | "caller" | "type">,
        body: BlobBody,
        length: number | undefined,
        digests?: PutOptions["digests"]
      ): Effect.Effect<Stored, UploadError> =>
        Effect.gen(function* () {
          yield* quota.enforce(upload.owner, "size:assets:packages:all")
          const limited = !upload.caller.user.isAdmin
          const perType = limited ? typeLimit(upload.type) : -1
          let ownerRoom = -1
          if (limited && limits.LIMIT_TOTAL_OWNER_SIZE > -1) {
            const totals = yield* repo.ownerTotals(upload.owner.id)
            ownerRoom = Math.max(0, limits.LIMIT_TOTAL_OWNER_SIZE - totals.size)
          }
          const bounds = [perType, ownerRoom].filter((n) => n > -1)
          const maxSize = bounds.length === 0 ? Number.MAX_SAFE_INTEGER : Math.min(...bounds)
          const blob = yield* storage
            .put(body, { maxSize, length, digests })
            .pipe(
              Effect.mapError((e) =>
                e instanceof Errors.PayloadTooLarge && bounds.length > 0
                  ? Errors.forbidden(
                      perType > -1 && (ownerRoom < 0 || perType <= ownerRoom) ? TYPE_SIZE_EXCEEDED : OWNER_SIZE_EXCEEDED
                    )
                  : e
              )
            )
          return { blob, discard: discard(blob) }
        })

      /** The `package` event; `shown` is the Package as the caller saw it (a deleted one: before it went). */
      const announce = (
        caller: Principal,
        owner: UserRow,
        row: PackageVersion,
        action: "created" | "deleted",
        shown: ReadonlyArray<PackageJson>
      ) =>
        Effect.gen(function* () {
          const linked = row.pkg.repoId === null ? Option.none() : yield* repos.findById(row.pkg.repoId)
          yield* hub.publish({
            _tag: "Package",
            repo: Option.isSome(linked)
              ? {
                  id: linked.value.id,
                  name: linked.value.name,
                  ownerId: linked.value.ownerId,
                  ownerName: owner.name,
                  private: linked.value.isPrivate
                }
              : { id: 0, name: "", ownerId: owner.id, ownerName: owner.name, private: false },
            doer: { id: caller.user.id, name: caller.user.name },
            action,
            package: shown[0] as unknown as Record<string, unknown>,
            sender: toApiUser(settings, caller.user, undefined) as unknown as Record<string, unknown>
          })
        })

      const create = (upload: Upload, stored: Stored, also?: (row: PackageVersion) => Effect.Effect<void>) =>
        Effect.gen(function* () {
          const limited = !upload.caller.user.isAdmin
          const blob = stored.blob
          const saved = yield* repo
            .transaction(
              Effect.gen(function* () {
                const { pkg, created: newPackage } = yield* repo.upsertPackage({
                  ownerId: upload.owner.id,
                  type: upload.type,
                  name: upload.name,
                  semverCompatible: upload.semverCompatible ?? false
                })
                if (newPackage && upload.packageProperties !== undefined)
                  yield* repo.insertProperties(PROPERTY_PACKAGE, pkg.id, upload.packageProperties)
                // "strict" inserts at once (a conflict is the 409 either way); "add" looks first,
                // as a file added to an existing version is its common case.
                let version =
                  upload.mode === "strict"
                    ? undefined
                    : Option.getOrUndefined(yield* repo.findVersion(pkg.id, upload.version.toLowerCase()))
                let created = false
                if (version === undefined) {
                  const inserted = yield* repo.insertVersion({
                    packageId: pkg.id,
                    creatorId: upload.caller.user.id,
                    version: upload.version,
                    metadataJson: upload.metadataJson ?? "",
                    isInternal: false
                  })
                  if (Option.isNone(inserted)) {
                    // Another upload created it meanwhile.
                    if (upload.mode === "strict") return yield* Errors.conflict(VERSION_EXISTS)
                    version = Option.getOrUndefined(yield* repo.findVersion(pkg.id, upload.version.toLowerCase()))
                    if (version === undefined) return yield* Errors.conflict(VERSION_EXISTS)
                  } else {
                    version = inserted.value
                    created = true
                    if (upload.versionProperties !== undefined)
                      yield* repo.insertProperties(PROPERTY_VERSION, version.id, upload.versionProperties)
                  }
                }
                const countLimited = limited && created && limits.LIMIT_TOTAL_OWNER_COUNT > -1
                const sizeLimited = limited && limits.LIMIT_TOTAL_OWNER_SIZE > -1
                const totals =
                  countLimited || sizeLimited ? yield* repo.ownerTotals(upload.owner.id) : { count: 0, size: 0 }
                // The version just inserted is counted already (Forgejo counts "including the new one").
                if (
                  limited &&
                  created &&
                  limits.LIMIT_TOTAL_OWNER_COUNT > -1 &&
                  totals.count > limits.LIMIT_TOTAL_OWNER_COUNT
                )
                  return yield* Errors.forbidden(OWNER_COUNT_EXCEEDED)
                const perType = limited ? typeLimit(upload.type) : -1
                if (perType > -1 && blob.size > perType) return yield* Errors.forbidden(TYPE_SIZE_EXCEEDED)
                if (
                  limited &&
                  limits.LIMIT_TOTAL_OWNER_SIZE > -1 &&
                  totals.size + blob.size > limits.LIMIT_TOTAL_OWNER_SIZE
                )
                  return yield* Errors.forbidden(OWNER_SIZE_EXCEEDED)
                const file = yield* repo.insertFile({
                  versionId: version.id,
                  sha256: blob.sha256,
                  size: blob.size,
                  name: upload.file.name,
                  compositeKey: upload.file.compositeKey ?? "",
                  isLead: upload.file.isLead
                })
                if (Option.isNone(file)) return yield* Errors.conflict(FILE_EXISTS)
                if (upload.file.properties !== undefined)
                  yield* repo.insertProperties(PROPERTY_FILE, file.value.id, upload.file.properties)
                yield* Effect.orDie(storage.acquire(blob))
                const row = { pkg, version }
                if (also !== undefined) yield* also(row)
                return { row, created }
              })
            )
            .pipe(Effect.tapError(() => stored.discard))
          if (saved.created)
            yield* announce(
              upload.caller,
              upload.owner,
              saved.row,
              "created",
              yield* presenter(upload.caller, upload.owner, [saved.row])
            )
          return saved
        })

      /**
       * The files' digests: md5, sha1 and sha512 are computed after an upload is answered; a file
       * read before that gets them now (the storage waits for, or runs, that computation).
       */
      const withDigests = (files: ReadonlyArray<FileRow>): Effect.Effect<Array<DigestedFileRow>> =>
        Effect.forEach(files, (file) =>
          file.md5 !== null && file.sha1 !== null && file.sha512 !== null
            ? Effect.succeed(file as DigestedFileRow)
            : Effect.map(Effect.orDie(storage.digests(file.sha256)), (d) => ({
                ...file,
                md5: d.md5,
                sha1: d.sha1,
                sha512: d.sha512
              }))
        )

      const findVersion = (owner: UserRow, type: string, name: string, version: string) =>
        Effect.flatMap(repo.versionByName(owner.id, type, name.toLowerCase(), version.toLowerCase()), (found) =>
          Option.isNone(found) ? Effect.fail(Errors.notFound()) : Effect.succeed(found.value)
        )

      const removeVersion = (caller: Principal, owner: UserRow, row: PackageVersion) =>
        Effect.gen(function* () {
          // The event shows the version as it was (presented before it goes).
          const shown = yield* presenter(caller, owner, [row])
          if (!(yield* repo.transaction(repo.deleteVersion(row.version.id)))) return
          yield* announce(caller, owner, row, "deleted", shown)
        })

      /** The package of (owner, type, name), or 404 "package does not exist". */
      const findPackage = (owner: UserRow, type: string, name: string) =>
        Effect.flatMap(repo.findPackage(owner.id, type, name.toLowerCase()), (found) =>
          Option.isNone(found) ? Effect.fail(Errors.notFound()) : Effect.succeed(found.value)
        )

      /** Write on the repository's packages unit (Forgejo's link/unlink permission check). */
      const mayWritePackagesOf = (caller: Principal, owner: UserRow, repoId: number) =>
        Effect.gen(function* () {
          const found = yield* repos.findById(repoId)
          if (Option.isNone(found)) return true
          const access = yield* repoPolicy.access(caller, found.value, owner)
          return (
            repoRefusal(caller, { repo: found.value, owner, access }, { role: "write", unit: "packages" }) === undefined
          )
        })

      return PackagesService.of({
        store,
        create,
        upload: (upload, body, length) =>
          Effect.flatMap(store(upload, body, length), (stored) => create(upload, stored)),
        version: findVersion,
        files: (row) => Effect.flatMap(repo.files(row.version.id), withDigests),
        index: (owner, type, name) =>
          Effect.gen(function* () {
            const pkg = yield* findPackage(owner, type, name)
            const versions = yield* repo.versionsOf(pkg.id)
            if (versions.length === 0) return yield* Errors.notFound()
            const files = yield* withDigests(yield* repo.filesOf(versions.map((v) => v.id)))
            const properties = new Map<number, Map<string, string>>()
            for (const row of yield* repo.properties(
              PROPERTY_FILE,
              files.map((f) => f.id)
            )) {
              const id = Number(row.ref_id)
              if (!properties.has(id)) properties.set(id, new Map())
              properties.get(id)!.set(row.name as string, row.value as string)
            }
            return {
              pkg,
              versions: versions.map((version) => ({
                version,
                files: files
                  .filter((f) => f.versionId === version.id)
                  .map((f) => ({ ...f, properties: properties.get(f.id) ?? new Map<string, string>() }))
              }))
            }
          }),
        file: (row, name, compositeKey) =>
          Effect.flatMap(repo.fileByName(row.version.id, name.toLowerCase(), compositeKey), (found) =>
            Option.isNone(found) ? Effect.fail(Errors.notFound()) : Effect.succeed(found.value)
          ),
        removeVersion,
        removeFile: (caller, owner, row, file) =>
          Effect.gen(function* () {
            const files = yield* repo.files(row.version.id)
            if (files.length <= 1) return yield* removeVersion(caller, owner, row)
            yield* repo.transaction(repo.deleteFile(file.id))
          }),
        countDownload: (row) => repo.countDownload(row.version.id),
        list: (viewer, owner, filter, page) =>
          Effect.gen(function* () {
            const listed = yield* repo.list(owner.id, filter, page)
            return { items: yield* presenter(viewer, owner, listed.rows), total: listed.total }
          }),
        quotaList: (owner, page) =>
          Effect.gen(function* () {
            const listed = yield* repo.usedFiles(owner.id, page)
            const owners = new Map<number, UserRow>([[owner.id, owner]])
            const items = []
            for (const row of listed.rows) {
              let pkgOwner = owners.get(row.pkg.ownerId)
              if (pkgOwner === undefined) {
                pkgOwner = Option.getOrElse(yield* users.findById(row.pkg.ownerId), () => owner)
                owners.set(row.pkg.ownerId, pkgOwner)
              }
              items.push({
                name: row.pkg.name,
                type: row.pkg.type,
                version: row.version.version,
                size: row.size,
                html_url: packageHtmlUrl(settings.server.ROOT_URL, pkgOwner, row)
              })
            }
            return { items, total: listed.total }
          }),
        present: (viewer, owner, row) => Effect.map(presenter(viewer, owner, [row]), (shown) => shown[0]!),
        link: (caller, owner, type, name, repoName) =>
          Effect.gen(function* () {
            const pkg = yield* findPackage(owner, type, name)
            const target = yield* repos.findByName(owner.id, repoName)
            if (Option.isNone(target)) return yield* Errors.notFound()
            if (pkg.repoId !== null) return yield* Errors.badRequest("invalid argument")
            if (!(yield* mayWritePackagesOf(caller, owner, target.value.id)))
              return yield* Errors.forbidden("permission denied")
            yield* repo.setRepo(pkg.id, target.value.id)
          }),
        // Forgejo answers 500 to a caller who is neither admin nor owner here (a plain error); the
        // caller already has write on the packages, so the repository's permission decides (403).
        unlink: (caller, owner, type, name) =>
          Effect.gen(function* () {
            const pkg = yield* findPackage(owner, type, name)
            if (pkg.repoId === null) return yield* Errors.badRequest("invalid argument")
            if (!(yield* mayWritePackagesOf(caller, owner, pkg.repoId)))
              return yield* Errors.forbidden("permission denied")
            yield* repo.setRepo(pkg.id, null)
          })
      })
    })
  )
}
