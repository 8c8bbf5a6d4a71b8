// A delivery's HTTP request from its stored payload, by hook type (Forgejo's services/webhook:
// default.go for forgejo/gitea/gogs, slack.go, discord.go, dingtalk.go, telegram.go, msteams.go,
// feishu.go, wechatwork.go, matrix.go, packagist.go, sourcehut/builds.go; the texts of general.go).
// Conversion happens at delivery time, as in Forgejo; the payload is the event's JSON.
import { createHash, createHmac } from "node:crypto"
import { coarseEvent, type HookType } from "./Kinds.ts"

export interface Outgoing {
  readonly url: string
  readonly method: "POST" | "PUT"
  readonly headers: Record<string, string>
  readonly body: string
}

export interface HookForDelivery {
  readonly type: HookType
  readonly url: string
  /** 1 json, 2 form. */
  readonly contentType: number
  readonly secret: string
  readonly meta: Record<string, unknown> | null
}

/** Why a request could not be built (the delivery fails without sending: Forgejo's build errors). */
export class CannotConvert extends Error {}

type Json = Record<string, any>

const str = (value: unknown) => (typeof value === "string" ? value : "")
const metaOf = (hook: HookForDelivery, key: string) => str(hook.meta?.[key])

/** Short branch or tag name of a full ref. */
export const refName = (ref: string) => ref.replace(/^refs\/(heads|tags)\//, "")
const refKind = (ref: string) => (ref.startsWith("refs/tags/") ? "tag" : "branch")
const firstLine = (text: string) => text.split("\n")[0]!.trim()

const hmac = (algorithm: "sha1" | "sha256", secret: string, body: string) =>
  createHmac(algorithm, secret).update(body).digest("hex")

/** Forgejo's `AddDefaultHeaders` (every type but matrix, packagist and sourcehut_builds): ids, event names and signatures (sent empty without a secret). */
const defaultHeaders = (secret: string, signed: string, uuid: string, eventType: string) => {
  const sha256 = secret === "" ? "" : hmac("sha256", secret, signed)
  const sha1 = secret === "" ? "" : hmac("sha1", secret, signed)
  const event = coarseEvent(eventType)
  const headers: Record<string, string> = {}
  for (const vendor of ["Forgejo", "Gitea", "Gogs", "GitHub"]) {
    headers[`X-${vendor}-Delivery`] = uuid
    headers[`X-${vendor}-Event`] = event
    headers[`X-${vendor}-Event-Type`] = eventType
  }
  for (const vendor of ["Forgejo", "Gitea", "Gogs"]) headers[`X-${vendor}-Signature`] = sha256
  headers["X-Hub-Signature"] = `sha1=${sha1}`
  headers["X-Hub-Signature-256"] = `sha256=${sha256}`
  return headers
}

const sortedCompact = (value: unknown): string => {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v !== null && typeof v === "object"
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sort((v as Json)[k])])
          )
        : v
  return JSON.stringify(sort(value))
}

// ---------------------------------------------------------------------------------------------
// The shared texts (services/webhook/general.go), as plain parts that each target links its way.

interface Link {
  readonly text: string
  readonly url: string
}
type Part = string | Link
interface Info {
  /** The one-line summary, with links. */
  readonly title: ReadonlyArray<Part>
  /** Where the summary leads. */
  readonly url: string
  /** Detail lines (commits, a comment's body). */
  readonly lines: ReadonlyArray<ReadonlyArray<Part>>
  readonly color: number
}

const GREEN = 0x1ac600
const LIGHT_GREEN = 0xbfe5bf
const YELLOW = 0xffd930
const GREY = 0x4f545c
const PURPLE = 0x7289da
const ORANGE = 0xeb6420
const RED = 0xff3232

const repoLink = (p: Json): Link => ({ text: str(p.repository?.full_name), url: str(p.repository?.html_url) })
const userName = (p: Json) => str(p.sender?.login)

