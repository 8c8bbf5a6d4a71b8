// Account administration shared by the /admin/users routes and the `hearth admin user` commands:
// Forgejo's defaults and refusals on top of the account rules of UsersService.
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { transaction as sqlTransaction } from "../db/Boundary.ts"
import * as Errors from "../http/Errors.ts"
import type { Page } from "../http/Pagination.ts"
import { OrgsService } from "../orgs/Service.ts"
import { PackagesRepo } from "../packages/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import { MIN_PASSWORD_LENGTH } from "../users/Password.ts"
import { type UserRow, UsersRepo, type Visibility } from "../users/Repo.ts"
import { type AccountChanges, type UserQuery, UsersService } from "../users/Service.ts"
import { AdminRepo } from "./Repo.ts"

export interface AdminNewAccount {
  readonly username: string
  readonly email: string
  /** Optional: an account without one cannot sign in with a password until one is set. */
  readonly password?: string | undefined
  readonly fullName?: string | undefined
  readonly loginName?: string | undefined
  readonly sourceId?: number | undefined
  /** Forgejo's default is true: an account made by an admin changes its password first. */
  readonly mustChangePassword?: boolean | undefined
  readonly restricted?: boolean | undefined
  readonly visibility?: Visibility | undefined
  readonly isAdmin?: boolean | undefined
  readonly createdAt?: Date | undefined
}

/** Forgejo's EditUserOption, as far as Hearth stores it (absent = unchanged). */
export interface AdminAccountEdit {
  readonly email?: string | undefined
  readonly fullName?: string | undefined
  readonly password?: string | undefined
  readonly mustChangePassword?: boolean | undefined
  readonly admin?: boolean | undefined
  readonly active?: boolean | undefined
  readonly prohibitLogin?: boolean | undefined
  readonly restricted?: boolean | undefined
  readonly visibility?: Visibility | undefined
  readonly website?: string | undefined
  readonly location?: string | undefined
  readonly description?: string | undefined
  readonly pronouns?: string | undefined
  readonly loginName?: string | undefined
  readonly sourceId?: number | undefined
  readonly maxRepoCreation?: number | undefined
  readonly allowCreateOrganization?: boolean | undefined
  readonly hideEmail?: boolean | undefined
}

export interface RemoveOptions {
  /** Also remove what the account owns or belongs to (Forgejo's `purge`). */
  readonly purge: boolean
  /** The admin asking, when there is one (the API); the CLI has none. */
  readonly doer?: UserRow | undefined
}

const shortPassword = () => Errors.badRequest(`password must be at least ${MIN_PASSWORD_LENGTH} characters`)

// Hearth has no external authentication sources (LDAP, OAuth2, …) yet: 0, local, is the only one.
const checkSource = (sourceId: number | undefined) =>
  sourceId === undefined || sourceId === 0
    ? Effect.void
    : Effect.fail(Errors.validationFailed(`login source does not exist [id: ${sourceId}]`))

const notAnOrganization = (user: UserRow) =>
  user.type === "organization"
    ? Effect.fail(Errors.validationFailed(`${user.name} is an organization not a user`))
    : Effect.void

export class AdminUsers extends Context.Service<
  AdminUsers,
  {
    readonly create: (input: AdminNewAccount) => Effect.Effect<UserRow, Errors.ValidationFailed | Errors.BadRequest>
    /** Every individual account, whatever its visibility (admins see all). */
    readonly list: (query: UserQuery, page: Page) => Effect.Effect<{ rows: ReadonlyArray<UserRow>; total: number }>
    readonly edit: (
      target: UserRow,
      changes: AdminAccountEdit
    ) => Effect.Effect<UserRow, Errors.ValidationFailed | Errors.BadRequest>
    readonly remove: (target: UserRow, options: RemoveOptions) => Effect.Effect<void, Errors.ValidationFailed>
    /** Whether no account exists yet (the CLI's first admin). */
    readonly noAccounts: Effect.Effect<boolean>
  }
