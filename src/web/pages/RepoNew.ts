// A new repository from the browser, `/repo/create` (Forgejo's `routers/web/repo/repo.go`
// `Create`/`CreatePost`): the owner (the user, or an organization they may create repositories
// in, preselected by `?org={id}` as Forgejo's "New repository" link of an organization does), the
// name and description, private, and the initial commit's templates. The repository is made by
// ReposService.create, as `POST /user/repos` and `POST /orgs/{org}/repos` make it (quota, events).
import { Effect } from "effect"
import { OrgsService } from "../../orgs/Service.ts"
import type { CreateRepoOption } from "../../repos/Schema.ts"
import { ReposService } from "../../repos/Service.ts"
import { gitignoreTemplates, labelTemplates, licenseTemplates } from "../../templates/Service.ts"
import type { UserRow } from "../../users/Repo.ts"
import { checkbox, type FieldErrors, field, fieldOfMessage, formError, select, textArea } from "../Form.ts"
import { html } from "../Html.ts"
import { icon } from "../Icons.ts"
import { csrfField } from "../Layout.ts"
import { repoBase } from "../RepoFrame.ts"
import type { Form, Web, WebContext } from "../Web.ts"

/** Which field a refusal of ReposService.create concerns (Forgejo's `[Field]:` form, or its words). */
const FIELDS = { name: "repo_name", description: "description", defaultbranch: "default_branch" }
const fieldOf = (message: string): string | undefined =>
  fieldOfMessage(message, FIELDS) ??
  (/^name |repository with the same name|already exists|repository files already exist/.test(message)
    ? "repo_name"
    : /^gitignore/i.test(message)
      ? "gitignores"
      : /^license/i.test(message)
        ? "license"
        : /^label/i.test(message)
          ? "issue_labels"
          : /branch/i.test(message)
            ? "default_branch"
            : undefined)

/** What was typed, kept when the form is refused. */
type Typed = Readonly<Record<string, string>>

const NONE = [["", "None"]] as const

export const RepoNewPages = (web: Web) =>
  Effect.gen(function* () {
    const repos = yield* ReposService
    const orgs = yield* OrgsService

    /** The owners the form offers: the user first, then the organizations they may create in. */
    const ownersOf = (user: UserRow) => Effect.map(orgs.repoOwnersFor(user), (list) => [user, ...list])

    const createPage = (
      ctx: WebContext,
      owners: ReadonlyArray<UserRow>,
      typed: Typed,
      errors: FieldErrors,
      message?: string
    ) => {
      const refused = message !== undefined || Object.keys(errors).length > 0
      const value = (name: string, fallback = "") => typed[name] ?? fallback
      return web.page(
        ctx,
        { title: "New repository", ...(refused ? { status: 422 } : {}) },
        html`<div class="container-md p-responsive py-6">
  <h1 class="h2 mb-3">${icon("repo", 24)} New repository</h1>
  ${formError(message)}
  <form method="post" action="/repo/create" data-testid="repo-create-form">
    ${csrfField(ctx)}
    ${select(
      {
        name: "uid",
        label: "Owner",
        value: value("uid", String(owners[0]!.id)),
        choices: owners.map((owner) => [String(owner.id), owner.name] as const)
      },
      errors
    )}
    ${field({ name: "repo_name", label: "Repository name", value: value("repo_name"), required: true, autofocus: true, autocomplete: "off", hint: "Letters, digits, dashes, underscores and dots." }, errors)}
    ${textArea({ name: "description", label: "Description", value: value("description"), rows: 2 }, errors)}
    ${checkbox({ name: "private", label: "Private", checked: typed.private === "on", hint: "Only the owner, collaborators and teams with access see a private repository." })}
    <fieldset class="mt-3 mb-3"><legend class="text-bold mb-2">Initialize the repository</legend>
      ${checkbox({ name: "auto_init", label: "Make an initial commit with the files chosen below", checked: typed.auto_init === "on" })}
      ${select({ name: "gitignores", label: ".gitignore", value: value("gitignores"), choices: [...NONE, ...gitignoreTemplates.map((t) => [t, t] as const)] }, errors)}
      ${select({ name: "license", label: "License", value: value("license"), choices: [...NONE, ...licenseTemplates.map((t) => [t, t] as const)] }, errors)}
      ${select({ name: "issue_labels", label: "Issue labels", value: value("issue_labels"), choices: [...NONE, ...labelTemplates.map((t) => [t, t] as const)] }, errors)}
      ${field({ name: "default_branch", label: "Default branch", value: value("default_branch", "main"), autocomplete: "off" }, errors)}
    </fieldset>
    <button class="btn btn-primary" type="submit">${icon("repo")} Create repository</button>
  </form>
</div>`
      )
    }

    const typedOf = (form: Form): Typed => Object.fromEntries([...form].filter(([k]) => k !== "_csrf"))

    return [
      web.route("GET", "/repo/create", { access: "signed-in" }, (ctx) =>
        Effect.gen(function* () {
          const owners = yield* ownersOf(ctx.viewer!.user)
          const org = ctx.url.searchParams.get("org")
          const preselected = owners.some((owner) => String(owner.id) === org) ? { uid: org! } : {}
          return createPage(ctx, owners, preselected, {})
        })
      ),
      web.route("POST", "/repo/create", { access: "signed-in" }, (ctx, form) =>
        Effect.gen(function* () {
          const caller = ctx.viewer!
          const typed = typedOf(form)
          const owners = yield* ownersOf(caller.user)
          // Only an owner the form offered: another id (or one the user may no longer create in) is
          // refused next to the field, as Forgejo answers "cannot create in this organization".
          const owner = owners.find((candidate) => String(candidate.id) === (form.get("uid") ?? String(caller.user.id)))
          if (owner === undefined) {
            return createPage(ctx, owners, typed, { uid: "You may not create repositories for this owner." })
          }
          const name = (form.get("repo_name") ?? "").trim()
          if (name === "") return createPage(ctx, owners, typed, { repo_name: "A repository name is required." })
          const input: CreateRepoOption = {
            name,
            description: form.get("description") ?? "",
            private: form.get("private") === "on",
            auto_init: form.get("auto_init") === "on",
            gitignores: form.get("gitignores") ?? "",
            license: form.get("license") ?? "",
            issue_labels: form.get("issue_labels") ?? "",
            default_branch: (form.get("default_branch") ?? "").trim()
          }
          const result = yield* Effect.result(repos.create(owner, input, caller.user))
          if (result._tag === "Failure") {
            const message = result.failure.message
            const at = fieldOf(message)
            return at === undefined
              ? createPage(ctx, owners, typed, {}, message)
              : createPage(ctx, owners, typed, { [at]: message })
          }
          return web.redirect(ctx, repoBase(owner.name, result.success.name))
        })
      )
    ]
  })
