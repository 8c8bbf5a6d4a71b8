// A repository's branch and tag protection (Forgejo's routers/web/repo/setting/protected_branch.go
// and protected_tag.go; templates/repo/settings/branches.tmpl, protected_branch.tmpl, tags.tmpl):
// `/{owner}/{repo}/settings/branches` lists the rules in the order they are tried,
// `/settings/branches/edit?rule_name=…` adds one (no name) or edits one (the name is fixed: a rule
// cannot be renamed, as in the API), `/settings/branches/delete` deletes one after a second click;
// `/settings/tags` lists, adds (`?id=` edits) and deletes tag rules. Every change goes through
// ProtectionService with the API's rules and words; a refusal is shown next to its field with what
// was typed kept. As in the API, creating or editing a rule of an archived repository is refused
// (Forgejo's `mustNotBeArchived`); whitelisted users without the access a list needs are dropped
// (Forgejo drops them silently; the page says whom).
import { Effect } from "effect"
import * as Errors from "../../http/Errors.ts"
import { globMatch, isGlob } from "../../lib/Glob.ts"
import type { BranchProtection, CreateBranchProtectionOption, TagProtection } from "../../protection/Api.ts"
import { ProtectionService } from "../../protection/Service.ts"
import { repoRefusal } from "../../repos/Policy.ts"
import { StatusesService } from "../../statuses/Service.ts"
import { checkbox, type FieldErrors, field, formError, formNotice, radios, textArea } from "../Form.ts"
import { empty, html } from "../Html.ts"
import { icon } from "../Icons.ts"
import { csrfField } from "../Layout.ts"
import type { RepoFrame, RepoView } from "../RepoFrame.ts"
import { makeRepoSettingsFrame } from "../RepoSettingsFrame.ts"
import type { Form, Web } from "../Web.ts"
import { buttonForm } from "./settings/Frame.ts"

const NOTICES: Readonly<Record<string, string>> = {
  "rule-saved": "The branch protection rule has been saved.",
  "rule-deleted": "The branch protection rule has been deleted.",
  "rule-moved": "The order of the rules has been changed.",
  "tag-saved": "The tag protection rule has been saved.",
  "tag-deleted": "The tag protection rule has been deleted."
}

type Typed = Readonly<Record<string, string>>

/** Names typed into a whitelist field: separated by commas or spaces. */
const namesOf = (text: string | undefined) => (text ?? "").split(/[\s,]+/).filter((n) => n !== "")
/** Status check patterns: one per line. */
const linesOf = (text: string | undefined) =>
  (text ?? "")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "")

/** The names of `typed` the saved rule does not list (dropped for lack of access). */
const droppedOf = (typed: ReadonlyArray<string>, saved: ReadonlyArray<string>) => {
  const kept = new Set(saved.map((n) => n.toLowerCase()))
  return typed.filter((n) => !kept.has(n.toLowerCase()))
}

/** A refused archived repository (what the API's `changes: "mirrors"` rule answers 423 to). */
const CHANGE_RULE = { role: "admin", changes: "mirrors" } as const

/** The radio value of a rule's push setting (Forgejo's `enable_push`: none, all, whitelist). */
const pushMode = (r: BranchProtection | undefined) =>
  r === undefined || !r.enable_push ? "none" : r.enable_push_whitelist ? "whitelist" : "all"

/** The user and team whitelist fields of one list (teams only in an organization's repository). */
const WHITELISTS = [
  ["whitelist_users", "whitelist_teams", "push_whitelist_usernames", "push_whitelist_teams"],
  ["merge_whitelist_users", "merge_whitelist_teams", "merge_whitelist_usernames", "merge_whitelist_teams"],
  [
    "approvals_whitelist_users",
    "approvals_whitelist_teams",
    "approvals_whitelist_username",
    "approvals_whitelist_teams"
  ]
] as const

