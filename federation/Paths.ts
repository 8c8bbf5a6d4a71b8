// Where this instance's ActivityPub objects live, all under [server] ROOT_URL: Person actors by
// name (Hearth's) and by id (Forgejo's), ForgeFed repository actors by id, the instance actor, the
// shared inbox. One place builds them, so ids written in activities and the routes that answer
// them cannot drift apart.
import { userAvatarUrl } from "../src/avatars/Url.ts"
import type { SettingsShape } from "../src/config/Settings.ts"

export const AP = "/api/v1/activitypub"

export interface Paths {
  /** ROOT_URL, with its trailing slash. */
  readonly root: string
  readonly origin: string
  /** host[:port] as peers write it in `acct:` handles. */
  readonly host: string
  /** The ActivityPub id of a local user (stored letter case). */
  readonly actor: (user: { readonly name: string }) => string
  readonly repository: (id: number) => string
  readonly instance: string
  readonly sharedInbox: string
  /** The HTML profile a person would visit (as Forgejo's `html_url`). */
  readonly profile: (user: { readonly name: string }) => string
  readonly repositoryPage: (owner: { readonly name: string }, repo: { readonly name: string }) => string
  /** The avatar of a local user (src/avatars/Url.ts). */
  readonly avatar: (user: { readonly id: number; readonly name: string; readonly avatar: string }) => string
}

export const pathsOf = (settings: SettingsShape): Paths => {
  const root = settings.server.ROOT_URL
  const url = new URL(root)
  const name = (user: { readonly name: string }) => encodeURIComponent(user.name)
  return {
    root,
    origin: url.origin,
    host: url.host,
    actor: (user) => `${root}api/v1/activitypub/user/${name(user)}`,
    repository: (id) => `${root}api/v1/activitypub/repository-id/${id}`,
    instance: `${root}api/v1/activitypub/actor`,
    sharedInbox: `${root}api/v1/activitypub/inbox`,
    profile: (user) => `${root}${name(user)}`,
    repositoryPage: (owner, repo) => `${root}${name(owner)}/${encodeURIComponent(repo.name)}`,
    avatar: (user) => userAvatarUrl(settings, user)
  }
}

/**
 * A percent-encoded name taken from a URL (a WebFinger resource, an actor id), or `undefined` when
 * it does not decode or holds a control character (NUL included): nothing is named so, and the
 * database refuses a NUL.
 */
export const decodeName = (encoded: string): string | undefined => {
  let name: string
  try {
    name = decodeURIComponent(encoded)
  } catch {
    return undefined
  }
  return /[\x00-\x1f\x7f]/.test(name) ? undefined : name
}

/** What a local ActivityPub URL names, or undefined for anything else (another host included). */
export type LocalObject =
  | { readonly kind: "user"; readonly name: string }
  | { readonly kind: "user-id"; readonly id: number }
  | { readonly kind: "repository"; readonly id: number }
  | { readonly kind: "instance" }

export const parseLocal = (paths: Paths, uri: string | undefined): LocalObject | undefined => {
  if (uri === undefined || !uri.startsWith(`${paths.root}api/v1/activitypub/`)) return undefined
  const rest = uri.slice(`${paths.root}api/v1/activitypub/`.length).replace(/#.*$/, "")
  const byName = /^user\/([^/?]+)$/.exec(rest)
  if (byName !== null) {
    const name = decodeName(byName[1]!)
    return name === undefined ? undefined : { kind: "user", name }
  }
  const byId = /^user-id\/(\d{1,15})$/.exec(rest)
  if (byId !== null) return { kind: "user-id", id: Number(byId[1]) }
  const repo = /^repository-id\/(\d{1,15})$/.exec(rest)
  if (repo !== null) return { kind: "repository", id: Number(repo[1]) }
  return rest === "actor" ? { kind: "instance" } : undefined
}
