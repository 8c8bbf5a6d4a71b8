// Handlers of the contents group: the repository of the path is opened by the assignment
// (Assignment.ts: 404 when the caller may not see it), then ContentsService reads from git.
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HearthApi } from "../Api.ts"
import { Settings } from "../config/Settings.ts"
import { contentTypeOf } from "../git/Readers.ts"
import { signedInCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { parseFormBool } from "../http/Query.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import type { ChangeFilesOptions } from "./Api.ts"
import { ContentsService, DEFAULT_TREE_PAGE, type RepoHandle } from "./Service.ts"

/** A query switch that is off unless given. */
const flag = (value: string | undefined) => parseFormBool(value) ?? false

/** A positive integer query value, or `fallback` when absent or not a positive number. */
const positive = (value: string | undefined, fallback: number) => {
  const n = /^\d{1,9}$/.test(value ?? "") ? Number(value) : 0
  return n > 0 ? n : fallback
}

export const ContentsHttp = apiGroup(HearthApi, "contents", (handlers) =>
  Effect.gen(function* () {
    const service = yield* ContentsService
    const settings = yield* Settings

    /** The repository of the path, opened by the assignment (Assignment.ts). */
    const current = Effect.map(CurrentRepo, service.handle)

    /** The file's bytes as Forgejo serves them, marked as a blob (Forgejo's `GetRawFile`). */
    const serve = (handle: RepoHandle, path: string, ref: string | undefined) =>
      Effect.map(service.file(handle, path, ref), ({ bytes, name }) =>
        HttpServerResponse.uint8Array(bytes, {
          contentType: contentTypeOf(bytes),
          headers: {
            "X-Service-Object-Type": "blob",
            "Content-Disposition": `inline; filename*=UTF-8''${encodeURIComponent(name)}`,
            "Cache-Control": "private, max-age=300"
          }
        })
      )

    /** The signed-in caller's change to the repository of the path, as one commit. */
    const change = (options: ChangeFilesOptions) =>
      Effect.gen(function* () {
        const caller = yield* signedInCaller
        return yield* service.change(yield* current, caller, options)
      })

    /** The one file a single-file route names (POST/PUT/DELETE /contents/{path}). */
    const single = (options: ChangeFilesOptions) =>
      Effect.map(change(options), (result) => ({
        content: result.files[0] ?? null,
        commit: result.commit,
        verification: result.verification
      }))

    return handlers
      .handle("createFiles", ({ params, payload }) => {
        const { content, files, ...options } = payload
        const path = params["*"] ?? ""
        if (path === "") {
          if (files === undefined) return Effect.fail(Errors.validationFailed("files: Required"))
          return Effect.map(change({ ...options, files }), (result) => ({
            files: result.files,
            commit: result.commit,
            verification: result.verification
          }))
        }
        if (content === undefined) return Effect.fail(Errors.validationFailed("content: Required"))
        return Effect.flatMap(single({ ...options, files: [{ operation: "create", path, content }] }), (response) =>
          response.content === null
            ? Effect.die(new Error("created file missing"))
            : Effect.succeed({ ...response, content: response.content })
        )
      })
      .handle("updateFile", ({ params, payload }) => {
        const { content, sha, from_path, ...options } = payload
        return Effect.flatMap(
          single({
            ...options,
            files: [{ operation: "update", path: params["*"] ?? "", content, sha, from_path }]
          }),
          (response) =>
            response.content === null
              ? Effect.die(new Error("updated file missing"))
              : Effect.succeed({ ...response, content: response.content })
        )
      })
      .handle("deleteFile", ({ params, payload }) => {
        const { sha, ...options } = payload
        return single({ ...options, files: [{ operation: "delete", path: params["*"] ?? "", sha }] }).pipe(
          Effect.map((response) => ({ ...response, content: null })),
          // Forgejo answers a refused delete (a stale sha, a bad name) with 400, not 422.
          Effect.mapError((e) => (e instanceof Errors.ValidationFailed ? Errors.badRequest(e.message) : e))
        )
      })
      .handle("getContents", ({ params, query }) =>
        Effect.flatMap(current, (handle) => service.contents(handle, params["*"] ?? "", query.ref))
      )
      .handle("getRawFile", ({ params, query }) =>
        Effect.flatMap(current, (handle) => serve(handle, params["*"] ?? "", query.ref))
      )
      .handle("getMediaFile", ({ params, query }) =>
        // No LFS store yet, so media is the stored blob, as raw is.
        Effect.flatMap(current, (handle) => serve(handle, params["*"] ?? "", query.ref))
      )
      .handle("getBlob", ({ params }) =>
        Effect.gen(function* () {
          const handle = yield* current
          const { bytes, sha } = yield* service.blob(handle, params.sha)
          return {
            // Forgejo's GetBlobBySHA: a blob over [api] DEFAULT_MAX_BLOB_SIZE comes without its content.
            content: bytes.length > settings.api.DEFAULT_MAX_BLOB_SIZE ? "" : bytes.toString("base64"),
            encoding: "base64",
            url: `${handle.api}/git/blobs/${sha}`,
            sha,
            size: bytes.length
          }
        })
      )
      .handle("getTree", ({ params, query }) =>
        Effect.gen(function* () {
          const handle = yield* current
          const page = positive(query.page, 1)
          const perPage = Math.min(positive(query.per_page, DEFAULT_TREE_PAGE), DEFAULT_TREE_PAGE)
          const recursive = flag(query.recursive)
          const { entries, sha } = yield* service.tree(handle, params.sha, { recursive, page, perPage })
          const start = (page - 1) * perPage
          const slice = entries.slice(start, start + perPage)
          return {
            sha,
            url: `${handle.api}/git/trees/${sha}`,
            tree: slice.map((e) => ({
              path: e.path,
              mode: e.mode,
              type: e.type,
              size: e.size,
              sha: e.sha,
              url: `${handle.api}/git/${e.type === "tree" ? "trees" : "blobs"}/${e.sha}`
            })),
            truncated: start + slice.length < entries.length,
            page,
            total_count: entries.length
          }
        })
      )
      .handle("getRefs", ({ params }) =>
        Effect.gen(function* () {
          const handle = yield* current
          return (yield* service.refs(handle, params["*"] ?? "")).map((r) => reference(handle, r))
        })
      )
  })
)

const reference = (handle: RepoHandle, r: { ref: string; sha: string; type: string }) => ({
  ref: r.ref,
  url: `${handle.api}/git/${r.ref.split("/").map(encodeURIComponent).join("/")}`,
  object: { type: r.type, sha: r.sha, url: `${handle.api}/git/${r.type}s/${r.sha}` }
})