/** The review and merge options that are one checkbox each. */
const BLOCKS = [
  [
    "block_on_rejected_reviews",
    "Block merge on rejected reviews",
    "Merging is not possible while an official reviewer requests changes."
  ],
  [
    "block_on_official_review_requests",
    "Block merge on official review requests",
    "Merging is not possible while an official review request is pending."
  ],
  [
    "dismiss_stale_approvals",
    "Dismiss stale approvals",
    "New commits that change the pull request dismiss its approvals."
  ],
  [
    "ignore_stale_approvals",
    "Ignore stale approvals",
    "Approvals made on older commits do not count towards the required approvals."
  ],
  [
    "block_on_outdated_branch",
    "Block merge if the pull request is outdated",
    "Merging is not possible while the head branch is behind the base branch."
  ]
] as const

export const RepoSettingsProtectionPages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const protection = yield* ProtectionService
    const statuses = yield* StatusesService
    const settings = makeRepoSettingsFrame(web, frame)

    const isOrg = (view: RepoView) => view.owner.type === "organization"

    const archivedPage = (view: RepoView) =>
      web.errorPage(
        view.ctx,
        423,
        "This repository is archived",
        "An archived repository is read-only: unarchive it in its options to change its protection rules."
      )

    /** A delete button behind a disclosure: the first click opens it, the second deletes. */
    const confirmDelete = (view: RepoView, action: string, fields: Readonly<Record<string, string>>, what: string) =>
      html`<details class="details-reset d-inline-block ml-2" data-testid="delete-rule">
  <summary class="btn btn-sm btn-danger" aria-label="Delete ${what}">${icon("trash")} Delete</summary>
  <div class="Box p-3 mt-2 color-shadow-medium">
    <p class="mb-2">Delete ${what}? This cannot be undone.</p>
    <form method="post" action="${action}">
      ${csrfField(view.ctx)}
      ${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
      <button class="btn btn-sm btn-danger" type="submit">Delete ${what}</button>
    </form>
  </div>
</details>`

    const noticeOf = (view: RepoView) => {
      const done = NOTICES[view.ctx.url.searchParams.get("done") ?? ""]
      const dropped = view.ctx.url.searchParams.get("dropped") ?? ""
      return html`${formNotice(done)}${
        done === undefined || dropped === ""
          ? empty
          : html`<div class="flash flash-warn mb-3" role="status" data-testid="form-dropped">Not added, for lack of access to the repository: ${dropped}</div>`
      }`
    }

    // ---- Branch rules

    const summary = (r: BranchProtection) => {
      const labels = [
        r.enable_push ? (r.enable_push_whitelist ? "Push: whitelist" : "Push: writers") : "Push: nobody",
        ...(r.required_approvals > 0
          ? [`${r.required_approvals} approval${r.required_approvals === 1 ? "" : "s"}`]
          : []),
        ...(r.enable_status_check ? ["Status checks"] : []),
        ...(r.enable_merge_whitelist ? ["Merge whitelist"] : []),
        ...(r.require_signed_commits ? ["Signed commits"] : []),
        ...(r.apply_to_admins ? ["Applies to admins"] : [])
      ]
      return labels.map((l) => html`<span class="Label mr-1">${l}</span>`)
    }

    const branchesPage = (view: RepoView) =>
      Effect.gen(function* () {
        const { base } = view
        const rules = yield* protection.listBranchRules(view)
        // Patterns are tried in their order (a name comes first whatever its place): they move.
        const movable = (i: number) => i >= 0 && i < rules.length && isGlob(rules[i]!.rule_name)
        const move = (r: BranchProtection, i: number, direction: "up" | "down") =>
          movable(i) && movable(direction === "up" ? i - 1 : i + 1)
            ? buttonForm(
                view.ctx,
                `${base}/settings/branches/priority`,
                { rule_name: r.rule_name, direction },
                icon(direction === "up" ? "arrow-up" : "arrow-down"),
                { accessibleName: `Move the rule ${r.rule_name} ${direction}` }
              )
            : empty
        const list =
          rules.length === 0
            ? html`<div class="Box-body color-fg-muted">No branch is protected.</div>`
            : html`<ol class="list-style-none">${rules.map(
                (r, i) => html`<li class="Box-row d-flex flex-items-center flex-wrap" data-testid="branch-rule">
  <span class="color-fg-muted mr-2" aria-label="Priority ${i + 1}">${i + 1}.</span>
  <div class="flex-auto min-width-0 mr-2">
    <code class="text-bold wb-break-all" data-testid="branch-rule-name">${r.rule_name}</code>
    <div class="mt-1">${summary(r)}</div>
  </div>
  <span class="mr-2">${move(r, i, "up")}${move(r, i, "down")}</span>
  <a class="btn btn-sm" href="${base}/settings/branches/edit?rule_name=${encodeURIComponent(r.rule_name)}" aria-label="Edit the rule ${r.rule_name}">${icon("pencil")} Edit</a>
  ${confirmDelete(view, `${base}/settings/branches/delete`, { rule_name: r.rule_name }, `the rule ${r.rule_name}`)}
</li>`
              )}</ol>`
        return yield* settings.page(
          view,
          { menu: "branches", title: "Branches" },
          html`${noticeOf(view)}
<p class="mb-3" data-testid="default-branch-note">The default branch is <code>${view.repo.defaultBranch}</code>: pull requests and commits go to it unless another branch is chosen. Change it in the <a href="${base}/settings">options</a>.</p>
<section class="Box mb-4" data-testid="branch-rules">
  <div class="Box-header d-flex flex-items-center">
    <h2 class="Box-title flex-auto">Branch protection rules</h2>
    <a class="btn btn-sm btn-primary" href="${base}/settings/branches/edit">${icon("plus")} Add rule</a>
  </div>
  ${list}
</section>
<p class="note">A rule protects the branch of its name, or every branch its pattern matches (<code>*</code> within one path segment, <code>**</code> across them). A rule for a name comes before patterns; patterns are tried in the order above.</p>`
        )
      })

    const ruleForm = (
      view: RepoView,
      rule: BranchProtection | undefined,
      typed: Typed | undefined,
      errors: FieldErrors,
      message?: string
    ) =>
      Effect.gen(function* () {
        const { base, ctx } = view
        const recent = yield* statuses.recentContexts(view.repo.id)
        const value = (name: string, current: string) => typed?.[name] ?? current
        const checked = (name: string, current: boolean) => (typed === undefined ? current : typed[name] === "on")
        const list = (names: ReadonlyArray<string>) => names.join(", ")
        const whitelist = (index: 0 | 1 | 2, label: string) => {
          const [users, teams, usersKey, teamsKey] = WHITELISTS[index]
          return html`${field(
            {
              name: users,
              label: `${label}: users`,
              value: value(users, list(rule?.[usersKey] ?? [])),
              autocomplete: "off",
              hint: "User names, separated by commas or spaces."
            },
            errors
          )}${
            isOrg(view)
              ? field(
                  {
                    name: teams,
                    label: `${label}: teams`,
                    value: value(teams, list(rule?.[teamsKey] ?? [])),
                    autocomplete: "off",
                    hint: "Team names of the organization, separated by commas or spaces."
                  },
                  errors
                )
              : empty
          }`
        }
        const patterns = linesOf(value("status_check_contexts", (rule?.status_check_contexts ?? []).join("\n")))
        const contexts =
          recent.length === 0
            ? html`<p class="note" data-testid="recent-contexts">No status has been posted to this repository in the last week.</p>`
            : html`<div class="mb-3"><p class="text-bold mb-1">Status checks posted in the last week</p>
<ul class="list-style-none" data-testid="recent-contexts">${recent.map((c) => {
                const matched = patterns.some((p) => globMatch(p, c))
                return html`<li class="py-1"><code>${c}</code> ${
                  matched
                    ? html`<span class="Label Label--success ml-1">required</span>`
                    : html`<span class="Label ml-1">not required</span>`
                }</li>`
              })}</ul></div>`
        const creating = rule === undefined
        const title = creating ? "Add a branch protection rule" : `Branch protection rule ${rule.rule_name}`
        const form = html`<form method="post" action="${base}/settings/branches/edit" data-testid="branch-rule-form">
  ${csrfField(ctx)}
  ${
    creating
      ? field(
          {
            name: "rule_name",
            label: "Branch name or pattern",
            value: value("rule_name", ""),
            autocomplete: "off",
            required: true,
            hint: "A branch name (main) or a pattern (release/*, **)."
          },
          errors
        )
      : html`<input type="hidden" name="original_rule_name" value="${rule.rule_name}">
  <div class="form-group"><div class="form-group-header"><label for="field-rule_name">Branch name or pattern</label></div>
  <div class="form-group-body"><input class="form-control width-full" id="field-rule_name" value="${rule.rule_name}" readonly aria-describedby="field-rule_name-hint"></div>
  <p class="note" id="field-rule_name-hint">A rule cannot be renamed: add a new one and delete this one.</p></div>`
  }
  <section class="mb-4"><h2 class="h4 border-bottom pb-2 mb-3">Pushing</h2>
  ${radios({
    name: "enable_push",
    legend: "Who may push to the branch",
    value: value("enable_push", pushMode(rule)),
    choices: [
      ["none", "Nobody", "Pushes are refused; the branch changes only by merging pull requests."],
      [
        "all",
        "Everyone with write access",
        "Anyone who may write the repository's code may push (but not force-push or delete)."
      ],
      ["whitelist", "Only the users and teams listed", "Only those below may push (not force-push or delete)."]
    ]
  })}
  ${whitelist(0, "Push whitelist")}
  ${checkbox({ name: "whitelist_deploy_keys", label: "Deploy keys with write access may push", checked: checked("whitelist_deploy_keys", rule?.push_whitelist_deploy_keys ?? false) })}
  ${checkbox({ name: "require_signed_commits", label: "Require signed commits", checked: checked("require_signed_commits", rule?.require_signed_commits ?? false), hint: "Pushes of commits that are not signed and verified are refused." })}
  ${field({ name: "protected_file_patterns", label: "Protected file patterns", value: value("protected_file_patterns", rule?.protected_file_patterns ?? ""), autocomplete: "off", hint: "Files that may not be changed, even by those who may push; patterns separated by semicolons (docs/*.md;.forgejo/**)." }, errors)}
  ${field({ name: "unprotected_file_patterns", label: "Unprotected file patterns", value: value("unprotected_file_patterns", rule?.unprotected_file_patterns ?? ""), autocomplete: "off", hint: "Files anyone with write access may change directly, bypassing the push restriction; patterns separated by semicolons." }, errors)}
  </section>
  <section class="mb-4"><h2 class="h4 border-bottom pb-2 mb-3">Merging</h2>
  ${checkbox({ name: "enable_merge_whitelist", label: "Only the users and teams listed may merge pull requests", checked: checked("enable_merge_whitelist", rule?.enable_merge_whitelist ?? false) })}
  ${whitelist(1, "Merge whitelist")}
  ${checkbox({ name: "enable_status_check", label: "Require status checks to pass before merging", checked: checked("enable_status_check", rule?.enable_status_check ?? false) })}
  ${textArea({ name: "status_check_contexts", label: "Required status checks", value: value("status_check_contexts", (rule?.status_check_contexts ?? []).join("\n")), rows: 3, code: true, hint: "Context names or patterns (ci/*), one per line. With none, every status of the commit must pass." }, errors)}
  ${contexts}
  ${field({ name: "required_approvals", label: "Required approvals", value: value("required_approvals", String(rule?.required_approvals ?? 0)), inputmode: "numeric", autocomplete: "off", hint: "How many approving reviews a pull request needs; 0 for none." }, errors)}
  ${checkbox({ name: "enable_approvals_whitelist", label: "Only approvals of the users and teams listed count", checked: checked("enable_approvals_whitelist", rule?.enable_approvals_whitelist ?? false) })}
  ${whitelist(2, "Approvals whitelist")}
  ${BLOCKS.map(([name, label, hint]) => checkbox({ name, label, hint, checked: checked(name, rule?.[name] ?? false) }))}
  </section>
  <section class="mb-4"><h2 class="h4 border-bottom pb-2 mb-3">Administrators</h2>
  ${checkbox({ name: "apply_to_admins", label: "Apply the rule to administrators too", checked: checked("apply_to_admins", rule?.apply_to_admins ?? false), hint: "Without it, repository administrators may force a merge past the rule." })}
  </section>
  <button class="btn btn-primary" type="submit">${creating ? "Add rule" : "Save rule"}</button>
  <a class="btn ml-2" href="${base}/settings/branches">Cancel</a>
</form>`
        return yield* settings.page(
          view,
          {
            menu: "branches",
            title,
            ...(message !== undefined || Object.keys(errors).length > 0 ? { status: 422 } : {})
          },
          html`${formError(message)}${form}`
        )
      })

    /** The rule as the form describes it (whitelists only when their option is on, as Forgejo's form). */
    const inputOf = (view: RepoView, form: Form, approvals: number): CreateBranchProtectionOption => {
      const push = form.get("enable_push") ?? "none"
      const on = (name: string) => form.get(name) === "on"
      const teams = (name: string, enabled: boolean) => (enabled && isOrg(view) ? namesOf(form.get(name) ?? "") : [])
      const pushList = push === "whitelist"
      return {
        enable_push: push === "all" || pushList,
        enable_push_whitelist: pushList,
        push_whitelist_usernames: pushList ? namesOf(form.get("whitelist_users") ?? "") : [],
        push_whitelist_teams: teams("whitelist_teams", pushList),
        push_whitelist_deploy_keys: pushList && on("whitelist_deploy_keys"),
        enable_merge_whitelist: on("enable_merge_whitelist"),
        merge_whitelist_usernames: on("enable_merge_whitelist") ? namesOf(form.get("merge_whitelist_users") ?? "") : [],
        merge_whitelist_teams: teams("merge_whitelist_teams", on("enable_merge_whitelist")),
        enable_status_check: on("enable_status_check"),
        status_check_contexts: linesOf(form.get("status_check_contexts") ?? ""),
        required_approvals: approvals,
        enable_approvals_whitelist: on("enable_approvals_whitelist"),
        approvals_whitelist_username: on("enable_approvals_whitelist")
          ? namesOf(form.get("approvals_whitelist_users") ?? "")
          : [],
        approvals_whitelist_teams: teams("approvals_whitelist_teams", on("enable_approvals_whitelist")),
        block_on_rejected_reviews: on("block_on_rejected_reviews"),
        block_on_official_review_requests: on("block_on_official_review_requests"),
        block_on_outdated_branch: on("block_on_outdated_branch"),
        dismiss_stale_approvals: on("dismiss_stale_approvals"),
        ignore_stale_approvals: on("ignore_stale_approvals"),
        require_signed_commits: on("require_signed_commits"),
        protected_file_patterns: form.get("protected_file_patterns") ?? "",
        unprotected_file_patterns: form.get("unprotected_file_patterns") ?? "",
        apply_to_admins: on("apply_to_admins")
      }
    }

    /** The field a whitelist refusal concerns: the first list that names the unknown user or team. */
    const whitelistField = (typed: Typed, message: string, kind: "user" | "team") => {
      const name = /name: (.*)\]$/.exec(message)?.[1]
      const index = kind === "user" ? 0 : 1
      const hit = WHITELISTS.map((w) => w[index]).find((f) =>
        namesOf(typed[f]).some((n) => n.toLowerCase() === name?.toLowerCase())
      )
      return { field: hit, name }
    }

    /** A service refusal as the form shows it: next to its field when it concerns one. */
    const refusalOf = (view: RepoView, typed: Typed, failure: { readonly message: string }): [FieldErrors, string?] => {
      const message = failure.message
      if (message === "both rule_name and branch_name are empty")
        return [{ rule_name: "Enter the branch name or pattern the rule protects." }]
      if (message === "Branch protection already exist")
        return [{ rule_name: `A rule for ${typed.rule_name ?? ""} exists already: edit it instead.` }]
      if (/^\[RuleName\]/.test(message)) return [{ rule_name: message }]
      if (/^user does not exist/.test(message)) {
        const { field, name } = whitelistField(typed, message, "user")
        if (field !== undefined) return [{ [field]: `There is no user named ${name}.` }]
      }
      if (/^team does not exist/.test(message)) {
        const { field, name } = whitelistField(typed, message, "team")
        if (field !== undefined) return [{ [field]: `${view.owner.name} has no team named ${name}.` }]
      }
      return [{}, message]
    }

    const saveRule = (view: RepoView, form: Form) =>
      Effect.gen(function* () {
        if (repoRefusal(view.caller, view, CHANGE_RULE) !== undefined) return archivedPage(view)
        const typed: Typed = Object.fromEntries([...form].filter(([k]) => k !== "_csrf"))
        const original = form.get("original_rule_name")
        const existing = original === null ? undefined : yield* protection.getBranchRule(view, original) // 404 page when gone
        const approvalsText = (form.get("required_approvals") ?? "").trim()
        if (!/^\d{1,4}$/.test(approvalsText === "" ? "0" : approvalsText))
          return yield* ruleForm(view, existing, typed, {
            required_approvals: "Enter a whole number of approvals, 0 or more."
          })
        const input = inputOf(view, form, Number(approvalsText === "" ? "0" : approvalsText))
        const result = yield* Effect.result(
          existing === undefined
            ? protection.createBranchRule(view, { ...input, rule_name: (form.get("rule_name") ?? "").trim() })
            : protection.editBranchRule(view, existing.rule_name, input)
        )
        if (result._tag === "Failure") {
          const [errors, message] = refusalOf(view, typed, result.failure)
          return yield* ruleForm(view, existing, typed, errors, message)
        }
        const saved = result.success
        const dropped = [
          ...droppedOf(input.push_whitelist_usernames ?? [], saved.push_whitelist_usernames),
          ...droppedOf(input.merge_whitelist_usernames ?? [], saved.merge_whitelist_usernames),
          ...droppedOf(input.approvals_whitelist_username ?? [], saved.approvals_whitelist_username),
          ...droppedOf(input.push_whitelist_teams ?? [], saved.push_whitelist_teams),
          ...droppedOf(input.merge_whitelist_teams ?? [], saved.merge_whitelist_teams),
          ...droppedOf(input.approvals_whitelist_teams ?? [], saved.approvals_whitelist_teams)
        ]
        const extra = dropped.length === 0 ? "" : `&dropped=${encodeURIComponent([...new Set(dropped)].join(", "))}`
        return web.redirect(view.ctx, `${view.base}/settings/branches?done=rule-saved${extra}`)
      })

    // ---- Tag rules

    const tagsPage = (
      view: RepoView,
      editing: TagProtection | undefined,
      typed: Typed,
      errors: FieldErrors,
      message?: string
    ) =>
      Effect.gen(function* () {
        const { base, ctx } = view
        const rules = yield* protection.listTagRules(view)
        const value = (name: string, current: string) => typed[name] ?? current
        const list =
          rules.length === 0
            ? html`<div class="Box-body color-fg-muted">No tag is protected.</div>`
            : html`<ul>${rules.map(
                (r) => html`<li class="Box-row d-flex flex-items-center flex-wrap" data-testid="tag-rule">
  <div class="flex-auto min-width-0 mr-2">
    <code class="text-bold wb-break-all" data-testid="tag-rule-pattern">${r.name_pattern}</code>
    <div class="f6 color-fg-muted mt-1">${
      r.whitelist_usernames.length + r.whitelist_teams.length === 0
        ? "Nobody may create, move or delete these tags."
        : html`May be created, moved and deleted by: <span data-testid="tag-rule-allowed">${[...r.whitelist_usernames, ...r.whitelist_teams].join(", ")}</span>`
    }</div>
  </div>
  <a class="btn btn-sm" href="${base}/settings/tags?id=${String(r.id)}" aria-label="Edit the tag rule ${r.name_pattern}">${icon("pencil")} Edit</a>
  ${confirmDelete(view, `${base}/settings/tags/delete`, { id: String(r.id) }, `the tag rule ${r.name_pattern}`)}
</li>`
              )}</ul>`
        const form = html`<form method="post" action="${base}/settings/tags" data-testid="tag-rule-form">
  ${csrfField(ctx)}
  ${editing === undefined ? empty : html`<input type="hidden" name="id" value="${String(editing.id)}">`}
  ${field({ name: "name_pattern", label: "Tag name or pattern", value: value("name_pattern", editing?.name_pattern ?? ""), autocomplete: "off", required: true, hint: "A glob (v*) or a regular expression between slashes (/^v[0-9]+$/)." }, errors)}
  ${field({ name: "allowlist_users", label: "Users who may create, move and delete them", value: value("allowlist_users", (editing?.whitelist_usernames ?? []).join(", ")), autocomplete: "off", hint: "User names, separated by commas or spaces; with none (and no team), nobody may." }, errors)}
  ${
    isOrg(view)
      ? field(
          {
            name: "allowlist_teams",
            label: "Teams who may create, move and delete them",
            value: value("allowlist_teams", (editing?.whitelist_teams ?? []).join(", ")),
            autocomplete: "off",
            hint: "Team names of the organization, separated by commas or spaces."
          },
          errors
        )
      : empty
  }
  <button class="btn btn-primary" type="submit">${editing === undefined ? "Add tag rule" : "Save tag rule"}</button>
  ${editing === undefined ? empty : html`<a class="btn ml-2" href="${base}/settings/tags">Cancel</a>`}
</form>`
        return yield* settings.page(
          view,
          {
            menu: "tags",
            title: "Tags",
            ...(message !== undefined || Object.keys(errors).length > 0 ? { status: 422 } : {})
          },
          html`${noticeOf(view)}${formError(message)}
<section class="Box mb-4" data-testid="tag-rules">
  <div class="Box-header"><h2 class="Box-title">Protected tags</h2></div>
  ${list}
</section>
<section class="Box mb-4">
  <div class="Box-header"><h2 class="Box-title">${editing === undefined ? "Protect tags" : html`Edit the rule <code>${editing.name_pattern}</code>`}</h2></div>
  <div class="Box-body">${form}</div>
</section>`
        )
      })

    const saveTag = (view: RepoView, form: Form) =>
      Effect.gen(function* () {
        if (repoRefusal(view.caller, view, CHANGE_RULE) !== undefined) return archivedPage(view)
        const typed: Typed = Object.fromEntries([...form].filter(([k]) => k !== "_csrf"))
        const id = form.get("id")
        const editing = id === null ? undefined : yield* protection.getTagRule(view, id)
        const input = {
          name_pattern: (form.get("name_pattern") ?? "").trim(),
          whitelist_usernames: namesOf(form.get("allowlist_users") ?? ""),
          whitelist_teams: isOrg(view) ? namesOf(form.get("allowlist_teams") ?? "") : []
        }
        if (input.name_pattern === "")
          return yield* tagsPage(view, editing, typed, {
            name_pattern: "Enter the tag name or pattern the rule protects."
          })
        const result = yield* Effect.result(
          editing === undefined
            ? protection.createTagRule(view, input)
            : protection.editTagRule(view, String(editing.id), input)
        )
        if (result._tag === "Failure") {
          const failure = result.failure
          if (failure instanceof Errors.NotFound) return web.notFound(view.ctx)
          const message = failure.message
          const errors: FieldErrors =
            message === "name_pattern is invalid"
              ? { name_pattern: "This is neither a valid glob nor a valid regular expression between slashes." }
              : message === "Tag protection already exist"
                ? { name_pattern: `A rule for ${input.name_pattern} exists already: edit it instead.` }
                : /^user does not exist/.test(message)
                  ? { allowlist_users: `There is no user named ${/name: (.*)\]$/.exec(message)?.[1] ?? ""}.` }
                  : /^team does not exist/.test(message)
                    ? {
                        allowlist_teams: `${view.owner.name} has no team named ${/name: (.*)\]$/.exec(message)?.[1] ?? ""}.`
                      }
                    : {}
          return yield* tagsPage(view, editing, typed, errors, Object.keys(errors).length === 0 ? message : undefined)
        }
        const saved = result.success
        const dropped = [
          ...droppedOf(input.whitelist_usernames, saved.whitelist_usernames),
          ...droppedOf(input.whitelist_teams, saved.whitelist_teams)
        ]
        const extra = dropped.length === 0 ? "" : `&dropped=${encodeURIComponent([...new Set(dropped)].join(", "))}`
        return web.redirect(view.ctx, `${view.base}/settings/tags?done=tag-saved${extra}`)
      })

    return [
      settings.adminRoute("GET", "/:owner/:repo/settings/branches", branchesPage),
      settings.adminRoute("GET", "/:owner/:repo/settings/branches/edit", (view) =>
        Effect.gen(function* () {
          const name = view.ctx.url.searchParams.get("rule_name") ?? ""
          const rule = name === "" ? undefined : yield* protection.getBranchRule(view, name)
          return yield* ruleForm(view, rule, undefined, {})
        })
      ),
      settings.adminRoute("POST", "/:owner/:repo/settings/branches/edit", saveRule),
      settings.adminRoute("POST", "/:owner/:repo/settings/branches/priority", (view, form) =>
        Effect.gen(function* () {
          const order = yield* protection.branchRuleOrder(view)
          const at = order.findIndex((r) => r.ruleName === form.get("rule_name"))
          if (at < 0) return web.notFound(view.ctx)
          const other = form.get("direction") === "up" ? at - 1 : at + 1
          // Only patterns change places (a rule for a name is tried first wherever it stands).
          if (other >= 0 && other < order.length && isGlob(order[at]!.ruleName) && isGlob(order[other]!.ruleName)) {
            const ids = order.map((r) => r.id)
            ;[ids[at], ids[other]] = [ids[other]!, ids[at]!]
            yield* protection.setPriorities(view, ids)
          }
          return web.redirect(view.ctx, `${view.base}/settings/branches?done=rule-moved`)
        })
      ),
      settings.adminRoute("POST", "/:owner/:repo/settings/branches/delete", (view, form) =>
        Effect.gen(function* () {
          yield* protection.deleteBranchRule(view, form.get("rule_name") ?? "")
          return web.redirect(view.ctx, `${view.base}/settings/branches?done=rule-deleted`)
        })
      ),
      settings.adminRoute("GET", "/:owner/:repo/settings/tags", (view) =>
        Effect.gen(function* () {
          const id = view.ctx.url.searchParams.get("id")
          const editing = id === null ? undefined : yield* protection.getTagRule(view, id)
          return yield* tagsPage(view, editing, {}, {})
        })
      ),
      settings.adminRoute("POST", "/:owner/:repo/settings/tags", saveTag),
      settings.adminRoute("POST", "/:owner/:repo/settings/tags/delete", (view, form) =>
        Effect.gen(function* () {
          yield* protection.deleteTagRule(view, form.get("id") ?? "")
          return web.redirect(view.ctx, `${view.base}/settings/tags?done=tag-deleted`)
        })
      )
    ]
  })
