// A new repository from the browser, `/repo/create` (Forgejo's `routers/web/repo/repo.go`
// `Create`/`CreatePost`): the owner (the user, or an organization they may create repositories
// in, preselected by `?org={id}` as Forgejo's "New repository" link of an organization does), the
// name and description, private, template, and the initial commit's templates. The repository is made by
// ReposService.create, as `POST /user/repos` and `POST /orgs/{org}/repos` make it (quota, events).
//
// From a template (Forgejo's "Use this template", `/repo/create?template_id={id}`, the form's
// `repo_template`): the template is opened for the viewer as the API's `POST /repos/{o}/{r}/generate`
// opens it (read on code; a 404 page when it may not be seen), and the repository is made by the
// API's generator (src/repos/Generate.ts) with the owner, name, description, private and the items
// chosen to copy.
import { Effect, Option } from "effect"
import * as Errors from "../../http/Errors.ts"
import { OrgsService } from "../../orgs/Service.ts"
import { makeGenerate } from "../../repos/Generate.ts"
import type { OpenedRepository } from "../../repos/Policy.ts"
import type { CreateRepoOption, GenerateRepoOption } from "../../repos/Schema.ts"
import { ReposService } from "../../repos/Service.ts"
import { gitignoreTemplates, labelTemplates, licenseTemplates } from "../../templates/Service.ts"
import type { UserRow } from "../../users/Repo.ts"
import { UsersRepo } from "../../users/Repo.ts"
import { checkbox, type FieldErrors, field, fieldOfMessage, formError, select, textArea } from "../Form.ts"
import { empty, html } from "../Html.ts"
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

/**
 * The items a template's form offers to copy (GenerateRepoOption's names, Forgejo's form). Git hooks
 * are not offered: Hearth has none to copy.
 */
const TEMPLATE_ITEMS = [
  ["git_content", "Git content (the default branch)"],
  ["topics", "Topics"],
  ["avatar", "Avatar"],
  ["labels", "Labels"],
  ["webhooks", "Webhooks"],
  ["protected_branch", "Branch protection rules"]
] as const

/** Which field a refusal of the generator concerns. */
const templateFieldOf = (message: string): string | undefined =>
  /template item/.test(message)
    ? "items"
    : /for other user|in organization/.test(message)
      ? "uid"
      : /template repository/.test(message)
        ? undefined
        : fieldOf(message)