>()("hearth/admin/AdminUsers") {
  static readonly layer = Layer.effect(
    AdminUsers,
    Effect.gen(function* () {
      const transaction = sqlTransaction(yield* SqlClient)
      const users = yield* UsersService
      const usersRepo = yield* UsersRepo
      const repo = yield* AdminRepo
      const orgs = yield* OrgsService
      const repositories = yield* ReposService
      const packages = yield* PackagesRepo

      const isLastAdmin = (user: UserRow) =>
        user.isAdmin ? Effect.map(usersRepo.countAdmins, (n) => n <= 1) : Effect.succeed(false)

      return AdminUsers.of({
        create: (input) =>
          Effect.gen(function* () {
            // Forgejo checks the password before the names: a bad one is a 400, as in Forgejo.
            if (input.password !== undefined && input.password !== "" && input.password.length < MIN_PASSWORD_LENGTH) {
              return yield* shortPassword()
            }
            yield* checkSource(input.sourceId)
            return yield* users.create({
              username: input.username,
              email: input.email,
              password: input.password === "" ? undefined : input.password,
              fullName: input.fullName,
              loginName: input.loginName === undefined || input.loginName === "" ? undefined : input.loginName,
              sourceId: input.sourceId,
              mustChangePassword: input.mustChangePassword ?? true,
              restricted: input.restricted,
              visibility: input.visibility,
              isAdmin: input.isAdmin,
              createdAt: input.createdAt
            })
          }),
        list: (query, page) =>
          usersRepo.search({
            type: "user",
            keyword: query.keyword,
            visibilities: ["public", "limited", "private"],
            viewerIsAdmin: true,
            loginName: query.loginName,
            sourceId: query.sourceId,
            sort: query.sort,
            limit: page.limit,
            offset: page.offset
          }),
        edit: (target, edit) =>
          Effect.gen(function* () {
            yield* notAnOrganization(target)
            // Forgejo: the pair identifies the account at its source, so one without the other is refused.
            if ((edit.sourceId === undefined) !== (edit.loginName === undefined)) {
              return yield* Errors.validationFailed("source_id and login_name must be specified together")
            }
            yield* checkSource(edit.sourceId)
            const password = edit.password === "" ? undefined : edit.password
            if (password !== undefined && password.length < MIN_PASSWORD_LENGTH) return yield* shortPassword()
            if (edit.maxRepoCreation !== undefined && edit.maxRepoCreation < -1) {
              return yield* Errors.validationFailed(
                "[MaxRepoCreation]: must be -1 (use the global limit), 0 (none) or a positive number"
              )
            }
            if (edit.admin === false && (yield* isLastAdmin(target))) {
              return yield* Errors.badRequest(
                `the last admin user cannot lose its admin rights [uid: ${target.id}]: make another user an admin first`
              )
            }
            const changes: AccountChanges = {
              ...(edit.email === undefined ? {} : { email: edit.email }),
              ...(edit.fullName === undefined ? {} : { full_name: edit.fullName }),
              ...(password === undefined ? {} : { password }),
              ...(edit.mustChangePassword === undefined ? {} : { must_change_password: edit.mustChangePassword }),
              ...(edit.admin === undefined ? {} : { is_admin: edit.admin }),
              ...(edit.active === undefined ? {} : { is_active: edit.active }),
              ...(edit.prohibitLogin === undefined ? {} : { prohibit_login: edit.prohibitLogin }),
              ...(edit.restricted === undefined ? {} : { restricted: edit.restricted }),
              ...(edit.visibility === undefined ? {} : { visibility: edit.visibility }),
              ...(edit.website === undefined ? {} : { website: edit.website }),
              ...(edit.location === undefined ? {} : { location: edit.location }),
              ...(edit.description === undefined ? {} : { description: edit.description }),
              ...(edit.pronouns === undefined ? {} : { pronouns: edit.pronouns }),
              ...(edit.loginName === undefined ? {} : { login_name: edit.loginName }),
              ...(edit.sourceId === undefined ? {} : { source_id: edit.sourceId }),
              ...(edit.maxRepoCreation === undefined ? {} : { max_repo_creation: edit.maxRepoCreation }),
              ...(edit.allowCreateOrganization === undefined
                ? {}
                : { allow_create_organization: edit.allowCreateOrganization }),
              ...(edit.hideEmail === undefined ? {} : { keep_email_private: edit.hideEmail })
            }
            // Forgejo answers a refused e-mail or password of an edit with 400 (422 is for creation).
            return yield* Effect.mapError(users.update(target, changes), (e) => Errors.badRequest(e.message))
          }),
        remove: (target, options) =>
          Effect.gen(function* () {
            yield* notAnOrganization(target)
            if (options.doer !== undefined && options.doer.id === target.id) {
              return yield* Errors.validationFailed("you cannot delete yourself")
            }
            if (yield* isLastAdmin(target)) {
              return yield* Errors.validationFailed(`can not delete the last admin user [uid: ${target.id}]`)
            }
            if (options.purge) {
              // Repositories first, each with its directory: disk work stays out of the account's
              // transaction, and a purge that stops half-way can simply be run again.
              yield* repositories.removeAllOwnedBy(target)
              for (const org of yield* repo.soleOwnedOrgs(target.id)) {
                yield* repositories.removeAllOwnedBy(org)
              }
            } else if ((yield* repositories.countOwnedBy(target)) > 0) {
              return yield* Errors.validationFailed(
                `user still has ownership of repositories [uid: ${target.id}]: ` +
                  "delete or transfer them first, or delete the user with purge"
              )
            }
            // Forgejo's ErrUserOwnPackages; a purge deletes them with the account (foreign keys cascade).
            if (!options.purge && (yield* packages.ownerHasPackages(target.id))) {
              return yield* Errors.validationFailed(
                `user still has ownership of packages [uid: ${target.id}]: delete them first, or delete the user with purge`
              )
            }
            // One transaction: a refusal, or a failure half-way, leaves the account as it was.
            yield* transaction(
              Effect.gen(function* () {
                if (options.purge) {
                  // As Forgejo: organizations the user alone owns go with it; other memberships,
                  // tokens and the second factor are removed with the account (foreign keys cascade).
                  for (const org of yield* repo.soleOwnedOrgs(target.id)) yield* orgs.remove(org)
                } else if ((yield* repo.countOrgMemberships(target.id)) > 0) {
                  return yield* Errors.validationFailed(
                    `user still has membership of organizations [uid: ${target.id}]: ` +
                      "remove it from them first, or delete it with purge"
                  )
                }
                yield* repositories.releaseCountsOfUser(target) // its stars and watches go with it
                yield* users.remove(target)
              })
            )
          }),
        noAccounts: repo.noAccounts
      })
    })
  )
}