const infoOf = (eventType: string, p: Json): Info => {
  const repo = repoLink(p)
  const repoUrl = repo.url
  switch (eventType) {
    case "push": {
      const branch = refName(str(p.ref))
      const commits: Array<Json> = Array.isArray(p.commits) ? p.commits : []
      const n = commits.length
      const what = `${n} new commit${n === 1 ? "" : "s"}`
      const branchUrl = `${repoUrl}/src/${refKind(str(p.ref))}/${branch}`
      return {
        title: [
          "[",
          { text: `${repo.text}:${branch}`, url: branchUrl },
          "] ",
          str(p.compare_url) !== "" && n > 0 ? { text: what, url: str(p.compare_url) } : what,
          ` pushed by ${str(p.pusher?.login)}`
        ],
        url: n === 1 ? str(commits[0]!.url) : str(p.compare_url) || branchUrl,
        lines: commits.map((c) => [
          { text: str(c.id).slice(0, 7), url: str(c.url) },
          `: ${firstLine(str(c.message))} - ${str(c.author?.name)}`
        ]),
        color: GREEN
      }
    }
    case "create":
    case "delete": {
      const name = refName(str(p.ref))
      const kind = str(p.ref_type) || refKind(str(p.ref))
      return {
        title: ["[", repo, `] ${kind} `, name, ` ${eventType === "create" ? "created" : "deleted"} by ${userName(p)}`],
        url: eventType === "create" ? `${repoUrl}/src/${kind}/${name}` : repoUrl,
        lines: [],
        color: eventType === "create" ? GREEN : GREY
      }
    }
    case "fork":
      return {
        title: [`${userName(p)} forked `, repoLink({ repository: p.forkee }), " to ", repo],
        url: repoUrl,
        lines: [],
        color: GREEN
      }
    case "repository":
      return {
        title: ["[", repo, `] Repository ${str(p.action)}`],
        url: repoUrl,
        lines: [],
        color: p.action === "deleted" ? RED : GREEN
      }
    case "release": {
      const tag = str(p.release?.tag_name)
      const action = p.action === "published" ? "created" : str(p.action)
      return {
        title: ["[", repo, `] Release ${action}: `, { text: tag, url: str(p.release?.html_url) || repoUrl }],
        url: str(p.release?.html_url) || repoUrl,
        lines: [],
        color: p.action === "deleted" ? RED : GREEN
      }
    }
    case "wiki": {
      const page = str(p.page)
      const link = { text: page, url: `${repoUrl}/wiki/${encodeURIComponent(page)}` }
      const comment = str(p.comment)
      const tail = p.action !== "deleted" && comment !== "" ? ` (${comment})` : ""
      const title: Array<Part> =
        p.action === "created"
          ? ["[", repo, "] New wiki page '", link, `'${tail}`]
          : p.action === "deleted"
            ? ["[", repo, "] Wiki page '", link, "' deleted"]
            : ["[", repo, "] Wiki page '", link, `' ${str(p.action) || "edited"}${tail}`]
      return { title, url: link.url, lines: [], color: p.action === "deleted" ? RED : YELLOW }
    }
    case "status": {
      // Gitea's getStatusPayloadInfo: the context, commit and description, linked to the target.
      const sha = str(p.sha)
      const what = `${str(p.context)}[${sha.slice(0, 10)}]: ${str(p.description)}`
      const target = str(p.target_url) || str(p.commit?.url) || repoUrl
      return {
        title: ["[", repo, "] Commit Status changed: ", { text: what, url: target }, ` by ${userName(p)}`],
        url: target,
        lines: [],
        color: p.state === "success" ? GREEN : p.state === "pending" ? YELLOW : p.state === "warning" ? ORANGE : RED
      }
    }
    case "issue_comment":
    case "pull_request_comment": {
      const issue = p.issue ?? {}
      const kind = p.is_pull === true ? "pull request" : "issue"
      const action =
        p.action === "created" ? "New comment on" : p.action === "edited" ? "Comment edited on" : "Comment deleted on"
      return {
        title: [
          "[",
          repo,
          `] ${action} ${kind} `,
          { text: `#${issue.number}: ${str(issue.title)}`, url: str(p.comment?.html_url) || str(issue.html_url) }
        ],
        url: str(p.comment?.html_url) || str(issue.html_url),
        lines: p.action === "deleted" ? [] : [[str(p.comment?.body)]],
        color: p.action === "deleted" ? RED : LIGHT_GREEN
      }
    }
    default: {
      // issues*, pull_request*, reviews, package, action runs.
      const isPull = p.pull_request != null && eventType.startsWith("pull_request")
      const item = isPull ? p.pull_request : (p.issue ?? p.package)
      const kind = isPull ? "Pull request" : p.issue != null ? "Issue" : eventType
      const number = item?.number !== undefined ? `#${item.number} ` : ""
      const action = str(p.action).replace(/_/g, " ")
      const closed = p.action === "closed"
      return {
        title: [
          "[",
          repo,
          `] ${kind} ${action}: `,
          { text: `${number}${str(item?.title ?? item?.name)}`, url: str(item?.html_url) || repoUrl },
          ` by ${userName(p)}`
        ],
        url: str(item?.html_url) || repoUrl,
        lines: p.action === "opened" && str(item?.body) !== "" ? [[str(item.body)]] : [],
        color: closed ? RED : p.action === "opened" ? (isPull ? PURPLE : ORANGE) : YELLOW
      }
    }
  }
}

