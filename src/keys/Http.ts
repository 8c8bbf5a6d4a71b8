// Handlers of the keys group: user SSH keys and repository deploy keys.
import { Effect, Option } from "effect"
import { HearthApi } from "../Api.ts"
import { Settings } from "../config/Settings.ts"
import { type Principal, signedInCaller } from "../http/Caller.ts"
import { apiGroup } from "../http/Group.ts"
import { formatTime } from "../http/Json.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { CurrentRepo, type OpenedRepository } from "../repos/Assignment.ts"
import { RepoPolicy } from "../repos/Policy.ts"
import { RepoPresenter } from "../repos/Present.ts"
import { toApiUser } from "../users/Schema.ts"
import { UsersService } from "../users/Service.ts"
import type { DeployKey, PublicKey } from "./Api.ts"
import type { DeployKeyRow, PublicKeyRow } from "./Repo.ts"
import { KeysService } from "./Service.ts"

export const KeysHttp = apiGroup(HearthApi, "keys", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const keys = yield* KeysService
    const users = yield* UsersService
    const policy = yield* RepoPolicy
    const presenter = yield* RepoPresenter
    const root = settings.server.ROOT_URL

    /** Forgejo's convert.ToPublicKey plus the owner-only fields (omitempty as Go drops them). */
    const toApiKey = (viewer: Principal, key: PublicKeyRow) =>
      Effect.gen(function* () {
        const json: { -readonly [K in keyof PublicKey]: PublicKey[K] } = {
          id: key.id,
          key: key.content,
          url: `${root}api/v1/user/keys/${key.id}`,
          title: key.name,
          fingerprint: key.fingerprint,
          created_at: formatTime(key.createdAt)
        }
        if (key.ownerId === viewer.user.id || viewer.user.isAdmin) {
          const owner = yield* keys.ownerOf(key)
          if (Option.isSome(owner)) json.user = toApiUser(settings, owner.value, viewer)
          json.key_type = key.keyType
        }
        return json as PublicKey
      })

    const toApiDeployKey = (viewer: Principal, { owner, repo }: OpenedRepository, key: DeployKeyRow) =>
      Effect.gen(function* () {
        const access = yield* policy.access(viewer, repo, owner)
        return {
          id: key.id,
          key_id: key.keyId,
          key: key.content,
          url: `${root}api/v1/repos/${encodeURIComponent(owner.name)}/${encodeURIComponent(repo.name)}/keys/${key.id}`,
          title: key.name,
          fingerprint: key.fingerprint,
          created_at: formatTime(key.createdAt),
          read_only: key.readOnly,
          repository: yield* presenter.one(viewer, { repo, owner, access })
        } satisfies DeployKey
      })

    type ListQuery = {
      readonly page?: string | undefined
      readonly limit?: string | undefined
      readonly fingerprint?: string | undefined
    }

    const listKeys = (viewer: Principal, query: ListQuery, owner: Parameters<typeof keys.listOf>[0] | undefined) =>
      Effect.gen(function* () {
        const page = yield* resolvePage(query)
        // With a fingerprint it is a lookup (under /user/keys: on the whole instance, as Forgejo).
        const { rows, total } =
          query.fingerprint !== undefined && query.fingerprint !== ""
            ? yield* Effect.map(keys.lookup(query.fingerprint, owner), (rows) => ({ rows, total: rows.length }))
            : yield* keys.listOf(owner ?? viewer.user, page)
        yield* setListHeaders(page, total)
        return yield* Effect.forEach(rows, (row) => toApiKey(viewer, row))
      })

    return handlers
      .handle("listMyKeys", ({ query }) => Effect.flatMap(signedInCaller, (me) => listKeys(me, query, undefined)))
      .handle("listUserKeys", ({ params, query }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          return yield* listKeys(me, query, yield* users.visible(me, params.username))
        })
      )
      .handle("createKey", ({ payload }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          return yield* toApiKey(me, yield* keys.create(me, payload))
        })
      )
      .handle("getKey", ({ params }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          return yield* toApiKey(me, yield* keys.get(me, params.id))
        })
      )
      .handle("deleteKey", ({ params }) => Effect.flatMap(signedInCaller, (me) => keys.remove(me, params.id)))
      .handle("listDeployKeys", ({ query }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          const opened = yield* CurrentRepo
          const page = yield* resolvePage(query)
          const { rows, total } = yield* keys.listDeploy(
            opened.repo,
            { fingerprint: query.fingerprint, keyId: query.key_id },
            page
          )
          yield* setListHeaders(page, total)
          return yield* Effect.forEach(rows, (row) => toApiDeployKey(me, opened, row))
        })
      )
      .handle("createDeployKey", ({ payload }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          const opened = yield* CurrentRepo
          return yield* toApiDeployKey(me, opened, yield* keys.createDeploy(opened.repo, payload))
        })
      )
      .handle("getDeployKey", ({ params }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          const opened = yield* CurrentRepo
          return yield* toApiDeployKey(me, opened, yield* keys.getDeploy(opened.repo, params.id))
        })
      )
      .handle("deleteDeployKey", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          yield* keys.removeDeploy(opened.repo, params.id)
        })
      )
  })
)
