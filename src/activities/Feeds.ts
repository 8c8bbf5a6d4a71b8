// RSS and Atom feeds of an account and of a repository (Forgejo's routers/web/feed): `/{owner}.rss`,
// `/{owner}.atom`, `/{owner}/{repo}.rss`, `/{owner}/{repo}.atom`, the newest actions the viewer may
// see (the API's feeds, src/activities/Service.ts), titled as Forgejo's dashboard words them
// ("alice pushed to main at alice/code"). Names ending in `.rss` or `.atom` are reserved for
// accounts and repositories (src/lib/Names.ts), so these paths never hide a profile or a repository.
// The federation outbox stays the ActivityPub view of an account.
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { makeViewerOf } from "../auth/Viewer.ts"
import * as Errors from "../http/Errors.ts"
import { OrgsService } from "../orgs/Service.ts"
import { UsersService } from "../users/Service.ts"
import type { RepoFrame } from "../web/RepoFrame.ts"
import type { Web, WebContext } from "../web/Web.ts"
import type { Activity } from "./Api.ts"
import { ActivitiesService } from "./Service.ts"
import { type Xml, xml } from "./Xml.ts"

/** Forgejo's `[ui] FEED_PAGING_NUM`. */
const FEED_ITEMS = 20

type Format = "rss" | "atom"