type LinkStyle = (link: Link) => string
const render = (parts: ReadonlyArray<Part>, link: LinkStyle, text: (s: string) => string = (s) => s) =>
  parts.map((part) => (typeof part === "string" ? text(part) : link(part))).join("")

const html = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")
const markdownLink: LinkStyle = (l) => `[${l.text}](${l.url})`
const htmlLink: LinkStyle = (l) => `<a href="${html(l.url)}">${html(l.text)}</a>`
const slackEscape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
const slackLink: LinkStyle = (l) => `<${l.url}|${slackEscape(l.text)}>`
const cut = (s: string, max: number) => ([...s].length > max ? `${[...s].slice(0, max - 3).join("")}...` : s)
const pretty = (value: unknown) => JSON.stringify(value, null, 2)

const chatBody = (type: HookType, hook: HookForDelivery, eventType: string, p: Json): Json => {
  const info = infoOf(eventType, p)
  const plain = render(info.title, (l) => l.text)
  const lines = (link: LinkStyle, text?: (s: string) => string) =>
    info.lines.map((line) => render(line, link, text)).join("\n")
  switch (type) {
    case "slack": {
      const text = render(info.title, slackLink, slackEscape)
      const detail = lines(slackLink, slackEscape)
      return {
        channel: metaOf(hook, "channel"),
        text,
        username: metaOf(hook, "username"),
        icon_url: metaOf(hook, "icon_url"),
        unfurl_links: 0,
        link_names: 0,
        attachments:
          detail === ""
            ? null
            : [
                {
                  fallback: detail,
                  color: metaOf(hook, "color"),
                  title: str(p.repository?.html_url),
                  title_link: str(p.repository?.html_url),
                  text: detail
                }
              ]
      }
    }
    case "discord": {
      const avatar = metaOf(hook, "icon_url")
      return {
        username: metaOf(hook, "username"),
        ...(avatar === "" ? {} : { avatar_url: avatar }),
        embeds: [
          {
            title: cut(plain, 256),
            description: [...cut(lines(markdownLink), 4096)].slice(0, 2000).join(""),
            url: info.url,
            color: info.color,
            author: {
              name: userName(p),
              url: str(p.sender?.html_url),
              icon_url: str(p.sender?.avatar_url)
            }
          }
        ]
      }
    }
    case "dingtalk": {
      const text = [render(info.title, markdownLink), lines(markdownLink)].filter((t) => t !== "").join("\r\n")
      return {
        msgtype: "actionCard",
        actionCard: {
          text,
          title: plain,
          hideAvatar: "0",
          singleTitle: "view",
          singleURL: `dingtalk://dingtalkclient/page/link?pc_slide=false&url=${encodeURIComponent(info.url)}`
        }
      }
    }
    case "telegram": {
      const text = [render(info.title, htmlLink, html), lines(htmlLink, html)].filter((t) => t !== "").join("\n")
      return { text: text.trim(), parse_mode: "HTML", disable_web_page_preview: true }
    }
    case "msteams":
      return {
        "@type": "MessageCard",
        "@context": "https://schema.org/extensions",
        themeColor: info.color.toString(16).padStart(6, "0"),
        title: plain,
        summary: plain,
        sections: [
          {
            activityTitle: str(p.sender?.full_name) || userName(p),
            activitySubtitle: userName(p),
            activityImage: str(p.sender?.avatar_url),
            facts: [
              { name: "Repository:", value: str(p.repository?.full_name) },
              { name: "Event:", value: eventType }
            ],
            text: lines((l) => `[${l.text}](${l.url})`)
          }
        ],
        potentialAction: [{ "@type": "OpenUri", name: "View in Forgejo", targets: [{ os: "default", uri: info.url }] }]
      }
    case "feishu":
      return {
        msg_type: "text",
        content: { text: [plain, lines((l) => `${l.text} ${l.url}`)].filter((t) => t !== "").join("\r\n") }
      }
    case "wechatwork":
      return {
        msgtype: "markdown",
        markdown: {
          content: [render(info.title, markdownLink), lines(markdownLink)].filter((t) => t !== "").join("\n")
        }
      }
    case "matrix": {
      const formatted = [render(info.title, htmlLink, html), lines(htmlLink, html)].filter((t) => t !== "").join("<br>")
      const body = [render(info.title, markdownLink), lines(markdownLink)].filter((t) => t !== "").join("\n")
      const messageType = String(hook.meta?.message_type ?? "")
      return {
        body,
        msgtype: messageType === "2" || messageType === "m.text" ? "m.text" : "m.notice",
        format: "org.matrix.custom.html",
        formatted_body: formatted,
        ...(eventType === "push" ? { "io.gitea.commits": p.commits ?? [] } : {})
      }
    }
    default:
      throw new CannotConvert(`hook type ${type} has no chat conversion`)
  }
}

