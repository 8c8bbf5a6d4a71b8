// Where an account's or a repository's avatar is served: the one function every `avatar_url`
// (users, organizations, repositories, webhook senders, federation actors) is built with.
import type { SettingsShape } from "../config/Settings.ts"

/** Forgejo's ghost user (a deleted account): its default picture, as Forgejo's `AvatarLink`. */
const GHOST_USER_ID = -1

/** The largest side of a stored avatar, in pixels (Forgejo's `avatar.DefaultAvatarSize` of the profile page). */
export const AVATAR_SIZE = 290

export const userAvatarPath = (user: { readonly id: number; readonly name: string; readonly avatar: string }) =>
  user.id === GHOST_USER_ID
    ? "assets/img/avatar_default.png"
    : user.avatar !== ""
      ? `avatars/${user.avatar}`
      : `avatars/identicon/${encodeURIComponent(user.name.toLowerCase())}`

/**
 * An account's avatar: the uploaded one (`/avatars/{hash}`, as Forgejo), else its identicon at a
 * URL that changes only with the name.
 */
export const userAvatarUrl = (
  settings: SettingsShape,
  user: { readonly id: number; readonly name: string; readonly avatar: string }
) => `${settings.server.ROOT_URL}${userAvatarPath(user)}`

/** A repository's avatar (`/repo-avatars/{hash}`), "" without one, as Forgejo's `repo.AvatarLink`. */
export const repoAvatarUrl = (settings: SettingsShape, repo: { readonly avatar: string }) =>
  repo.avatar === "" ? "" : `${settings.server.ROOT_URL}repo-avatars/${repo.avatar}`
