import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { Settings } from "../config/Settings.ts"
import { EmailsService } from "../emails/Service.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { formatTime } from "../http/Json.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { CronTasks } from "../jobs/Cron.ts"
import { KeysService } from "../keys/Service.ts"
import { toApiOrg } from "../orgs/Schema.ts"
import { OrgsService } from "../orgs/Service.ts"
import { RepoPresenter } from "../repos/Present.ts"
import { ReposService } from "../repos/Service.ts"
import { AccountRename } from "../users/Rename.ts"
import type { UserRow } from "../users/Repo.ts"
import { toApiUser } from "../users/Schema.ts"
import { parseSort, UsersService } from "../users/Service.ts"
import { siteAdmin } from "./Policy.ts"
import { AdminUsers } from "./Service.ts"
import { AdminSite } from "./Site.ts"

/** Forgejo's `FormBool`: "true", "1", "t", … are true; anything else false. */
const formBool = (value: string | undefined) => ["1", "t", "true"].includes((value ?? "").trim().toLowerCase())

/** "" means "not given", as Go clients send it. */
const given = <A extends string>(value: A | undefined): Exclude<A, ""> | undefined =>
  value === "" ? undefined : (value as Exclude<A, ""> | undefined)

export const AdminUsersHttp = apiGroup(HearthApi, "adminUsers", (handlers) =>
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

const OWNER_ACCESS = { mode: "owner", code: "owner" } as const

/** `POST /admin/users/{u}/…` on an organization where Forgejo wants an individual account. */
const individual = (user: UserRow) =>
  user.type === "organization"
    ? Effect.fail(Errors.validationFailed(`${user.name} is an organization not a user`))
    : Effect.succeed(user)

export const AdminHttp = apiGroup(HearthApi, "admin", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const users = yield* UsersService
    const orgs = yield* OrgsService
    const repos = yield* ReposService
    const presenter = yield* RepoPresenter
    const keys = yield* KeysService
    const emails = yield* EmailsService
    const renamer = yield* AccountRename
    const site = yield* AdminSite
    const cron = yield* CronTasks
    const root = settings.server.ROOT_URL

    return handlers
      .handle("adminCreateOrg", ({ params, payload }) =>
        Effect.gen(function* () {
          const doer = yield* siteAdmin
          const owner = yield* individual(yield* users.get(params.username))
          return toApiOrg(settings, yield* orgs.create(owner, payload), doer)
        })
      )
      .handle("adminCreateRepo", ({ params, payload }) =>
        Effect.gen(function* () {
          const doer = yield* siteAdmin
          const owner = yield* users.get(params.username)
          const repo = yield* repos.create(owner, payload, doer.user)
          return yield* presenter.one(doer, { repo, owner, access: OWNER_ACCESS })
        })
      )
      .handle("adminCreatePublicKey", ({ params, payload }) =>
        Effect.gen(function* () {
          const doer = yield* siteAdmin
          const owner = yield* individual(yield* users.get(params.username))
          // The key is the account's, as if it had added it itself.
          const key = yield* keys.create({ ...doer, user: owner }, payload)
          return {
            id: key.id,
            key: key.content,
            url: `${root}api/v1/user/keys/${key.id}`,
            title: key.name,
            fingerprint: key.fingerprint,
            created_at: formatTime(key.createdAt),
            user: toApiUser(settings, owner, doer),
            key_type: key.keyType
          }
        })
      )
      .handle("adminDeleteUserPublicKey", ({ params }) =>
        Effect.gen(function* () {
          const doer = yield* siteAdmin
          const owner = yield* users.get(params.username)
          // Forgejo's DeletePublicKey with the account as the doer: another account's key is 403.
          yield* keys.remove({ ...doer, user: owner }, params.id)
        })
      )
      .handle("adminRenameUser", ({ params, payload }) =>
        Effect.gen(function* () {
          const doer = yield* siteAdmin
          const user = yield* individual(yield* users.get(params.username))
          yield* renamer.rename(user, payload.new_username, {
            taken: () => "The username is already taken.",
            doer: doer.user
          })
        })
      )
      .handle("adminListUserEmails", ({ params }) =>
        Effect.gen(function* () {
          yield* siteAdmin
          return yield* emails.list(yield* users.get(params.username))
        })
      )
      .handle("adminDeleteUserEmails", ({ params, payload }) =>
        Effect.gen(function* () {
          yield* siteAdmin
          yield* emails.remove(yield* users.get(params.username), payload.emails ?? [])
        })
      )
      .handle("adminGetAllEmails", ({ query }) => listEmails("", query))
      .handle("adminSearchEmails", ({ query }) => listEmails((query.q ?? "").trim(), query))
      .handle("adminGetAllOrgs", ({ query }) =>
        Effect.gen(function* () {
          const doer = yield* siteAdmin
          const page = yield* resolvePage(query)
          const { rows, total } = yield* orgs.list({ visibilities: [], all: true }, page)
          yield* setListHeaders(page, total, { withLink: true })
          return rows.map((o) => toApiOrg(settings, o, doer))
        })
      )
      .handle("adminCronList", ({ query }) =>
        Effect.gen(function* () {
          yield* siteAdmin
          const page = yield* resolvePage(query)
          const all = yield* cron.list
          yield* setListHeaders(page, all.length)
          return all.slice(page.offset, page.offset + page.limit).map((task) => ({
            name: task.name,
            schedule: task.schedule,
            next: formatTime(task.next),
            prev: formatTime(task.prev),
            exec_times: task.execTimes
          }))
        })
      )
      .handle("adminCronRun", ({ params }) =>
        Effect.gen(function* () {
          yield* siteAdmin
          yield* cron.run(params.task)
        })
      )
      .handle("adminUnadoptedList", ({ query }) =>
        Effect.gen(function* () {
          yield* siteAdmin
          const page = yield* resolvePage(query)
          const { rows, total } = yield* site.unadopted((query.pattern ?? "").trim(), page)
          yield* setListHeaders(page, total)
          return rows
        })
      )
      .handle("adminAdoptRepository", ({ params }) =>
        Effect.gen(function* () {
          const doer = yield* siteAdmin
          yield* site.adopt(params.owner, params.repo, doer.user)
        })
      )
      .handle("adminDeleteUnadoptedRepository", ({ params }) =>
        Effect.gen(function* () {
          yield* siteAdmin
          yield* site.removeUnadopted(params.owner, params.repo)
        })
      )

    function listEmails(
      keyword: string,
      query: { readonly page?: string | undefined; readonly limit?: string | undefined }
    ) {
      return Effect.gen(function* () {
        yield* siteAdmin
        const page = yield* resolvePage(query)
        const { rows, total } = yield* site.searchEmails(keyword, page)
        yield* setListHeaders(page, total, { withLink: true })
        return rows.map((r) => ({
          email: r.email,
          verified: r.verified,
          primary: r.primary,
          user_id: r.userId,
          username: r.username
        }))
      })
    }
  })
)