/** The sourcehut builds job of a push or create (its manifest read by the caller). */
const sourcehutBody = (hook: HookForDelivery, eventType: string, p: Json, manifest: string | undefined): Json => {
  if (eventType !== "push" && eventType !== "create")
    throw new CannotConvert(`sourcehut_builds hooks send only push and create events, not ${eventType}`)
  if (manifest === undefined) throw new CannotConvert(`the manifest ${metaOf(hook, "manifest_path")} was not found`)
  const commit = p.head_commit ?? (Array.isArray(p.commits) ? p.commits[0] : undefined)
  const ref = refName(str(p.ref))
  return {
    query:
      "mutation (\n  $manifest: String!\n  $tags: [String!]\n  $note: String!\n  $secrets: Boolean!\n  $execute: Boolean!\n  $visibility: Visibility!\n) {\n  submit(\n    manifest: $manifest\n    tags: $tags\n    note: $note\n    secrets: $secrets\n    execute: $execute\n    visibility: $visibility\n  ) {\n    id\n  }\n}",
    variables: {
      manifest,
      tags: [str(p.repository?.full_name), ref, metaOf(hook, "manifest_path")],
      note: commit === undefined ? ref : `${firstLine(str(commit.message))}`,
      secrets: hook.meta?.secrets === true,
      execute: true,
      visibility: metaOf(hook, "visibility") || "PUBLIC"
    }
  }
}

/** Which file a sourcehut_builds hook needs from the repository for this payload (its manifest at the pushed commit). */
export const manifestNeeded = (hook: HookForDelivery, eventType: string, payload: string) => {
  if (hook.type !== "sourcehut_builds" || (eventType !== "push" && eventType !== "create")) return undefined
  const p = JSON.parse(payload) as Json
  const sha = str(p.after) || str(p.sha)
  return { repoId: Number(p.repository?.id), sha, path: metaOf(hook, "manifest_path") }
}

/** The request a delivery sends (throws CannotConvert when it cannot be built). */
export const buildRequest = (
  hook: HookForDelivery,
  task: { readonly uuid: string; readonly eventType: string; readonly payload: string },
  manifest?: string
): Outgoing => {
  const payload = JSON.parse(task.payload) as Json
  switch (hook.type) {
    case "forgejo":
    case "gitea":
    case "gogs": {
      let json = task.payload
      // Forgejo's gitea-type quirk: create and delete payloads compact, keys sorted, short ref.
      if (hook.type === "gitea" && (task.eventType === "create" || task.eventType === "delete"))
        json = sortedCompact({ ...payload, ref: refName(str(payload.ref)) })
      const form = hook.contentType === 2
      const body = form ? `payload=${encodeURIComponent(json)}` : json
      return {
        url: hook.url,
        method: "POST",
        headers: {
          "Content-Type": form ? "application/x-www-form-urlencoded" : "application/json",
          // Forgejo signs the JSON even when it sends a form.
          ...defaultHeaders(hook.secret, json, task.uuid, task.eventType)
        },
        body
      }
    }
    case "packagist":
      return {
        url: hook.url,
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: pretty({ repository: { url: metaOf(hook, "package_url") } })
      }
    case "sourcehut_builds":
      return {
        url: hook.url,
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: pretty(sourcehutBody(hook, task.eventType, payload, manifest))
      }
    case "matrix": {
      const body = pretty(chatBody("matrix", hook, task.eventType, payload))
      if (Buffer.byteLength(body) >= 64 * 1024) throw new CannotConvert("the matrix message is 64 KiB or more")
      const txnId = createHash("sha1").update(body).digest("hex")
      return {
        url: `${hook.url.replace(/\/$/, "")}/${txnId}`,
        method: "PUT",
        headers: { "Content-Type": "application/json" },
        body
      }
    }
    default: {
      const body = pretty(chatBody(hook.type, hook, task.eventType, payload))
      return {
        url: hook.url,
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          ...defaultHeaders(hook.secret, body, task.uuid, task.eventType)
        },
        body
      }
    }
  }
}
