// Account rules shared by the admin API, the CLI and sign-up: valid and unreserved names,
// valid and unique e-mails, argon2id passwords, and the cache of authenticated callers.
import { Context, Effect, Layer, Option } from "effect"
import { Authenticator } from "../auth/Authenticator.ts"
import { Settings } from "../config/Settings.ts"
import type { AlreadyExists } from "../db/Boundary.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import type { Page } from "../http/Pagination.ts"
import { userNameProblem } from "../lib/Names.ts"
import { hashPassword, MIN_PASSWORD_LENGTH } from "./Password.ts"
import { AccountPolicy } from "./Policy.ts"
import { type UserRow, type UserSort, UsersRepo, type UserWrite, type Visibility } from "./Repo.ts"
import { ACTIONS_USER_ID, actionsUser, GHOST_USER_ID, ghostUser } from "./Schema.ts"

const VALID_EMAIL = /^[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)+$/
export const emailProblem = (email: string): string | undefined =>
  email.length === 0
    ? "[Email]: Required"
    : email.length > 254 || !VALID_EMAIL.test(email)
      ? `[Email]: e-mail invalid [email: ${email}]`
      : undefined

export interface NewAccount {
  readonly username: string
  readonly email: string
  readonly password?: string | undefined
  readonly fullName?: string | undefined
  readonly isAdmin?: boolean | undefined
  readonly mustChangePassword?: boolean | undefined
  readonly visibility?: Visibility | undefined
  readonly loginName?: string | undefined
  readonly sourceId?: number | undefined
  readonly restricted?: boolean | undefined
  /** An explicit creation time (accounts migrated from elsewhere); now when absent. */
  readonly createdAt?: Date | undefined
}

const sorts: ReadonlyArray<UserSort> = [
  "oldest",
  "newest",
  "alphabetically",
  "reversealphabetically",
  "recentupdate",
  "leastupdate"
]

/** Forgejo's `sort` parameter: an unknown or missing value sorts alphabetically. */
export const parseSort = (value: string | undefined): UserSort =>
  sorts.includes(value as UserSort) ? (value as UserSort) : "alphabetically"

export interface UserQuery {
  /** Individual users (the default), or organizations (the web's explore page). */
  readonly type?: "user" | "organization" | undefined
  /** Substring of the name, full name or (where the viewer may see it) e-mail. */
  readonly keyword?: string | undefined
  /** -1 and -2 answer Forgejo's Ghost and Actions users; a positive id filters by id. */
  readonly uid?: number | undefined
  readonly sort: UserSort
  readonly loginName?: string | undefined
  readonly sourceId?: number | undefined
}

export type AccountChanges = Omit<UserWrite, "passwd_hash" | "type" | "name" | "created_at" | "updated_at"> & {
  readonly password?: string | undefined
}

export class UsersService extends Context.Service<
  UsersService,
  {
    readonly create: (input: NewAccount) => Effect.Effect<UserRow, Errors.ValidationFailed>
    readonly update: (user: UserRow, changes: AccountChanges) => Effect.Effect<UserRow, Errors.ValidationFailed>
    readonly remove: (user: UserRow) => Effect.Effect<void>
    /** Finds an account by name, or 404. */
    readonly get: (name: string) => Effect.Effect<UserRow, Errors.NotFound>
    /**
     * The account a `/users/{name}/…` path names, as `viewer` may see it (AccountPolicy): the one
     * look-up of every such route, so an account hidden from the viewer (private; limited, to
     * anonymous and restricted callers) is the same empty 404 as an unknown name on all of them.
     * A public-only token reaching a non-public account it may otherwise see is 403, as Forgejo.
     */
    readonly visible: (
      viewer: Principal | undefined,
      name: string
    ) => Effect.Effect<UserRow, Errors.NotFound | Errors.Forbidden>
    /**
     * The new name of the account that was called `name` before a rename (src/users/Rename.ts),
     * when no account holds `name` now and `viewer` may see the renamed one (Forgejo's
     * `LookupUserRedirect`; Hearth does not tell a hidden account's new name): the one rule behind
     * every redirect of an old name, API (src/users/Assignment.ts) and web profile alike.
     */
    readonly movedTo: (viewer: Principal | undefined, name: string) => Effect.Effect<Option.Option<string>>
    /**
     * The user a commit's e-mail belongs to (Forgejo's `GetUserByEmail`): its address, or its
     * no-reply address (`{login}@{NO_REPLY_ADDRESS}`, what Hearth writes for a hidden e-mail).
     */
    readonly byCommitEmail: (email: string) => Effect.Effect<Option.Option<UserRow>>
    /**
     * Individual users (or, with `type`, organizations) the viewer may see (Forgejo's user `Search`,
     * `GET /users/search`), one page and the total.
     */
    readonly search: (
      viewer: Principal | undefined,
      query: UserQuery,
      page: Page
    ) => Effect.Effect<{ rows: ReadonlyArray<UserRow>; total: number }>
  }