export const RepoNewPages = (web: Web) =>
  Effect.gen(function* () {
    const repos = yield* ReposService
    const orgs = yield* OrgsService
    const users = yield* UsersRepo
    const generate = yield* makeGenerate

    /** The template of `?template_id=` / `repo_template`, opened for the viewer; 404 when unknown or hidden. */
    const templateOf = (ctx: WebContext, id: string) =>
      Effect.gen(function* () {
        const repo = yield* repos.getById(/^\d{1,15}$/.test(id) ? Number(id) : 0)
        const owner = yield* users.findById(repo.ownerId)
        if (Option.isNone(owner)) return yield* Errors.notFound()
        return yield* repos.assign(ctx.viewer, owner.value.name, repo.name, { role: "read", unit: "code" })
      })

    /** The owners the form offers: the user first, then the organizations they may create in. */
    const ownersOf = (user: UserRow) => Effect.map(orgs.repoOwnersFor(user), (list) => [user, ...list])

    /** What both forms ask first: the owner (of those offered), the name, the description, private. */
    const newRepoFields = (owners: ReadonlyArray<UserRow>, typed: Typed, errors: FieldErrors) =>
      html`${select(
        {
          name: "uid",
          label: "Owner",
          value: typed.uid ?? String(owners[0]!.id),
          choices: owners.map((owner) => [String(owner.id), owner.name] as const)
        },
        errors
      )}
    ${field({ name: "repo_name", label: "Repository name", value: typed.repo_name ?? "", required: true, autofocus: true, autocomplete: "off", hint: "Letters, digits, dashes, underscores and dots." }, errors)}
    ${textArea({ name: "description", label: "Description", value: typed.description ?? "", rows: 2 }, errors)}
    ${checkbox({ name: "private", label: "Private", checked: typed.private === "on", hint: "Only the owner, collaborators and teams with access see a private repository." })}`

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
    ${newRepoFields(owners, typed, errors)}
    ${checkbox({ name: "template", label: "Template repository", checked: typed.template === "on", hint: "Anyone who may read it can make a new repository from its files and settings." })}
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

    /** The form of a new repository from `template` (what was typed kept; every item checked at first). */
    const templatePage = (
      ctx: WebContext,
      template: OpenedRepository,
      owners: ReadonlyArray<UserRow>,
      typed: Typed,
      errors: FieldErrors,
      message?: string
    ) => {
      const refused = message !== undefined || Object.keys(errors).length > 0
      const first = Object.keys(typed).length === 0
      const full = `${template.owner.name}/${template.repo.name}`
      return web.page(
        ctx,
        { title: `New repository from ${full}`, ...(refused ? { status: 422 } : {}) },
        html`<div class="container-md p-responsive py-6">
  <h1 class="h2 mb-3">${icon("repo-template", 24)} New repository from a template</h1>
  <p class="mb-3" data-testid="template-name">Template: <a href="${repoBase(template.owner.name, template.repo.name)}">${full}</a></p>
  ${formError(message)}
  <form method="post" action="/repo/create" data-testid="repo-generate-form">
    ${csrfField(ctx)}
    <input type="hidden" name="repo_template" value="${String(template.repo.id)}">
    ${newRepoFields(owners, typed, errors)}
    <fieldset class="mt-3 mb-3${errors.items === undefined ? "" : " errored"}"${errors.items === undefined ? empty : html` aria-describedby="field-items-error"`}><legend class="text-bold mb-2">Template items to copy</legend>
      ${TEMPLATE_ITEMS.map(([name, label]) => checkbox({ name, label, checked: first || typed[name] === "on" }))}
      ${errors.items === undefined ? empty : html`<p class="note color-fg-danger" id="field-items-error" data-testid="error-items">${errors.items}</p>`}
    </fieldset>
    <button class="btn btn-primary" type="submit">${icon("repo")} Create repository</button>
  </form>
</div>`
      )
    }

    /** POST /repo/create with `repo_template`: the generator, or the form again with its refusal. */
    const generateFrom = (ctx: WebContext, form: Form) =>
      Effect.gen(function* () {
        const caller = ctx.viewer!
        const typed = typedOf(form)
        const template = yield* templateOf(ctx, form.get("repo_template") ?? "")
        const owners = yield* ownersOf(caller.user)
        const owner = owners.find((candidate) => String(candidate.id) === (form.get("uid") ?? String(caller.user.id)))
        if (owner === undefined) {
          return templatePage(ctx, template, owners, typed, { uid: "You may not create repositories for this owner." })
        }
        const name = (form.get("repo_name") ?? "").trim()
        if (name === "") {
          return templatePage(ctx, template, owners, typed, { repo_name: "A repository name is required." })
        }
        const input: GenerateRepoOption = {
          owner: owner.name,
          name,
          description: form.get("description") ?? "",
          private: form.get("private") === "on",
          ...Object.fromEntries(TEMPLATE_ITEMS.map(([item]) => [item, form.get(item) === "on"]))
        }
        const result = yield* Effect.result(generate(caller, template, input))
        if (result._tag === "Failure") {
          const failure = result.failure
          if (failure instanceof Errors.NotFound) return yield* failure
          const at = templateFieldOf(failure.message)
          return at === undefined
            ? templatePage(ctx, template, owners, typed, {}, failure.message)
            : templatePage(ctx, template, owners, typed, { [at]: failure.message })
        }
        return web.redirect(ctx, repoBase(result.success.owner.name, result.success.repo.name))
      })

    const typedOf = (form: Form): Typed => Object.fromEntries([...form].filter(([k]) => k !== "_csrf"))

    return [
      web.route("GET", "/repo/create", { access: "signed-in" }, (ctx) =>
        Effect.gen(function* () {
          const owners = yield* ownersOf(ctx.viewer!.user)
          const templateId = ctx.url.searchParams.get("template_id")
          if (templateId !== null) {
            const template = yield* templateOf(ctx, templateId)
            // Only a template: any other repository's id is a page that does not exist.
            if (!template.repo.isTemplate) return web.notFound(ctx)
            return templatePage(ctx, template, owners, {}, {})
          }
          const org = ctx.url.searchParams.get("org")
          const preselected = owners.some((owner) => String(owner.id) === org) ? { uid: org! } : {}
          return createPage(ctx, owners, preselected, {})
        })
      ),
      web.route("POST", "/repo/create", { access: "signed-in" }, (ctx, form) =>
        Effect.gen(function* () {
          if (form.get("repo_template") !== null) return yield* generateFrom(ctx, form)
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
            template: form.get("template") === "on",
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
