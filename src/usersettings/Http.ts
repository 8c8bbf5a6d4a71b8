// /user/settings over HTTP: the caller's own settings, changed through UsersService.update (the
// profile's bounds and website rule are the web settings page's, src/users/Profile.ts).
import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { Settings } from "../config/Settings.ts"
import { signedInCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { profileProblems } from "../users/Profile.ts"
import type { UserRow } from "../users/Repo.ts"
import { type AccountChanges, UsersService } from "../users/Service.ts"
import type { UserSettings, UserSettingsOptions } from "./Api.ts"

/** Each member of UserSettingsOptions and the account field it changes. */
const COLUMNS: Record<keyof UserSettingsOptions, keyof AccountChanges> = {
  full_name: "full_name",
  website: "website",
  description: "description",
  location: "location",
  pronouns: "pronouns",
  language: "language",
  theme: "theme",
  diff_view_style: "diff_view_style",
  hide_email: "keep_email_private",
  hide_pronouns: "keep_pronouns_private",
  hide_activity: "keep_activity_private",
  enable_repo_unit_hints: "enable_repo_unit_hints"
}

export const DIFF_VIEW_STYLES: ReadonlyArray<string> = ["", "unified", "split"]

/** Forgejo's `User2UserSettings`. */
export const toUserSettings = (user: UserRow): UserSettings => ({
  full_name: user.fullName,
  website: user.website,
  description: user.description,
  location: user.location,
  pronouns: user.pronouns,
  language: user.language,
  theme: user.theme,
  diff_view_style: user.diffViewStyle,
  hide_email: user.keepEmailPrivate,
  hide_pronouns: user.keepPronounsPrivate,
  hide_activity: user.keepActivityPrivate,
  enable_repo_unit_hints: user.enableRepoUnitHints
})

export const UserSettingsHttp = apiGroup(HearthApi, "userSettings", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const users = yield* UsersService
    const themes = settings.ui.THEMES

    /** The first refusal of a change, or undefined. */
    const problem = (user: UserRow, change: UserSettingsOptions): string | undefined => {
      const profile = profileProblems({
        full_name: change.full_name ?? user.fullName,
        description: change.description ?? user.description,
        website: change.website ?? user.website,
        location: change.location ?? user.location,
        pronouns: change.pronouns ?? user.pronouns,
        visibility: user.visibility,
        keep_email_private: change.hide_email ?? user.keepEmailPrivate
      })
      const first = Object.values(profile)[0]
      if (first !== undefined) return first
      if (change.theme !== undefined && change.theme !== "" && !themes.includes(change.theme))
        return `The theme must be one of ${themes.join(", ")}.`
      if (change.diff_view_style !== undefined && !DIFF_VIEW_STYLES.includes(change.diff_view_style))
        return "The diff view style must be unified or split."
      if (change.language !== undefined && [...change.language].length > 10)
        return "The language must be at most 10 characters."
      return undefined
    }

    return handlers
      .handle("getUserSettings", () => Effect.map(signedInCaller, (me) => toUserSettings(me.user)))
      .handle("updateUserSettings", ({ payload }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          const refused = problem(me.user, payload)
          if (refused !== undefined) return yield* Errors.validationFailed(refused)
          const changes = Object.fromEntries(
            Object.entries(payload).flatMap(([member, value]) =>
              value === undefined ? [] : [[COLUMNS[member as keyof UserSettingsOptions], value]]
            )
          ) as AccountChanges
          const updated = yield* users.update(me.user, changes)
          return toUserSettings(updated)
        })
      )
  })
)