>()("hearth/users/UsersService") {
  static readonly layer = Layer.effect(
    UsersService,
    Effect.gen(function* () {
      const repo = yield* UsersRepo
      const authenticator = yield* Authenticator
      const policy = yield* AccountPolicy
      const noReplySuffix = `@${(yield* Settings).service.NO_REPLY_ADDRESS.toLowerCase()}`

      const invalid = (message: string) => Effect.fail(Errors.validationFailed(message))
      const checkPassword = (password: string) =>
        password.length < MIN_PASSWORD_LENGTH
          ? invalid(`[Password]: password is too short: at least ${MIN_PASSWORD_LENGTH} characters are needed`)
          : Effect.void
      const checkEmailFree = (email: string, self?: number) =>
        Effect.flatMap(repo.emailHolders(email), (holders) =>
          holders.some((id) => id !== self) ? invalid(`e-mail already in use [email: ${email}]`) : Effect.void
        )
      // A concurrent insert can still win the race: the unique index answers for it.
      const uniqueAsValidation = <A>(name: string, effect: Effect.Effect<A, AlreadyExists>) =>
        Effect.catchTag(effect, "AlreadyExists", () => invalid(`user already exists [name: ${name}]`))

      // Eager: a cached row (an effect already complete) is answered without a step of its own.
      const found = Option.match({
        onNone: () => Effect.fail(Errors.notFound()),
        onSome: (user: UserRow) => Effect.succeed(user)
      })
      const get = (name: string) => Effect.flatMapEager(repo.findByName(name), found)

      return UsersService.of({
        create: (input) =>
          Effect.gen(function* () {
            const problem = userNameProblem(input.username) ?? emailProblem(input.email)
            if (problem !== undefined) return yield* invalid(problem)
            if (Option.isSome(yield* repo.findByName(input.username))) {
              return yield* invalid(`user already exists [name: ${input.username}]`)
            }
            yield* checkEmailFree(input.email)
            const password = input.password ?? ""
            if (password !== "") yield* checkPassword(password)
            const values: UserWrite & { name: string } = {
              name: input.username,
              email: input.email,
              full_name: input.fullName ?? "",
              passwd_hash: password === "" ? "" : yield* hashPassword(password),
              must_change_password: input.mustChangePassword ?? false,
              is_admin: input.isAdmin ?? false,
              visibility: input.visibility ?? "public",
              login_name: input.loginName ?? input.username,
              source_id: input.sourceId ?? 0,
              restricted: input.restricted ?? false,
              ...(input.createdAt === undefined ? {} : { created_at: input.createdAt, updated_at: input.createdAt })
            }
            return yield* uniqueAsValidation(input.username, repo.insert(values))
          }),
        update: (user, changes) =>
          Effect.gen(function* () {
            const { password, ...rest } = changes
            if (rest.email !== undefined) {
              const problem = emailProblem(rest.email)
              if (problem !== undefined) return yield* invalid(problem)
              yield* checkEmailFree(rest.email, user.id)
            }
            const values: UserWrite = { ...rest }
            if (password !== undefined) {
              yield* checkPassword(password)
              Object.assign(values, { passwd_hash: yield* hashPassword(password) })
            }
            const updated = yield* uniqueAsValidation(user.name, repo.update(user.id, values))
            yield* authenticator.invalidate
            return updated
          }),
        remove: (user) => Effect.andThen(repo.remove(user.id), authenticator.invalidate),
        get,
        visible: (viewer, name) =>
          // Eager: a public account (the policy's check already complete) costs no step.
          Effect.flatMapEager(get(name), (user) => Effect.mapEager(policy.ensureVisible(viewer, user), () => user)),
        movedTo: (viewer, name) =>
          Effect.gen(function* () {
            if (Option.isSome(yield* repo.findByName(name))) return Option.none()
            const id = yield* repo.redirectOf(name)
            if (Option.isNone(id)) return Option.none()
            const account = yield* repo.findById(id.value)
            if (Option.isNone(account)) return Option.none()
            const seen = yield* Effect.isSuccess(policy.ensureVisible(viewer, account.value))
            return seen ? Option.some(account.value.name) : Option.none()
          }),
        byCommitEmail: (email) =>
          Effect.gen(function* () {
            if (email === "") return Option.none()
            const found = yield* repo.findByEmail(email)
            const lower = email.toLowerCase()
            if (Option.isSome(found) || !lower.endsWith(noReplySuffix)) return found
            const login = lower.slice(0, -noReplySuffix.length)
            // findByName takes any name: a login never holds "@" or "/", and organizations commit nothing.
            if (!/^[\w.-]+$/.test(login)) return Option.none()
            return Option.filter(yield* repo.findByName(login), (user) => user.type === "user")
          }),
        search: (viewer, query, page) => {
          // The two system accounts exist in no table; Forgejo answers them for their ids alone.
          if (query.uid === GHOST_USER_ID) return Effect.succeed({ rows: [ghostUser], total: 1 })
          if (query.uid === ACTIONS_USER_ID) return Effect.succeed({ rows: [actionsUser], total: 1 })
          return repo.search({
            type: query.type ?? "user",
            keyword: query.keyword,
            id: query.uid !== undefined && query.uid > 0 ? query.uid : undefined,
            visibilities: policy.visibleLevels(viewer),
            viewerId: viewer?.user.id,
            // A public-only token sees public accounts only, its own included (Forgejo ANDs the two).
            viewerIncluded: viewer?.scopes?.publicOnly !== true,
            viewerIsAdmin: viewer?.user.isAdmin === true,
            loginName: query.loginName,
            sourceId: query.sourceId,
            sort: query.sort,
            limit: page.limit,
            offset: page.offset
          })
        }
      })
    })
  )
}
