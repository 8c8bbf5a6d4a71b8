// Activity feeds and the heatmap over HTTP: Forgejo's list answers (X-Total-Count and Link).
import { Effect, Option, Schema } from "effect"
import { HearthApi } from "../Api.ts"
import { Caller, signedInCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { respond } from "../http/Json.ts"
import { type Page, resolvePage, setListHeaders } from "../http/Pagination.ts"
import { OrgPolicy } from "../orgs/Policy.ts"
import { OrgsService } from "../orgs/Service.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { AccountPolicy } from "../users/Policy.ts"
import { UsersRepo } from "../users/Repo.ts"
import { Activity, UserHeatmapData } from "./Api.ts"
import { ActivitiesService, type Listed } from "./Service.ts"

type Paged = { readonly page?: string | undefined; readonly limit?: string | undefined }
const Activities = Schema.Array(Activity)

/** Go's `strconv.ParseBool` truths, as Forgejo's `FormBool` reads them. */
const formBool = (raw: string | undefined) => raw !== undefined && ["1", "t", "T", "true", "TRUE", "True"].includes(raw)

export const ActivitiesHttp = apiGroup(HearthApi, "activities", (handlers) =>
  Effect.gen(function* () {
    const activities = yield* ActivitiesService
    const users = yield* UsersRepo
    const accounts = yield* AccountPolicy
    const orgs = yield* OrgsService
    const orgPolicy = yield* OrgPolicy
    const viewerOf = Effect.map(Caller, Option.getOrUndefined)

    /** The account of a /users/{username} route, 404 when the viewer may not see it. */
    const visibleAccount = (name: string) =>
      Effect.gen(function* () {
        const viewer = yield* viewerOf
        const found = yield* users.findByName(name)
        if (Option.isNone(found)) return yield* Errors.notFound()
        yield* accounts.ensureVisible(viewer, found.value)
        return { viewer, user: found.value }
      })

    const answer = <E, R>(query: Paged, listed: (page: Page) => Effect.Effect<Listed, E, R>) =>
      Effect.gen(function* () {
        const page = yield* resolvePage(query)
        const { items, total } = yield* listed(page)
        yield* setListHeaders(page, total, { withLink: true })
        return respond(Activities, [...items])
      })

    return handlers
      .handle("userActivityFeeds", ({ params, query }) =>
        Effect.gen(function* () {
          const { viewer, user } = yield* visibleAccount(params.username)
          const options = { date: query.date, onlyPerformedBy: formBool(query["only-performed-by"]) }
          return yield* answer(query, (page) => activities.userFeed(viewer, user, options, page))
        })
      )
      .handle("userHeatmap", ({ params }) =>
        Effect.gen(function* () {
          const { viewer, user } = yield* visibleAccount(params.username)
          return respond(Schema.Array(UserHeatmapData), yield* activities.heatmap(viewer, user))
        })
      )
      .handle("orgActivityFeeds", ({ params, query }) =>
        Effect.gen(function* () {
          const viewer = yield* viewerOf
          const org = yield* orgs.get(params.org)
          yield* accounts.ensureVisible(viewer, org)
          return yield* answer(query, (page) => activities.orgFeed(viewer, org, { date: query.date }, page))
        })
      )
      .handle("teamActivityFeeds", ({ params, query }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const team = yield* orgs.getTeam(params.id)
          const org = yield* orgs.getById(team.orgId)
          yield* orgPolicy.ensureTeamVisible(caller, org, team)
          return yield* answer(query, (page) => activities.teamFeed(caller, team, { date: query.date }, page))
        })
      )
      .handle("repoActivityFeeds", ({ query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const viewer = yield* viewerOf
          return yield* answer(query, (page) => activities.repoFeed(viewer, opened.repo, { date: query.date }, page))
        })
      )
  })
)
