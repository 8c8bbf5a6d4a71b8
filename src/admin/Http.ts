import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { HearthApi } from "../Api.ts"
import { Settings } from "../config/Settings.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { toApiUser } from "../users/Schema.ts"
import { parseSort, UsersService } from "../users/Service.ts"
import { siteAdmin } from "./Policy.ts"
import { AdminUsers } from "./Service.ts"

/** Forgejo's `FormBool`: "true", "1", "t", … are true; anything else false. */
const formBool = (value: string | undefined) => ["1", "t", "true"].includes((value ?? "").trim().toLowerCase())

/** "" means "not given", as Go clients send it. */
const given = <A extends string>(value: A | undefined): Exclude<A, ""> | undefined =>
  value === "" ? undefined : (value as Exclude<A, ""> | undefined)

export const AdminUsersHttp = HttpApiBuilder.group(HearthApi, "adminUsers", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const users = yield* UsersService
    const admin = yield* AdminUsers

    return handlers
      .handle("adminSearchUsers", ({ query }) =>
        Effect.gen(function* () {
          const doer = yield* siteAdmin
          const page = yield* resolvePage(query)
          const sourceId = /^\d+$/.test(query.source_id ?? "") ? Number(query.source_id) : undefined
          const { rows, total } = yield* admin.list(
            {
              sort: parseSort(query.sort),
              loginName: query.login_name?.trim(),
              sourceId
            },
            page
          )
          yield* setListHeaders(page, total, { withLink: true })
          return rows.map((row) => toApiUser(settings, row, doer))
        })
      )
      .handle("adminCreateUser", ({ payload }) =>
        Effect.gen(function* () {
          const doer = yield* siteAdmin
          const created = yield* admin.create({
            username: payload.username,
            email: payload.email,
            password: payload.password,
            fullName: payload.full_name,
            loginName: payload.login_name,
            sourceId: payload.source_id,
            mustChangePassword: payload.must_change_password,
            restricted: payload.restricted,
            visibility: given(payload.visibility),
            createdAt: payload.created_at === undefined ? undefined : new Date(payload.created_at)
          })
          return toApiUser(settings, created, doer)
        })
      )
      .handle("adminEditUser", ({ params, payload }) =>
        Effect.gen(function* () {
          const doer = yield* siteAdmin
          const target = yield* users.get(params.username)
          const updated = yield* admin.edit(target, {
            email: payload.email,
            fullName: payload.full_name,
            password: payload.password,
            mustChangePassword: payload.must_change_password,
            admin: payload.admin,
            active: payload.active,
            prohibitLogin: payload.prohibit_login,
            restricted: payload.restricted,
            visibility: given(payload.visibility),
            website: payload.website,
            location: payload.location,
            description: payload.description,
            pronouns: payload.pronouns,
            loginName: payload.login_name,
            sourceId: payload.source_id,
            maxRepoCreation: payload.max_repo_creation,
            allowCreateOrganization: payload.allow_create_organization,
            hideEmail: payload.hide_email
          })
          return toApiUser(settings, updated, doer)
        })
      )
      .handle("adminDeleteUser", ({ params, query }) =>
        Effect.gen(function* () {
          const doer = yield* siteAdmin
          const target = yield* users.get(params.username)
          yield* admin.remove(target, { purge: formBool(query.purge), doer: doer.user })
        })
      )
  })
)
