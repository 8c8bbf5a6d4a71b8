// Handlers of the quota group: site administrators manage rules, groups and memberships (names
// shown); an account sees its own quota, and an organization's owners see the organization's
// (names hidden, as Forgejo shows them to non-administrators).
import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { siteAdmin } from "../admin/Policy.ts"
import { Settings } from "../config/Settings.ts"
import { signedInCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { OrgPolicy } from "../orgs/Policy.ts"
import { OrgsService } from "../orgs/Service.ts"
import { PackagesService } from "../packages/Service.ts"
import { AccountPolicy } from "../users/Policy.ts"
import type { UserRow } from "../users/Repo.ts"
import { toApiUser } from "../users/Schema.ts"
import { UsersService } from "../users/Service.ts"
import { type Group, isSubject, type Rule, type Used, unrecognizedSubject } from "./Evaluate.ts"
import { QuotaService } from "./Service.ts"

/** Forgejo's QuotaRuleInfo: the name for administrators only, no `subjects` when there are none. */
export const toRuleInfo = (rule: Rule, withNames: boolean) => ({
  ...(withNames && rule.name !== "" ? { name: rule.name } : {}),
  limit: rule.limit,
  ...(rule.subjects.length > 0 ? { subjects: [...rule.subjects] } : {})
})

export const toQuotaGroup = (group: Group, withNames: boolean) => ({
  ...(withNames && group.name !== "" ? { name: group.name } : {}),
  rules: group.rules.map((rule) => toRuleInfo(rule, withNames))
})

/** Forgejo's QuotaUsed (note the upper-case `LFS`). */
export const toQuotaUsed = (used: Used) => ({
  size: {
    repos: { public: used.repos.public, private: used.repos.private },
    git: { LFS: used.lfs },
    assets: {
      attachments: { issues: used.attachments.issues, releases: used.attachments.releases },
      artifacts: used.artifacts,
      packages: { all: used.packages }
    }
  }
})

const toQuotaInfo = (state: { readonly used: Used; readonly groups: ReadonlyArray<Group> }, withNames: boolean) => ({
  used: toQuotaUsed(state.used),
  groups: state.groups.map((group) => toQuotaGroup(group, withNames))
})

export const QuotaHttp = apiGroup(HearthApi, "quota", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const quota = yield* QuotaService
    const users = yield* UsersService
    const orgs = yield* OrgsService
    const orgPolicy = yield* OrgPolicy
    const accounts = yield* AccountPolicy
    const packages = yield* PackagesService

    /** A site administrator's call: 403 for anyone else. */
    const asAdmin = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.andThen(siteAdmin, effect)

    /** `?subject=` of the check routes, trimmed; 422 when it names no subject. */
    const check = (account: UserRow, text: string | undefined) => {
      const subject = (text ?? "").trim()
      return isSubject(subject)
        ? quota.allows(account.id, subject)
        : Effect.fail(Errors.validationFailed(unrecognizedSubject(subject)))
    }

    /**
     * Forgejo's QuotaUsedAttachmentList (services/convert `ToQuotaUsedAttachmentList`): each file
     * with the API and web URLs of what contains it (an issue, a comment or a release), its own
     * API URL that container's `/assets/{id}`.
     */
    const attachmentsOf = (
      owner: UserRow,
      query: { readonly page?: string | undefined; readonly limit?: string | undefined }
    ) =>
      Effect.gen(function* () {
        const page = yield* resolvePage(query)
        const { rows, total } = yield* quota.attachments(owner.id, page)
        yield* setListHeaders(page, total, { withLink: true })
        const root = settings.server.ROOT_URL
        return rows.map((row) => {
          const repoPath = `${encodeURIComponent(owner.name)}/${encodeURIComponent(row.repoName)}`
          const repoApi = `${root}api/v1/repos/${repoPath}`
          const issueHtml = `${root}${repoPath}/${row.isPull ? "pulls" : "issues"}/${row.issueIndex}`
          const container =
            row.releaseId !== null
              ? {
                  api_url: `${repoApi}/releases/${row.releaseId}`,
                  html_url: `${root}${repoPath}/releases/tag/${(row.tagName ?? "").split("/").map(encodeURIComponent).join("/")}`
                }
              : row.commentId !== null
                ? {
                    api_url: `${repoApi}/issues/comments/${row.commentId}`,
                    html_url: `${issueHtml}#issuecomment-${row.commentId}`
                  }
                : { api_url: `${repoApi}/issues/${row.issueIndex}`, html_url: issueHtml }
          return {
            name: row.name,
            size: row.size,
            api_url: `${container.api_url}/assets/${row.id}`,
            contained_in: container
          }
        })
      })

    /** The package files counted in the account's quota, a page of them. */
    const packageList = (
      account: UserRow,
      query: { readonly page?: string | undefined; readonly limit?: string | undefined }
    ) =>
      Effect.gen(function* () {
        const page = yield* resolvePage(query)
        const listed = yield* packages.quotaList(account, page)
        yield* setListHeaders(page, listed.total, { withLink: true })
        return listed.items
      })

    /** Hearth stores no artifacts yet: those lists are empty. */
    const nothingStored = (query: { readonly page?: string | undefined; readonly limit?: string | undefined }) =>
      Effect.gen(function* () {
        yield* setListHeaders(yield* resolvePage(query), 0, { withLink: true })
        return []
      })

    /** An organization whose quota the caller may see: its owners and site admins (Forgejo's reqOrgOwnership). */
    const ownedOrg = (name: string) =>
      Effect.gen(function* () {
        const caller = yield* signedInCaller
        const org = yield* orgs.get(name)
        yield* accounts.ensureVisible(caller, org)
        yield* orgPolicy.ensureOwner(caller, org)
        return org
      })

    return handlers
      .handle("adminListQuotaGroups", () =>
        asAdmin(Effect.map(quota.listGroups, (groups) => groups.map((g) => toQuotaGroup(g, true))))
      )
      .handle("adminCreateQuotaGroup", ({ payload }) =>
        asAdmin(Effect.map(quota.createGroup(payload.name, payload.rules ?? []), (g) => toQuotaGroup(g, true)))
      )
      .handle("adminGetQuotaGroup", ({ params }) =>
        asAdmin(Effect.map(quota.getGroup(params.quotagroup), (g) => toQuotaGroup(g, true)))
      )
      .handle("adminDeleteQuotaGroup", ({ params }) => asAdmin(quota.deleteGroup(params.quotagroup)))
      .handle("adminListUsersInQuotaGroup", ({ params }) =>
        Effect.gen(function* () {
          const doer = yield* siteAdmin
          const members = yield* quota.usersIn(params.quotagroup)
          return members.map((user) => toApiUser(settings, user, doer))
        })
      )
      .handle("adminAddUserToQuotaGroup", ({ params }) =>
        asAdmin(Effect.flatMap(users.get(params.username), (user) => quota.addUser(params.quotagroup, user)))
      )
      .handle("adminRemoveUserFromQuotaGroup", ({ params }) =>
        asAdmin(Effect.flatMap(users.get(params.username), (user) => quota.removeUser(params.quotagroup, user)))
      )
      .handle("adminAddRuleToQuotaGroup", ({ params }) => asAdmin(quota.addRule(params.quotagroup, params.quotarule)))
      .handle("adminRemoveRuleFromQuotaGroup", ({ params }) =>
        asAdmin(quota.removeRule(params.quotagroup, params.quotarule))
      )
      .handle("adminListQuotaRules", () =>
        asAdmin(Effect.map(quota.listRules, (rules) => rules.map((r) => toRuleInfo(r, true))))
      )
      .handle("adminCreateQuotaRule", ({ payload }) =>
        asAdmin(Effect.map(quota.createRule(payload), (rule) => toRuleInfo(rule, true)))
      )
      .handle("adminGetQuotaRule", ({ params }) =>
        asAdmin(Effect.map(quota.getRule(params.quotarule), (rule) => toRuleInfo(rule, true)))
      )
      .handle("adminEditQuotaRule", ({ params, payload }) =>
        asAdmin(Effect.map(quota.editRule(params.quotarule, payload), (rule) => toRuleInfo(rule, true)))
      )
      .handle("adminDeleteQuotaRule", ({ params }) => asAdmin(quota.deleteRule(params.quotarule)))
      .handle("adminGetUserQuota", ({ params }) =>
        asAdmin(
          Effect.gen(function* () {
            const user = yield* users.get(params.username)
            return toQuotaInfo(yield* quota.info(user.id), true)
          })
        )
      )
      .handle("adminSetUserQuotaGroups", ({ params, payload }) =>
        asAdmin(Effect.flatMap(users.get(params.username), (user) => quota.setUserGroups(user, payload.groups)))
      )
      .handle("userGetQuota", () =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          return toQuotaInfo(yield* quota.info(caller.user.id), false)
        })
      )
      .handle("userCheckQuota", ({ query }) =>
        Effect.flatMap(signedInCaller, (caller) => check(caller.user, query.subject))
      )
      .handle("userListQuotaAttachments", ({ query }) =>
        Effect.flatMap(signedInCaller, (caller) => attachmentsOf(caller.user, query))
      )
      .handle("userListQuotaPackages", ({ query }) =>
        Effect.flatMap(signedInCaller, (caller) => packageList(caller.user, query))
      )
      .handle("userListQuotaArtifacts", ({ query }) => nothingStored(query))
      .handle("orgGetQuota", ({ params }) =>
        Effect.gen(function* () {
          const org = yield* ownedOrg(params.org)
          return toQuotaInfo(yield* quota.info(org.id), false)
        })
      )
      .handle("orgCheckQuota", ({ params, query }) =>
        Effect.flatMap(ownedOrg(params.org), (org) => check(org, query.subject))
      )
      .handle("orgListQuotaAttachments", ({ params, query }) =>
        Effect.flatMap(ownedOrg(params.org), (org) => attachmentsOf(org, query))
      )
      .handle("orgListQuotaPackages", ({ params, query }) =>
        Effect.flatMap(ownedOrg(params.org), (org) => packageList(org, query))
      )
      .handle("orgListQuotaArtifacts", ({ params, query }) =>
        Effect.andThen(ownedOrg(params.org), nothingStored(query))
      )
  })
)
