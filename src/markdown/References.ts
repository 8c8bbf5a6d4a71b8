// Forge references inside plain text (not in code, not in a link's text), as Forgejo links them:
// `@user` (only users that exist and the viewer may see, class "mention"), `#123` and
// `owner/repo#123` (only issues that exist and the viewer may read),
// commit SHAs, and emoji shortcodes (every mode). Works on already escaped HTML text.
import { emojiFor, emojiHtml } from "./Emoji.ts"
import type { State } from "./State.ts"

// A reference starts at the beginning, after whitespace or an opening bracket (so `a@b.c`,
// `&#39;` and `x#1` are left alone) and ends before whitespace, punctuation or the end.
const LEAD = String.raw`(^|[\s(\[{])`
const END = String.raw`(?=$|[\s.,:;!?)\]}'"]|&#39;|&quot;)`
const MENTION = String.raw`@([A-Za-z0-9_](?:[-A-Za-z0-9_.]*[A-Za-z0-9_])?)`
const CROSS = String.raw`([A-Za-z0-9_][-A-Za-z0-9_.]*)\/([-A-Za-z0-9_.]+)#(\d{1,10})`
const ISSUE = String.raw`#(\d{1,10})`
const SHA = String.raw`([0-9a-f]{7,64})`

// One pass over the text: the alternatives are tried at each position in this order.
const FORGE = new RegExp(`${LEAD}(?:${MENTION}|${CROSS}|${ISSUE}|${SHA})${END}|:([a-z0-9_+-]{1,40}):`, "g")
const EMOJI_ONLY = /:([a-z0-9_+-]{1,40}):/g

/** The `@names` a text may mention (lower-cased, at most `limit`), for one batched look-up. */
export const mentionCandidates = (text: string, limit = 200): Array<string> => {
  const names = new Set<string>()
  const re = new RegExp(`${LEAD}${MENTION}`, "g")
  for (let m = re.exec(text); m !== null && names.size < limit; m = re.exec(text)) {
    names.add(m[2]!.toLowerCase())
  }
  return [...names]
}

/**
 * The issue references a text may hold, for one batched look-up: `#N` (in the document's own
 * repository) and `owner/repo#N`, as the keys `issueKey` gives (at most `limit`).
 */
export const issueCandidates = (text: string, limit = 200): Array<string> => {
  const keys = new Set<string>()
  const re = new RegExp(`${LEAD}(?:${CROSS}|${ISSUE})${END}`, "g")
  for (let m = re.exec(text); m !== null && keys.size < limit; m = re.exec(text)) {
    keys.add(issueKey(m[2], m[3], m[4] ?? m[5]!))
  }
  return [...keys]
}

/** `owner/repo#N` lower-cased, or `#N` for the document's own repository. */
export const issueKey = (owner: string | undefined, repo: string | undefined, index: string): string =>
  owner === undefined || repo === undefined ? `#${Number(index)}` : `${owner}/${repo}#${Number(index)}`.toLowerCase()

const emoji = (whole: string, code: string) => {
  const found = emojiFor(code)
  return found === undefined ? whole : emojiHtml(code, found)
}

/** `escaped` (HTML-escaped text) with references linked and emoji shortcodes replaced. */
export const linkReferences = (state: State, escaped: string): string => {
  const forge = state.forge && state.linkDepth === 0
  if (!forge) return escaped.includes(":") ? escaped.replace(EMOJI_ONLY, emoji) : escaped
  if (!/[@#:0-9a-f]/.test(escaped)) return escaped
  const { appUrl, base, mentionable, issues } = state.options
  const rel = state.rel
  return escaped.replace(FORGE, (whole, lead: string | undefined, user, owner, repo, crossIndex, index, sha, code) => {
    if (code !== undefined) return emoji(whole, code)
    const before = lead ?? ""
    if (user !== undefined) {
      if (!mentionable.has(user.toLowerCase())) return whole
      return `${before}<a href="${appUrl}${encodeURIComponent(user)}" class="mention" rel="nofollow">@${user}</a>`
    }
    if (owner !== undefined) {
      if (!issues.has(issueKey(owner, repo, crossIndex))) return whole
      const href = `${appUrl}${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/issues/${crossIndex}`
      return `${before}<a href="${href}" class="ref-issue" rel="${rel(href)}">${owner}/${repo}#${crossIndex}</a>`
    }
    // Issue numbers and commits need a repository to point into.
    if (base === "") return whole
    if (index !== undefined) {
      if (!issues.has(issueKey(undefined, undefined, index))) return whole
      return `${before}<a href="${base}/issues/${index}" class="ref-issue" rel="${rel(base)}">#${index}</a>`
    }
    // A word of hex letters only ("defaced") or digits only (a number) is not taken for a commit.
    if (!/[0-9]/.test(sha) || !/[a-f]/.test(sha)) return whole
    return `${before}<a href="${base}/commit/${sha}" class="commit" rel="${rel(base)}"><code>${sha.slice(0, 10)}</code></a>`
  })
}
