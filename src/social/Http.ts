// Stars and watches over HTTP (Forgejo's star.go, watch.go): 204s for stars, WatchInfo for watches, and the lists.
// An owner with `@` (`owner@host/name`) is a repository of another server: starring it sends a
// ForgeFed Like through the federation (Hearth's addition; local names have no `@`).
import { Effect } from "effect"
import { FederatedSocial, isRemoteHandle } from "../../federation/Social.ts"
import { HearthApi } from "../Api.ts"
import { Settings } from "../config/Settings.ts"
import { type Principal, signedInCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { formatTime } from "../http/Json.ts"
import { resolveWindow, setListHeaders } from "../http/Pagination.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { RepoPresenter } from "../repos/Present.ts"
import { toApiUser } from "../users/Schema.ts"
import { UsersService } from "../users/Service.ts"
import type { WatchInfo } from "./Api.ts"
import { SocialService, type Target } from "./Service.ts"

type Query = { readonly page?: string | undefined; readonly limit?: string | undefined }

export const SocialHttp = apiGroup(HearthApi, "social", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const presenter = yield* RepoPresenter
    const social = yield* SocialService
    const users = yield* UsersService
    const remote = yield* FederatedSocial

    const presentRepos = (rows: ReadonlyArray<Target>, viewer: Principal) => presenter.present(viewer, rows)

    const watchInfo = ({ owner, repo }: Target): WatchInfo => {
      const repositoryUrl = `${settings.server.ROOT_URL}api/v1/repos/${encodeURIComponent(owner.name)}/${encodeURIComponent(
        repo.name
      )}`
      // Forgejo reports the repository's creation time here, not the watch's.
      return {
        subscribed: true,
        ignored: false,
        reason: null,
        created_at: formatTime(repo.createdAt),
        url: `${repositoryUrl}/subscription`,
        repository_url: repositoryUrl
      }
    }

    const starredOf = (viewer: Principal, username: string | undefined, query: Query) =>
      Effect.gen(function* () {
        const user = username === undefined ? viewer.user : yield* users.visible(viewer, username)
        const { page, window } = yield* resolveWindow(query)
        const { rows, total } = yield* social.starred(viewer, user, window)
        yield* setListHeaders(page, total)
        return yield* presentRepos(rows, viewer)
      })

    const watchedOf = (viewer: Principal, username: string | undefined, query: Query) =>
      Effect.gen(function* () {
        const user = username === undefined ? viewer.user : yield* users.visible(viewer, username)
        const { page, window } = yield* resolveWindow(query)
        const { rows, total } = yield* social.watched(viewer, user, window)
        yield* setListHeaders(page, total)
        return yield* presentRepos(rows, viewer)
      })

    return handlers
      .handle("listMyStarred", ({ query }) => Effect.flatMap(signedInCaller, (me) => starredOf(me, undefined, query)))
      .handle("listUserStarred", ({ params, query }) =>
        Effect.flatMap(signedInCaller, (me) => starredOf(me, params.username, query))
      )
      .handle("checkStarred", ({ params }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          const starred = isRemoteHandle(params.owner)
            ? yield* remote.isStarred(me.user, params.owner, params.repo)
            : yield* social.isStarred(me.user, (yield* social.find(me, params.owner, params.repo)).repo)
          if (!starred) return yield* Errors.notFound()
        })
      )
      .handle("star", ({ params }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          if (isRemoteHandle(params.owner)) return yield* remote.star(me.user, params.owner, params.repo)
          const { repo } = yield* social.find(me, params.owner, params.repo)
          yield* social.star(me.user, repo)
        })
      )
      .handle("unstar", ({ params }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          if (isRemoteHandle(params.owner)) return yield* remote.unstar(me.user, params.owner, params.repo)
          const { repo } = yield* social.find(me, params.owner, params.repo)
          yield* social.unstar(me.user, repo)
        })
      )
      .handle("listMySubscriptions", ({ query }) =>
        Effect.flatMap(signedInCaller, (me) => watchedOf(me, undefined, query))
      )
      .handle("listUserSubscriptions", ({ params, query }) =>
        Effect.flatMap(signedInCaller, (me) => watchedOf(me, params.username, query))
      )
      .handle("getSubscription", () =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          const target = yield* CurrentRepo
          if (!(yield* social.isWatching(me.user, target.repo))) return yield* Errors.notFound()
          return watchInfo(target)
        })
      )
      .handle("watch", () =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          const target = yield* CurrentRepo
          yield* social.watch(me.user, target.repo)
          return watchInfo(target)
        })
      )
      .handle("unwatch", () =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          const { repo } = yield* CurrentRepo
          yield* social.unwatch(me.user, repo)
        })
      )
      .handle("listStargazers", ({ query }) =>
        Effect.gen(function* () {
          const { repo, caller: viewer } = yield* CurrentRepo
          const { page, window } = yield* resolveWindow(query)
          const rows = yield* social.stargazers(repo, window)
          // Forgejo counts with the repository's counter.
          yield* setListHeaders(page, repo.numStars)
          return rows.map((row) => toApiUser(settings, row, viewer))
        })
      )
      .handle("listSubscribers", ({ query }) =>
        Effect.gen(function* () {
          const { repo, caller: viewer } = yield* CurrentRepo
          const { page, window } = yield* resolveWindow(query)
          const rows = yield* social.watchers(repo, window)
          yield* setListHeaders(page, repo.numWatches)
          return rows.map((row) => toApiUser(settings, row, viewer))
        })
      )
  })
)
