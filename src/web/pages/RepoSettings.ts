// A repository's options (Forgejo's routers/web/repo/setting/setting.go `SettingsPost`,
// `/{owner}/{repo}/settings`): one POST route whose `action` field (Forgejo's) picks the form —
// `update` (name, description, website, visibility, template, default branch), `advanced` (the units and the
// pull request merge settings), and the danger zone's `convert` (a pull mirror to a regular
// repository), `transfer`, `archive`, `unarchive`, `delete`, each confirmed by typing the
// repository's full name. Every change goes through the service the API uses — ReposService.edit
// (PATCH /repos/{o}/{r}), MirrorsService.convert (POST …/convert), TransfersService.start (POST
// …/transfer), ReposService.remove (DELETE) — with the same rules and messages, shown next to the
// field with what was typed kept. Convert, transfer and delete are the owner's (the API's
// `role: "owner"`).
import { Effect, Option } from "effect"
import { AvatarsService } from "../../avatars/Service.ts"
import { edited, subject } from "../../events/Events.ts"
import { EventHub } from "../../events/Hub.ts"
import * as Errors from "../../http/Errors.ts"
import { atLeast } from "../../lib/AccessMode.ts"
import { convertRule } from "../../mirrors/Api.ts"
import { MirrorsService } from "../../mirrors/Service.ts"
import { repoRefusal } from "../../repos/Policy.ts"
import { MERGE_STYLES } from "../../repos/Repo.ts"
import type { EditRepoOption } from "../../repos/Schema.ts"
import { BlobStorage } from "../../storage/Service.ts"
import { TransfersService } from "../../transfers/Service.ts"
import { UsersRepo } from "../../users/Repo.ts"
import { checkbox, type FieldErrors, field, fieldOfMessage, formError, formNotice, select, textArea } from "../Form.ts"
import { empty, type Html, html } from "../Html.ts"
import { csrfField } from "../Layout.ts"
import { type RepoFrame, type RepoView, repoBase } from "../RepoFrame.ts"
import { makeRepoSettingsFrame } from "../RepoSettingsFrame.ts"
import type { Form, Web } from "../Web.ts"
import { CSRF_REFUSED, readAvatarUpload, repoAvatarSection } from "./settings/AvatarForm.ts"

const NOTICES: Readonly<Record<string, string>> = {
  updated: "The repository's settings have been updated.",
  archived: "The repository has been archived. It is read-only now.",
  converted: "The mirror is now a regular repository: it syncs no more, and pushes are accepted.",
  unarchived: "The repository has been unarchived.",
  "transfer-pending": "The transfer has been started; it completes when the new owner accepts it.",
  "transfer-cancelled": "The transfer has been cancelled; the repository stays where it is.",
  avatar: "The repository's avatar has been changed.",
  "avatar-deleted": "The repository's avatar has been deleted."
}

/** The units, as EditRepoOption names them. */
const UNITS = [
  ["has_issues", "Issues", "hasIssues"],
  ["has_pull_requests", "Pull requests", "hasPullRequests"],
  ["has_wiki", "Wiki", "hasWiki"],
  ["has_releases", "Releases", "hasReleases"],
  ["has_packages", "Packages", "hasPackages"],
  ["has_projects", "Projects", "hasProjects"],
  ["has_actions", "Actions", "hasActions"]
] as const

/** The pull request settings, as EditRepoOption names them. */
const MERGE_FLAGS = [
  ["allow_merge_commits", "Create a merge commit", "allowMerge"],
  ["allow_rebase", "Rebase and fast-forward", "allowRebase"],
  ["allow_rebase_explicit", "Rebase and create a merge commit (--no-ff)", "allowRebaseMerge"],
  ["allow_squash_merge", "Squash and merge", "allowSquash"],
  ["allow_fast_forward_only_merge", "Fast-forward only", "allowFastForwardOnly"],
  ["allow_manual_merge", "Mark pull requests as manually merged", "allowManualMerge"],
  ["autodetect_manual_merge", "Detect manual merges", "autodetectManualMerge"],
  ["allow_rebase_update", "Allow updating a pull request's branch by rebase", "allowRebaseUpdate"],
  ["ignore_whitespace_conflicts", "Ignore whitespace when checking for conflicts", "ignoreWhitespaceConflicts"],
  [
    "default_delete_branch_after_merge",
    "Delete the pull request's branch after merging by default",
    "defaultDeleteBranchAfterMerge"
  ],
  ["default_allow_maintainer_edit", "Allow edits by maintainers by default", "defaultAllowMaintainerEdit"]
] as const