const shortRef = (ref: string) => ref.replace(/^refs\/(?:heads|tags)\//, "")

interface Item {
  readonly title: string
  readonly link: string
  readonly description: string
}

/** The commits of a push's `content` (Forgejo's PushCommits JSON), newest first. */
const commitsOf = (content: string): ReadonlyArray<{ readonly Sha1: string; readonly Message: string }> => {
  try {
    const parsed = JSON.parse(content) as { Commits?: Array<{ Sha1: string; Message: string }> | null }
    return Array.isArray(parsed.Commits) ? parsed.Commits : []
  } catch {
    return []
  }
}

/** An action as a feed item, worded as Forgejo's `feedActionsToFeedItems`. */
export const itemOf = (a: Activity): Item => {
  const who = a.act_user.login
  const repoName = a.repo.full_name
  const repoUrl = a.repo.html_url
  const ref = shortRef(a.ref_name)
  const [index = "", ...rest] = a.content.split("|")
  const text = rest.join("|")
  const issueLink = (kind: "issues" | "pulls") => `${repoUrl}/${kind}/${index}`
  const ofIssue = (verb: string, kind: "issues" | "pulls", noun: string) => ({
    title: `${who} ${verb} ${noun} ${repoName}#${index}`,
    link: issueLink(kind),
    description: text
  })
  switch (a.op_type) {
    case "create_repo":
      return { title: `${who} created repository ${repoName}`, link: repoUrl, description: "" }
    case "rename_repo":
      return { title: `${who} renamed repository from ${a.content} to ${repoName}`, link: repoUrl, description: "" }
    case "transfer_repo":
      return { title: `${who} transferred repository ${a.content} to ${repoName}`, link: repoUrl, description: "" }
    case "commit_repo":
    case "mirror_sync_push": {
      const commits = commitsOf(a.content)
      return {
        title: `${who} ${a.op_type === "commit_repo" ? "pushed to" : "synced commits to"} ${ref} at ${repoName}`,
        link: `${repoUrl}/src/branch/${encodeURIComponent(ref)}`,
        description: commits.map((c) => `${c.Sha1.slice(0, 10)} ${c.Message.split("\n")[0]}`).join("\n")
      }
    }
    case "push_tag":
      return {
        title: `${who} pushed tag ${ref} to ${repoName}`,
        link: `${repoUrl}/src/tag/${encodeURIComponent(ref)}`,
        description: ""
      }
    case "delete_tag":
      return { title: `${who} deleted tag ${ref} from ${repoName}`, link: repoUrl, description: "" }
    case "delete_branch":
      return { title: `${who} deleted branch ${ref} from ${repoName}`, link: repoUrl, description: "" }
    case "mirror_sync_create":
      return { title: `${who} synced new reference ${ref} to ${repoName}`, link: repoUrl, description: "" }
    case "mirror_sync_delete":
      return { title: `${who} synced and deleted reference ${ref} at ${repoName}`, link: repoUrl, description: "" }
    case "create_issue":
      return ofIssue("opened", "issues", "issue")
    case "close_issue":
      return ofIssue("closed", "issues", "issue")
    case "reopen_issue":
      return ofIssue("reopened", "issues", "issue")
    case "comment_issue":
      return ofIssue("commented on", "issues", "issue")
    case "create_pull_request":
      return ofIssue("created", "pulls", "pull request")
    case "close_pull_request":
      return ofIssue("closed", "pulls", "pull request")
    case "reopen_pull_request":
      return ofIssue("reopened", "pulls", "pull request")
    case "merge_pull_request":
    case "auto_merge_pull_request":
      return ofIssue("merged", "pulls", "pull request")
    case "comment_pull":
      return ofIssue("commented on", "pulls", "pull request")
    case "approve_pull_request":
      return ofIssue("approved", "pulls", "pull request")
    case "reject_pull_request":
      return ofIssue("suggested changes for", "pulls", "pull request")
    case "pull_review_dismissed":
      return ofIssue("dismissed a review of", "pulls", "pull request")
    case "pull_request_ready_for_review":
      return ofIssue("marked ready for review", "pulls", "pull request")
    case "publish_release":
      return {
        title: `${who} released ${a.ref_name} at ${repoName}`,
        link: `${repoUrl}/releases/tag/${encodeURIComponent(a.ref_name)}`,
        description: a.content
      }
    default:
      return { title: `${who} acted on ${repoName}`, link: repoUrl, description: "" }
  }
}

/** RFC 1123 with a numeric zone, as RSS 2.0 dates are written. */
const rssDate = (iso: string) => new Date(iso).toUTCString().replace("GMT", "+0000")

/** The feed document: its title and link, and the actions newest first. */
export const renderFeed = (
  format: Format,
  channel: { readonly title: string; readonly link: string; readonly description: string; readonly self: string },
  activities: ReadonlyArray<Activity>
): string => {
  const updated = activities[0]?.created ?? new Date().toISOString()
  const body: Xml =
    format === "rss"
      ? xml`<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
  <channel>
    <title>${channel.title}</title>
    <link>${channel.link}</link>
    <description>${channel.description}</description>
    <atom:link href="${channel.self}" rel="self" type="application/rss+xml"/>
    <lastBuildDate>${rssDate(updated)}</lastBuildDate>
${activities.map((a) => {
  const item = itemOf(a)
  return xml`    <item>
      <title>${item.title}</title>
      <link>${item.link}</link>
      <description>${item.description}</description>
      <guid isPermaLink="false">${`${channel.link}#action-${a.id}`}</guid>
      <pubDate>${rssDate(a.created)}</pubDate>
    </item>
`
})}  </channel>
</rss>
`
      : xml`<feed xmlns="http://www.w3.org/2005/Atom">
  <title>${channel.title}</title>
  <id>${channel.link}</id>
  <link href="${channel.link}" rel="alternate"/>
  <link href="${channel.self}" rel="self"/>
  <subtitle>${channel.description}</subtitle>
  <updated>${updated}</updated>
${activities.map((a) => {
  const item = itemOf(a)
  return xml`  <entry>
    <title>${item.title}</title>
    <id>${`${channel.link}#action-${a.id}`}</id>
    <link href="${item.link}" rel="alternate"/>
    <updated>${a.created}</updated>
    <author><name>${a.act_user.login}</name></author>
    <summary type="text">${item.description}</summary>
  </entry>
`
})}</feed>
`
  return `<?xml version="1.0" encoding="UTF-8"?>\n${body.text}`
}

const CONTENT_TYPES: Record<Format, string> = {
  rss: "application/rss+xml; charset=utf-8",
  atom: "application/atom+xml; charset=utf-8"
}

export const FeedPages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const activities = yield* ActivitiesService
    const users = yield* UsersService
    const orgs = yield* OrgsService
    // Feed readers sign in with Basic or a token more often than with a session.
    const viewerOf = yield* makeViewerOf
    const page = { page: 1, limit: FEED_ITEMS, offset: 0 }
    const answer = (format: Format, document: string) =>
      HttpServerResponse.text(document, { contentType: CONTENT_TYPES[format] })

    /** The path's segments, decoded, with the format's suffix taken off the last (undefined when malformed). */
    const namesOf = (ctx: WebContext, format: Format) => {
      try {
        const segments = ctx.url.pathname.split("/").slice(1).map(decodeURIComponent)
        const last = segments.length - 1
        segments[last] = segments[last]!.slice(0, -(format.length + 1))
        return segments.some((s) => s === "") ? undefined : segments
      } catch {
        return undefined
      }
    }

    const accountFeed = (format: Format) => (ctx: WebContext) =>
      Effect.gen(function* () {
        const names = namesOf(ctx, format)
        if (names?.length !== 1) return yield* Errors.notFound()
        const viewer = yield* viewerOf(ctx.request)
        const account = yield* users.visible(viewer, names[0]!)
        const listed =
          account.type === "organization"
            ? yield* activities.orgFeed(viewer, yield* orgs.get(account.name), {}, page)
            : yield* activities.userFeed(viewer, account, { onlyPerformedBy: true }, page)
        const link = `${ctx.settings.server.ROOT_URL}${encodeURIComponent(account.name)}`
        return answer(
          format,
          renderFeed(
            format,
            {
              title: `Feed of "${account.fullName === "" ? account.name : account.fullName}"`,
              link,
              description: account.description,
              self: `${link}.${format}`
            },
            listed.items
          )
        )
      })

    const repoFeed = (format: Format) => (ctx: WebContext) =>
      Effect.gen(function* () {
        const names = namesOf(ctx, format)
        if (names?.length !== 2) return yield* Errors.notFound()
        const viewer = yield* viewerOf(ctx.request)
        const opened = yield* frame.repos.assign(viewer, names[0]!, names[1]!, { role: "read" })
        const listed = yield* activities.repoFeed(viewer, opened.repo, {}, page)
        const link = `${ctx.settings.server.ROOT_URL}${encodeURIComponent(opened.owner.name)}/${encodeURIComponent(opened.repo.name)}`
        return answer(
          format,
          renderFeed(
            format,
            {
              title: `Feed of "${opened.owner.name}/${opened.repo.name}"`,
              link,
              description: opened.repo.description,
              self: `${link}.${format}`
            },
            listed.items
          )
        )
      })

    return [
      web.route("GET", "/:owner.rss", { access: "view" }, accountFeed("rss")),
      web.route("GET", "/:owner.atom", { access: "view" }, accountFeed("atom")),
      web.route("GET", "/:owner/:repo.rss", { access: "view" }, repoFeed("rss")),
      web.route("GET", "/:owner/:repo.atom", { access: "view" }, repoFeed("atom"))
    ]
  })
