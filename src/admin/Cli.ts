// `hearth admin user create|change-password|list|delete|must-change-password|generate-access-token|
// reset-mfa`: account administration from the shell,
// as Forgejo's `forgejo admin user …`. Each command opens the configured database (creating the
// data directory and the schema on first use, so the first admin exists before the first start),
// does its work through the same services as the API, and closes it again.
import { Console, Data, Effect, Layer, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { CommandAppLayer } from "../App.ts"
import type { Settings } from "../config/Settings.ts"
import { statusOf } from "../http/Errors.ts"
import { describeStartupFailure, LogLevelLayer, logToStderr, reportInOneLine } from "../main.ts"
import { TokensService } from "../tokens/Service.ts"
import { TwoFactor } from "../twofa/Service.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { UsersService } from "../users/Service.ts"
import { AdminUsers } from "./Service.ts"

/** A refusal of the command itself (unknown user, conflicting flags), printed as it is. */
class Refused extends Data.TaggedError("Refused")<{ readonly message: string }> {}

/** The one line for a failure an operator can act on; `undefined` for a bug (reported in full). */
const describeFailure = (error: unknown): string | undefined => {
  if (error instanceof Refused) return error.message
  // API errors carry their message (422 invalid name, duplicate, …); 404 has none.
  const status = statusOf(error)
  if (status === 404) return "no such user"
  if (status !== undefined) return (error as { message: string }).message
  return describeStartupFailure(error)
}

const oneLineErrors = reportInOneLine(describeFailure)

type AppServices = Layer.Success<typeof CommandAppLayer>

const username = Flag.String("username").pipe(Flag.withAlias("u"))
const password = Flag.String("password").pipe(Flag.withAlias("p"))

/** Finds an individual account by name, e-mail or id; the ones given must agree (as Forgejo). */
const findUser = (by: { name?: string | undefined; email?: string | undefined; id?: number | undefined }) =>
  Effect.gen(function* () {
    const repo = yield* UsersRepo
    const found = yield* by.email !== undefined
      ? repo.findByEmail(by.email)
      : by.name !== undefined
        ? repo.findByName(by.name)
        : repo.findById(by.id ?? 0)
    const what =
      by.email !== undefined ? `email: ${by.email}` : by.name !== undefined ? `name: ${by.name}` : `id: ${by.id}`
    if (Option.isNone(found) || found.value.type !== "user") {
      return yield* new Refused({ message: `user does not exist [${what}]` })
    }
    const user = found.value
    if (by.name !== undefined && user.lowerName !== by.name.trim().toLowerCase()) {
      return yield* new Refused({ message: `the user with ${what} is ${user.name}, not ${by.name}` })
    }
    if (by.id !== undefined && user.id !== by.id) {
      return yield* new Refused({ message: `the user with ${what} has id ${user.id}, not ${by.id}` })
    }
    return user
  })

/** Columns padded to their widest cell, as `text/tabwriter` does for Forgejo's list. */
const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  return [header, ...rows]
    .map((cells) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]! + 1))).join(""))
    .join("\n")
}