/** Which field of the options form a service's refusal concerns. */
const FIELDS = {
  name: "repo_name",
  description: "description",
  website: "website",
  defaultbranch: "default_branch",
  defaultmergestyle: "default_merge_style"
}
const fieldOf = (message: string) =>
  fieldOfMessage(message, FIELDS) ??
  (/^name |repository with the same name|repository files already exist/.test(message)
    ? "repo_name"
    : /^branch does not exist/.test(message)
      ? "default_branch"
      : undefined)

/** What was typed into the forms, kept when a form is refused. */
type Typed = Readonly<Record<string, string>>

export const RepoSettingsPages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const events = yield* EventHub
    const transfers = yield* TransfersService
    const users = yield* UsersRepo
    const avatars = yield* AvatarsService
    const storage = yield* BlobStorage
    const mirrors = yield* MirrorsService
    const { repos } = frame
    const settings = makeRepoSettingsFrame(web, frame)

    const fullName = (view: RepoView) => `${view.owner.name}/${view.repo.name}`

    /** A danger zone form: what it does, the full name typed to confirm, one red button. */
    const dangerForm = (
      view: RepoView,
      action: string,
      title: string,
      text: Html | string,
      button: string,
      typed: Typed,
      errors: FieldErrors,
      extra: Html = empty
    ) => html`<div class="Box-row" data-testid="danger-${action}">
  <h3 class="h4">${title}</h3>
  <p class="color-fg-muted">${text}</p>
  <form method="post" action="${view.base}/settings">
    ${csrfField(view.ctx)}
    <input type="hidden" name="action" value="${action}">
    ${extra}
    ${field(
      {
        name: `${action}_confirm`,
        label: `Type ${fullName(view)} to confirm`,
        value: typed[`${action}_confirm`] ?? "",
        autocomplete: "off",
        required: true
      },
      errors
    )}
    <button class="btn btn-danger" type="submit">${button}</button>
  </form>
</div>`

    const optionsPage = (view: RepoView, typed: Typed, errors: FieldErrors, message?: string) =>
      Effect.gen(function* () {
        const { repo, ctx } = view
        const refused = message !== undefined || Object.keys(errors).length > 0
        const value = (name: string, current: string) => typed[name] ?? current
        // A refused form shows its boxes as they were sent; otherwise as they are.
        const checked = (form: string, name: string, current: boolean) =>
          typed.action === form ? typed[name] === "on" : current
        const isOwner = atLeast(view.access.mode, "owner")
        const [pending] = yield* transfers.pendingOf([repo.id])
        const recipient =
          pending === undefined ? undefined : Option.getOrUndefined(yield* users.findById(pending.recipientId))
        // The default branch is chosen among the branches (typed while there are none yet).
        const branches = repo.isEmpty ? [] : (yield* frame.data.refsOf(view.handle)).branches
        const basic = html`<form method="post" action="${view.base}/settings" data-testid="settings-update-form">
  ${csrfField(ctx)}
  <input type="hidden" name="action" value="update">
  ${field({ name: "repo_name", label: "Repository name", value: value("repo_name", repo.name), required: true, autocomplete: "off" }, errors)}
  ${textArea({ name: "description", label: "Description", value: value("description", repo.description), rows: 3 }, errors)}
  ${field({ name: "website", label: "Website", value: value("website", repo.website), autocomplete: "url" }, errors)}
  ${
    branches.length === 0
      ? field(
          {
            name: "default_branch",
            label: "Default branch",
            value: value("default_branch", repo.defaultBranch),
            autocomplete: "off",
            hint: "The repository is empty: any valid branch name."
          },
          errors
        )
      : select(
          {
            name: "default_branch",
            label: "Default branch",
            value: value("default_branch", repo.defaultBranch),
            choices: branches.map((branch) => [branch, branch] as const),
            hint: "The branch pull requests and commits go to by default, and the one visitors see first."
          },
          errors
        )
  }
  ${checkbox({ name: "private", label: "Private", checked: checked("update", "private", repo.isPrivate), hint: "Only the owner, collaborators and teams with access see a private repository." })}
  ${checkbox({ name: "template", label: "Template repository", checked: checked("update", "template", repo.isTemplate), hint: 'Anyone who may read it can make a new repository from its files and settings ("Use this template").' })}
  <button class="btn btn-primary" type="submit">Update settings</button>
</form>`
        const advanced = html`<form method="post" action="${view.base}/settings" data-testid="settings-advanced-form">
  ${csrfField(ctx)}
  <input type="hidden" name="action" value="advanced">
  <fieldset class="mb-3"><legend class="text-bold mb-2">Units</legend>
    ${UNITS.map(([name, label, key]) => checkbox({ name, label, checked: checked("advanced", name, repo.units[key]) }))}
  </fieldset>
  <fieldset class="mb-3"><legend class="text-bold mb-2">Pull requests</legend>
    ${MERGE_FLAGS.map(([name, label, key]) => checkbox({ name, label, checked: checked("advanced", name, repo.pulls[key]) }))}
    ${select(
      {
        name: "default_merge_style",
        label: "Default merge style",
        value: value("default_merge_style", repo.pulls.defaultMergeStyle),
        choices: MERGE_STYLES.map((s) => [s, s] as const)
      },
      errors
    )}
  </fieldset>
  <button class="btn btn-primary" type="submit">Update settings</button>
</form>`
        const danger = html`<section class="Box Box--danger mb-4" data-testid="danger-zone">
  <div class="Box-header"><h2 class="Box-title">Danger zone</h2></div>
  ${
    !isOwner
      ? empty
      : recipient !== undefined
        ? html`<div class="Box-row" data-testid="danger-cancel_transfer">
  <h3 class="h4">Transfer ownership</h3>
  <p class="color-fg-muted">A transfer to <strong>${recipient.name}</strong> is waiting for its recipient.</p>
  <form method="post" action="${view.base}/settings">
    ${csrfField(view.ctx)}
    <input type="hidden" name="action" value="cancel_transfer">
    <button class="btn btn-danger" type="submit">Cancel the transfer</button>
  </form>
</div>`
        : dangerForm(
            view,
            "transfer",
            "Transfer ownership",
            "Move the repository to another user or an organization you may create repositories in. Someone who may not receive it for you must accept the transfer.",
            "Transfer this repository",
            typed,
            errors,
            field(
              {
                name: "new_owner_name",
                label: "New owner",
                value: typed.new_owner_name ?? "",
                autocomplete: "off",
                required: true
              },
              errors
            )
          )
  }
  ${
    repo.isMirror && isOwner
      ? dangerForm(
          view,
          "convert",
          "Convert to a regular repository",
          "Stop mirroring: the repository keeps its branches and tags, syncs no more, and accepts pushes. It cannot become a mirror again.",
          "Convert this repository",
          typed,
          errors
        )
      : empty
  }
  ${
    repo.isMirror
      ? empty
      : repo.isArchived
        ? dangerForm(
            view,
            "unarchive",
            "Unarchive this repository",
            "Make it writable again: pushes, issues and pull requests.",
            "Unarchive this repository",
            typed,
            errors
          )
        : dangerForm(
            view,
            "archive",
            "Archive this repository",
            "Make it read-only: no pushes, no new issues or pull requests.",
            "Archive this repository",
            typed,
            errors
          )
  }
  ${
    isOwner
      ? dangerForm(
          view,
          "delete",
          "Delete this repository",
          "Deleting removes the repository, its git data, issues and settings. It cannot be undone.",
          "Delete this repository",
          typed,
          errors
        )
      : empty
  }
</section>`
        return yield* settings.page(
          view,
          { menu: "options", title: "Options", ...(refused ? { status: 422 } : {}) },
          html`${formNotice(NOTICES[ctx.url.searchParams.get("done") ?? ""])}
${formError(message)}
<section class="Box mb-4" data-testid="settings-basic"><div class="Box-header"><h2 class="Box-title">Repository</h2></div><div class="Box-body">${basic}</div></section>
<section class="Box mb-4" data-testid="settings-advanced"><div class="Box-header"><h2 class="Box-title">Features and merging</h2></div><div class="Box-body">${advanced}</div></section>
${repoAvatarSection(ctx, repo, `${view.base}/settings/avatar`)}
${danger}`
        )
      })

    /** ReposService.edit as PATCH does it (the same events), then back to the page or the refusal. */
    const edit = (view: RepoView, input: EditRepoOption, typed: Typed, done: string) =>
      Effect.gen(function* () {
        const result = yield* Effect.result(repos.edit(view.owner, view.repo, input))
        if (result._tag === "Failure") {
          const message = result.failure.message
          const name = fieldOf(message)
          const errors: FieldErrors = name === undefined ? {} : { [name]: message }
          return yield* optionsPage(view, typed, errors, name === undefined ? message : undefined)
        }
        const updated = result.success
        yield* Effect.forEach(edited(view.owner, view.repo, updated, view.ctx.viewer!.user), events.publish)
        return web.redirect(view.ctx, `${repoBase(view.owner.name, updated.name)}/settings?done=${done}`)
      })

    const typedOf = (form: Form): Typed => Object.fromEntries([...form].filter(([k]) => k !== "_csrf"))

    /** The confirmation of a danger zone form, or its refusal next to the field. */
    const confirmed = (view: RepoView, form: Form, action: string) =>
      (form.get(`${action}_confirm`) ?? "").trim().toLowerCase() === fullName(view).toLowerCase()

    const notConfirmed = (view: RepoView, typed: Typed, action: string) =>
      optionsPage(view, typed, {
        [`${action}_confirm`]: `Type the repository's full name, ${fullName(view)}, to confirm.`
      })

    const onlyOwner = (view: RepoView) =>
      web.errorPage(view.ctx, 403, "Forbidden", "Only the repository's owner may transfer or delete it.")

    return [
      settings.adminRoute("GET", "/:owner/:repo/settings", (view) => optionsPage(view, {}, {})),
      // Forgejo's SettingsAvatar and SettingsDeleteAvatar: an upload, so not through adminRoute's form.
      frame.route("POST", "/:owner/:repo/settings/avatar", { access: "signed-in", multipart: true }, (view) =>
        Effect.gen(function* () {
          if (!atLeast(view.access.mode, "admin")) {
            const text = "Only the repository's administrators may change its settings. Ask its owner for admin access."
            return web.errorPage(view.ctx, 403, "Forbidden", text)
          }
          const upload = yield* Effect.provideService(readAvatarUpload(web, view.ctx), BlobStorage, storage)
          if ("refused" in upload) return web.errorPage(view.ctx, 400, "Bad request", CSRF_REFUSED)
          const stored = "bytes" in upload ? yield* Effect.result(avatars.setRepo(view.repo, upload.bytes)) : undefined
          if (stored?._tag === "Success") return web.redirect(view.ctx, `${view.base}/settings?done=avatar`)
          return yield* optionsPage(view, {}, {}, "message" in upload ? upload.message : stored?.failure.message)
        })
      ),
      settings.adminRoute("POST", "/:owner/:repo/settings/avatar/delete", (view) =>
        Effect.as(avatars.removeRepo(view.repo), web.redirect(view.ctx, `${view.base}/settings?done=avatar-deleted`))
      ),
      settings.adminRoute("POST", "/:owner/:repo/settings", (view, form) =>
        Effect.gen(function* () {
          const typed = typedOf(form)
          const action = form.get("action")
          switch (action) {
            case "update":
              return yield* edit(
                view,
                {
                  name: (form.get("repo_name") ?? "").trim(),
                  description: form.get("description") ?? "",
                  website: (form.get("website") ?? "").trim(),
                  default_branch: (form.get("default_branch") ?? "").trim(),
                  private: form.get("private") === "on",
                  template: form.get("template") === "on"
                },
                typed,
                "updated"
              )
            case "advanced": {
              const input: Record<string, unknown> = { default_merge_style: form.get("default_merge_style") ?? "" }
              for (const [name] of [...UNITS, ...MERGE_FLAGS]) input[name] = form.get(name) === "on"
              return yield* edit(view, input as EditRepoOption, typed, "updated")
            }
            case "archive":
            case "unarchive":
              if (!confirmed(view, form, action)) return yield* notConfirmed(view, typed, action)
              return yield* edit(view, { archived: action === "archive" }, typed, `${action}d`)
            case "convert": {
              // The API's rule for POST /repos/{o}/{r}/convert, asked of the same opened repository.
              const refusal = repoRefusal(view.caller, view, convertRule.repo)
              if (refusal !== undefined) {
                if (refusal.reason === "not-found") return web.notFound(view.ctx)
                if (refusal.kind === "role")
                  return web.errorPage(view.ctx, 403, "Forbidden", "Only the repository's owner may convert a mirror.")
                const status = refusal.reason === "locked" ? 423 : refusal.reason === "conflict" ? 409 : 403
                return web.errorPage(view.ctx, status, "Not now", refusal.message)
              }
              if (!confirmed(view, form, action)) return yield* notConfirmed(view, typed, action)
              const result = yield* Effect.result(mirrors.convert(view))
              if (result._tag === "Failure") return yield* optionsPage(view, typed, {}, result.failure.message)
              return web.redirect(view.ctx, `${view.base}/settings?done=converted`)
            }
            case "transfer": {
              if (!atLeast(view.access.mode, "owner")) return onlyOwner(view)
              const newOwner = (form.get("new_owner_name") ?? "").trim()
              if (newOwner === "")
                return yield* optionsPage(view, typed, { new_owner_name: "Name the user or organization." })
              if (!confirmed(view, form, action)) return yield* notConfirmed(view, typed, action)
              const result = yield* Effect.result(transfers.start(view.ctx.viewer!, view, { new_owner: newOwner }))
              if (result._tag === "Failure") {
                const failure = result.failure
                // An unknown or invisible new owner is a refusal of the field, not a missing page.
                const message =
                  failure instanceof Errors.NotFound
                    ? `There is no user or organization named ${newOwner}.`
                    : failure.message
                return yield* optionsPage(view, typed, { new_owner_name: message })
              }
              const { repo, owner, done } = result.success
              return done
                ? web.redirect(view.ctx, repoBase(owner.name, repo.name))
                : web.redirect(view.ctx, `${view.base}/settings?done=transfer-pending`)
            }
            case "cancel_transfer": {
              if (!atLeast(view.access.mode, "owner")) return onlyOwner(view)
              const result = yield* Effect.result(transfers.reject(view.ctx.viewer!, view))
              if (result._tag === "Failure") return yield* optionsPage(view, typed, {}, result.failure.message)
              return web.redirect(view.ctx, `${view.base}/settings?done=transfer-cancelled`)
            }
            case "delete": {
              if (!atLeast(view.access.mode, "owner")) return onlyOwner(view)
              if (!confirmed(view, form, action)) return yield* notConfirmed(view, typed, action)
              yield* repos.remove(view.owner, view.repo)
              yield* events.publish({
                _tag: "DeleteRepository",
                ...subject(view.owner, view.repo, view.ctx.viewer!.user)
              })
              return web.redirect(view.ctx, `/${encodeURIComponent(view.owner.name)}`)
            }
            default:
              return web.errorPage(view.ctx, 400, "Bad request", "The form's action is not one this page knows.")
          }
        })
      )
    ]
  })
