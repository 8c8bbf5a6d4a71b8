// The User object of the API (Forgejo's `User`), and how an account is shown to a viewer.
import { Schema } from "effect"
import { userAvatarUrl } from "../avatars/Url.ts"
import type { SettingsShape } from "../config/Settings.ts"
import type { Principal } from "../http/Caller.ts"
import { formatTime, Id, Timestamp, ZERO_TIME } from "../http/Json.ts"
import type { UserRow } from "./Repo.ts"

export const Visibility = Schema.Literals(["public", "limited", "private"])

export const User = Schema.Struct({
  id: Id,
  login: Schema.String,
  login_name: Schema.String,
  source_id: Id,
  full_name: Schema.String,
  email: Schema.String,
  avatar_url: Schema.String,
  html_url: Schema.String,
  language: Schema.String,
  is_admin: Schema.Boolean,
  last_login: Timestamp,
  created: Timestamp,
  restricted: Schema.Boolean,
  active: Schema.Boolean,
  prohibit_login: Schema.Boolean,
  location: Schema.String,
  pronouns: Schema.String,
  website: Schema.String,
  description: Schema.String,
  visibility: Visibility,
  followers_count: Schema.Int,
  following_count: Schema.Int,
  starred_repos_count: Schema.Int,
  username: Schema.String
}).annotate({ identifier: "User" })
export type User = typeof User.Type

const systemUser = (fields: Partial<UserRow> & Pick<UserRow, "id" | "name">): UserRow => ({
  type: "user",
  lowerName: fields.name.toLowerCase(),
  fullName: "",
  email: "",
  keepEmailPrivate: false,
  passwdHash: "",
  mustChangePassword: false,
  loginName: "",
  sourceId: 0,
  visibility: "public",
  isAdmin: false,
  isActive: false,
  prohibitLogin: false,
  restricted: false,
  allowCreateOrganization: false,
  maxRepoCreation: -1,
  repoAdminChangeTeamAccess: false,
  location: "",
  website: "",
  description: "",
  pronouns: "",
  language: "",
  theme: "",
  diffViewStyle: "",
  keepActivityPrivate: false,
  keepPronounsPrivate: false,
  enableRepoUnitHints: true,
  avatar: "",
  numFollowers: 0,
  numFollowing: 0,
  numStars: 0,
  numRepos: 0,
  // Forgejo stores Unix seconds: an unset time shows as the epoch.
  createdAt: new Date(0),
  updatedAt: new Date(0),
  lastLogin: new Date(0),
  ...fields
})

/** Forgejo's stand-in for a deleted account (id -1), never stored. */
export const GHOST_USER_ID = -1
export const ghostUser: UserRow = systemUser({ id: GHOST_USER_ID, name: "Ghost" })

/** Forgejo's account for Actions runs (id -2), never stored. */
export const ACTIONS_USER_ID = -2
export const actionsUser: UserRow = systemUser({
  id: ACTIONS_USER_ID,
  name: "forgejo-actions",
  fullName: "Forgejo Actions",
  email: "noreply@forgejo.org",
  keepEmailPrivate: true,
  loginName: "forgejo-actions",
  isActive: true,
  allowCreateOrganization: true
})

/** Forgejo's `GetPlaceholderEmail()`: `{lowercase login}@{[service] NO_REPLY_ADDRESS}`. */
export const placeholderEmail = (settings: SettingsShape, user: UserRow) =>
  `${user.lowerName}@${settings.service.NO_REPLY_ADDRESS}`

/**
 * The one rule for who reads an account's real e-mail address, wherever the address shows or is
 * written; everyone else gets `placeholderEmail`:
 * - in git (`"git"`: commits and tags Hearth writes for the account, which anyone who can read the
 *   repository reads), Forgejo's `User.GetEmail()`: the real address unless it is kept private;
 * - in the API, Forgejo's `toUser`: never anonymous viewers; signed-in viewers unless the address
 *   is kept private and they are neither the account nor a site admin.
 */
export const mayReadEmail = (user: UserRow, audience: Principal | undefined | "git"): boolean =>
  audience !== undefined &&
  (!user.keepEmailPrivate || (audience !== "git" && (audience.user.id === user.id || audience.user.isAdmin)))

/** The address `audience` gets for the account (see `mayReadEmail`). */
export const emailFor = (settings: SettingsShape, user: UserRow, audience: Principal | undefined | "git"): string =>
  mayReadEmail(user, audience) ? user.email : placeholderEmail(settings, user)

/**
 * Forgejo's `User.GitName()`: the full name without what would break a commit header, else the
 * login, else `user-{id}`.
 */
export const gitName = (user: UserRow) => {
  const clean = (name: string) => name.replace(/[\n\r\0<>]/g, "").trim()
  const full = clean(user.fullName)
  if (full !== "") return full
  const login = clean(user.name)
  return login !== "" ? login : `user-${user.id}`
}

/** Forgejo's `User.NewGitSig()` without the time: who Hearth writes into git for the account. */
export const gitIdentity = (settings: SettingsShape, user: UserRow) => ({
  name: gitName(user),
  email: emailFor(settings, user, "git")
})

/** Forgejo's GetPronouns: emptied for anonymous viewers when the user keeps them private. */
export const shownPronouns = (user: UserRow, viewer: Principal | undefined): string =>
  viewer === undefined && user.keepPronounsPrivate ? "" : user.pronouns

/**
 * Converts an account for a viewer: private fields only for the account itself or an admin; the
 * e-mail as `emailFor` says.
 */
export const toApiUser = (settings: SettingsShape, user: UserRow, viewer: Principal | undefined): User => {
  const self = viewer !== undefined && (viewer.user.id === user.id || viewer.user.isAdmin)
  const root = settings.server.ROOT_URL
  return {
    id: user.id,
    login: user.name,
    login_name: self ? user.loginName : "",
    source_id: self ? user.sourceId : 0,
    full_name: user.fullName,
    email: emailFor(settings, user, viewer),
    avatar_url: userAvatarUrl(settings, user),
    html_url: user.id === GHOST_USER_ID ? "" : `${root}${encodeURIComponent(user.name)}`,
    language: self ? user.language : "",
    is_admin: self ? user.isAdmin : false,
    last_login: self ? formatTime(user.lastLogin) : ZERO_TIME,
    created: formatTime(user.createdAt),
    restricted: self ? user.restricted : false,
    active: self ? user.isActive : false,
    prohibit_login: self ? user.prohibitLogin : false,
    location: user.location,
    pronouns: shownPronouns(user, viewer),
    website: user.website,
    description: user.description,
    visibility: user.visibility,
    followers_count: user.numFollowers,
    following_count: user.numFollowing,
    starred_repos_count: user.numStars,
    username: user.name
  }
}