/** The `admin` command tree; `settings` resolves the configuration given to the root command. */
export const adminCommand = <R>(settings: Effect.Effect<Layer.Layer<Settings, unknown>, never, R>) => {
  /** Runs `effect` against the application's services on the configured, migrated database. */
  const withApp = <A, E>(effect: Effect.Effect<A, E, AppServices>) =>
    oneLineErrors(
      Effect.gen(function* () {
        const layer = yield* settings
        return yield* Effect.provide(
          effect,
          CommandAppLayer.pipe(Layer.provideMerge(LogLevelLayer), Layer.provide(layer))
        )
      }).pipe(logToStderr)
    )

  const create = Command.make(
    "create",
    {
      username: username.pipe(Flag.withDescription("Name of the new account")),
      password: password.pipe(Flag.withDescription(`Its password (at least 8 characters)`)),
      email: Flag.String("email").pipe(Flag.withAlias("e"), Flag.withDescription("Its e-mail address")),
      admin: Flag.Boolean("admin").pipe(Flag.withDescription("Make it a site administrator"), Flag.withDefault(false)),
      mustChangePassword: Flag.Boolean("must-change-password").pipe(
        Flag.withDescription(
          "Whether it must change its password before using the API (default: true, except for the very first " +
            "account, as Forgejo); --must-change-password=false turns it off"
        ),
        Flag.optional
      ),
      fullName: Flag.String("full-name").pipe(Flag.withDescription("Its full name"), Flag.optional),
      restricted: Flag.Boolean("restricted").pipe(
        Flag.withDescription("Make it a restricted account"),
        Flag.withDefault(false)
      )
    },
    (input) =>
      withApp(
        Effect.gen(function* () {
          const admin = yield* AdminUsers
          // Forgejo: an account made by an admin must change its password, except the very first
          // one (the admin setting up the site), unless the flag says otherwise.
          const first = yield* admin.noAccounts
          const user = yield* admin.create({
            username: input.username,
            email: input.email,
            password: input.password,
            isAdmin: input.admin,
            mustChangePassword: Option.getOrElse(input.mustChangePassword, () => !first),
            fullName: Option.getOrUndefined(input.fullName),
            restricted: input.restricted
          })
          yield* Console.log(`New user '${user.name}' has been successfully created!`)
        })
      )
  ).pipe(
    Command.withDescription(
      "Create an account; works before the first start (creates the data directory and the database schema)"
    ),
    Command.withExamples([
      {
        command: "hearth admin user create --username root --password 'long secret' --email root@example.com --admin",
        description: "Create the first site administrator"
      }
    ])
  )

  const changePassword = Command.make(
    "change-password",
    {
      username: username.pipe(Flag.withDescription("Name of the account")),
      password: password.pipe(Flag.withDescription("Its new password (at least 8 characters)")),
      mustChangePassword: Flag.Boolean("must-change-password").pipe(
        Flag.withDescription(
          "Whether it must change the password again before using the API (default: false — Forgejo defaults to " +
            "true, but Hearth has no page where a user could change it)"
        ),
        Flag.withDefault(false)
      )
    },
    (input) =>
      withApp(
        Effect.gen(function* () {
          const users = yield* UsersService
          const user = yield* findUser({ name: input.username })
          yield* users.update(user, { password: input.password, must_change_password: input.mustChangePassword })
          yield* Console.log(`${user.name}'s password has been successfully updated!`)
        })
      )
  ).pipe(Command.withDescription("Set the password of an account"))

  const list = Command.make(
    "list",
    {
      admin: Flag.Boolean("admin").pipe(Flag.withDescription("List site administrators only"), Flag.withDefault(false))
    },
    (input) =>
      withApp(
        Effect.gen(function* () {
          const repo = yield* UsersRepo
          const twoFactor = yield* TwoFactor
          const all: Array<UserRow> = []
          for (let offset = 0; ; offset += 500) {
            const { rows } = yield* repo.list("user", 500, offset)
            all.push(...rows)
            if (rows.length < 500) break
          }
          if (input.admin) {
            const rows = all.filter((u) => u.isAdmin).map((u) => [String(u.id), u.name, u.email, String(u.isActive)])
            yield* Console.log(table(["ID", "Username", "Email", "IsActive"], rows))
            return
          }
          const rows: Array<Array<string>> = []
          for (const u of all) {
            const enrolled = yield* twoFactor.isEnabled(u.id)
            rows.push([String(u.id), u.name, u.email, String(u.isActive), String(u.isAdmin), String(enrolled)])
          }
          yield* Console.log(table(["ID", "Username", "Email", "IsActive", "IsAdmin", "2FA"], rows))
        })
      )
  ).pipe(Command.withDescription("List the accounts (organizations excluded)"))

  const remove = Command.make(
    "delete",
    {
      username: username.pipe(Flag.withDescription("Name of the account to delete"), Flag.optional),
      id: Flag.Int("id").pipe(Flag.withDescription("Id of the account to delete"), Flag.optional),
      email: Flag.String("email").pipe(
        Flag.withAlias("e"),
        Flag.withDescription("E-mail address of the account to delete"),
        Flag.optional
      ),
      purge: Flag.Boolean("purge").pipe(
        Flag.withDescription(
          "Also remove what it owns and belongs to: organizations it alone owns, memberships, tokens, second factor"
        ),
        Flag.withDefault(false)
      )
    },
    (input) =>
      withApp(
        Effect.gen(function* () {
          const by = {
            name: Option.getOrUndefined(input.username),
            id: Option.getOrUndefined(input.id),
            email: Option.getOrUndefined(input.email)
          }
          if (by.name === undefined && by.id === undefined && by.email === undefined) {
            return yield* new Refused({ message: "give the account to delete with --username, --id or --email" })
          }
          const admin = yield* AdminUsers
          const user = yield* findUser(by)
          yield* admin.remove(user, { purge: input.purge })
          yield* Console.log(`User '${user.name}' has been deleted.`)
        })
      )
  ).pipe(
    Command.withDescription("Delete an account (refused while it still belongs to an organization, unless --purge)")
  )

  const mustChangePassword = Command.make(
    "must-change-password",
    {
      usernames: Argument.String("username").pipe(
        Argument.withDescription("Names of the accounts (or --all)"),
        Argument.variadic()
      ),
      all: Flag.Boolean("all").pipe(
        Flag.withAlias("A"),
        Flag.withDescription("Every account (organizations excluded)"),
        Flag.withDefault(false)
      ),
      exclude: Flag.String("exclude").pipe(
        Flag.withAlias("e"),
        Flag.withDescription("With --all: leave this account out (repeat for more)"),
        Flag.atLeast(0)
      ),
      unset: Flag.Boolean("unset").pipe(
        Flag.withDescription("Take the requirement away instead of setting it"),
        Flag.withDefault(false)
      )
    },
    (input) =>
      withApp(
        Effect.gen(function* () {
          const users = yield* UsersService
          const repo = yield* UsersRepo
          if (input.all === input.usernames.length > 0) {
            return yield* new Refused({ message: "name the accounts, or give --all (not both)" })
          }
          const targets: Array<UserRow> = []
          if (input.all) {
            const excluded = new Set(input.exclude.map((name) => name.trim().toLowerCase()))
            for (let offset = 0; ; offset += 500) {
              const { rows } = yield* repo.list("user", 500, offset)
              targets.push(...rows.filter((u) => !excluded.has(u.lowerName)))
              if (rows.length < 500) break
            }
          } else {
            // All names are checked before any account changes.
            for (const name of input.usernames) targets.push(yield* findUser({ name }))
          }
          for (const user of targets) yield* users.update(user, { must_change_password: !input.unset })
          yield* Console.log(`Updated ${targets.length} users setting MustChangePassword to ${!input.unset}`)
        })
      )
  ).pipe(
    Command.withDescription(
      "Require accounts to set a new password before they use the API (or, with --unset, no longer require it)"
    ),
    Command.withExamples([
      { command: "hearth admin user must-change-password alice bob", description: "Two accounts" },
      { command: "hearth admin user must-change-password --all --exclude root", description: "Everyone but root" }
    ])
  )

  const generateAccessToken = Command.make(
    "generate-access-token",
    {
      username: username.pipe(Flag.withDescription("Name of the account the token acts as")),
      tokenName: Flag.String("token-name").pipe(
        Flag.withAlias("t"),
        Flag.withDescription("A name for the token, unique among the account's tokens"),
        Flag.withDefault("gitea-admin")
      ),
      scopes: Flag.String("scopes").pipe(
        Flag.withDescription(
          'Comma-separated scopes, e.g. "all", "read:repository,write:issue", "public-only,read:user" ' +
            "(the same as the API's token scopes)"
        ),
        Flag.withDefault("all")
      ),
      raw: Flag.Boolean("raw").pipe(
        Flag.withDescription("Print the token alone (for scripts)"),
        Flag.withDefault(false)
      )
    },
    (input) =>
      withApp(
        Effect.gen(function* () {
          const tokens = yield* TokensService
          const user = yield* findUser({ name: input.username })
          const scopes = input.scopes
            .split(",")
            .map((scope) => scope.trim())
            .filter((scope) => scope !== "")
          const created = yield* tokens.create(user, { name: input.tokenName, scopes })
          // Shown once: only its hash is kept.
          yield* Console.log(input.raw ? created.token : `Access token was successfully created: ${created.token}`)
        })
      )
  ).pipe(
    Command.withDescription("Create an access token for an account and print it (it is shown this once only)"),
    Command.withExamples([
      {
        command:
          "hearth admin user generate-access-token --username ci --token-name deploy --scopes write:repository --raw",
        description: "A token for a CI account, printed alone"
      }
    ])
  )

  const resetMfa = Command.make(
    "reset-mfa",
    { username: username.pipe(Flag.withDescription("Name of the account whose second factor goes")) },
    (input) =>
      withApp(
        Effect.gen(function* () {
          const twoFactor = yield* TwoFactor
          const user = yield* findUser({ name: input.username })
          yield* twoFactor.disable(user.id)
          yield* Console.log(`${user.name}'s two factor authentication settings have been removed!`)
        })
      )
  ).pipe(
    Command.withDescription(
      "Remove an account's two-factor authentication (a user who lost their authenticator signs in with the password alone)"
    )
  )

  const user = Command.make("user").pipe(
    Command.withDescription("Manage user accounts"),
    Command.withSubcommands([create, changePassword, list, remove, mustChangePassword, generateAccessToken, resetMfa])
  )

  return Command.make("admin").pipe(
    Command.withDescription(
      "Administer the site from the shell (with the embedded database, stop the server first: it holds the data directory)"
    ),
    Command.withSubcommands([user])
  )
}
