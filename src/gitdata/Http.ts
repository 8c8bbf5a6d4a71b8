// Handlers of the git data group: the repository of the path is opened by the assignment
// (Assignment.ts: 404 when the caller may not see it, 403 without the route's role), then
// GitDataService reads or writes.
import { Effect, Option } from "effect"
import { HttpServerResponse } from "effect/http"
import { HearthApi } from "../Api.ts"
import { ContentsService } from "../contents/Service.ts"
import { InstanceSigning, signingKeyOf } from "../git/Signing.ts"
import { Caller, signedInCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { parseFormBool } from "../http/Query.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { GIT_HOOK_NAMES, GIT_HOOKS_DISABLED, GitDataService } from "./Service.ts"

/** Forgejo's detail switches: absent or empty is on. */
const switchOn = (value: string | undefined) => parseFormBool(value) ?? true

const plain = (body: string | Uint8Array) =>
  HttpServerResponse.uint8Array(typeof body === "string" ? new TextEncoder().encode(body) : body, {
    contentType: "text/plain; charset=utf-8"
  })

const hook = (name: string) => ({ name, is_active: false, content: "" })

export const GitDataHttp = apiGroup(HearthApi, "gitdata", (handlers) =>
  Effect.gen(function* () {
    const service = yield* GitDataService
    const contents = yield* ContentsService
    const signing = yield* InstanceSigning
    const current = Effect.map(CurrentRepo, contents.handle)

    const knownHook = (id: string) =>
      (GIT_HOOK_NAMES as ReadonlyArray<string>).includes(id) ? Effect.succeed(hook(id)) : Effect.fail(Errors.notFound())

    return handlers
      .handle("getBlobs", ({ query }) => Effect.flatMap(current, (handle) => service.blobs(handle, query.shas)))
      .handle("getAnnotatedTag", ({ params }) =>
        Effect.flatMap(current, (handle) => service.annotatedTag(handle, params.sha))
      )
      .handle("getNote", ({ params, query }) =>
        Effect.gen(function* () {
          const handle = yield* current
          const viewer = Option.getOrUndefined(yield* Caller)
          return yield* service.note(handle, params.sha, viewer, {
            verification: switchOn(query.verification),
            files: switchOn(query.files)
          })
        })
      )
      .handle("setNote", ({ params, payload }) =>
        Effect.gen(function* () {
          const handle = yield* current
          const doer = yield* signedInCaller
          yield* service.setNote(handle, doer, params.sha, payload.message ?? "")
          return yield* service.note(handle, params.sha, doer, { verification: true, files: true })
        })
      )
      .handle("removeNote", ({ params }) =>
        Effect.gen(function* () {
          const handle = yield* current
          const doer = yield* signedInCaller
          yield* service.setNote(handle, doer, params.sha, null)
        })
      )
      .handle("downloadCommitDiff", ({ params }) =>
        Effect.gen(function* () {
          const handle = yield* current
          const kind = params.diffType === "patch" ? "patch" : "diff"
          return plain(yield* service.commitDiff(handle, params.sha, kind))
        })
      )
      .handle("applyDiffPatch", ({ payload }) =>
        Effect.gen(function* () {
          const handle = yield* current
          const doer = yield* signedInCaller
          return yield* service.applyPatch(handle, doer, payload)
        })
      )
      .handle("getEditorConfig", ({ params, query }) =>
        Effect.flatMap(current, (handle) => service.editorConfig(handle, params["*"] ?? "", query.ref))
      )
      .handle("listGitHooks", () => Effect.succeed(GIT_HOOK_NAMES.map(hook)))
      .handle("getGitHook", ({ params }) => knownHook(params.id))
      .handle("editGitHook", ({ params }) =>
        Effect.andThen(knownHook(params.id), Effect.fail(Errors.forbidden(GIT_HOOKS_DISABLED)))
      )
      .handle("deleteGitHook", ({ params }) =>
        Effect.andThen(knownHook(params.id), Effect.fail(Errors.forbidden(GIT_HOOKS_DISABLED)))
      )
      .handle("getSigningKey", () => Effect.succeed(plain(signingKeyOf(signing, "openpgp") ?? "")))
      .handle("getSSHSigningKey", () => {
        const key = signingKeyOf(signing, "ssh")
        return key === undefined ? Effect.fail(Errors.notFound()) : Effect.succeed(plain(key))
      })
      .handle("repoSigningKey", () =>
        Effect.andThen(current, Effect.succeed(plain(signingKeyOf(signing, "openpgp") ?? "")))
      )
  })
)
