// What an account may say about itself (Forgejo's `UpdateProfileForm`, services/forms/user_form.go):
// the bounds of each field, a website that is an http(s) URL, a known visibility. The web's profile
// settings check a form with `profileProblems` and save it with UsersService.update.

import type { Visibility } from "./Repo.ts"
import type { AccountChanges } from "./Service.ts"

/** Forgejo's `MaxSize` of each profile field, in characters. */
export const PROFILE_MAX = { full_name: 100, description: 255, website: 255, location: 50, pronouns: 50 } as const

export const VISIBILITIES: ReadonlyArray<Visibility> = ["public", "limited", "private"]

export interface ProfileInput {
  readonly full_name: string
  readonly description: string
  readonly website: string
  readonly location: string
  readonly pronouns: string
  readonly visibility: string
  readonly keep_email_private: boolean
}

const LABELS: Readonly<Record<keyof typeof PROFILE_MAX, string>> = {
  full_name: "The full name",
  description: "The biography",
  website: "The website",
  location: "The location",
  pronouns: "The pronouns"
}

/** Forgejo's `ValidSiteUrl`: empty, or an absolute http(s) URL. */
export const isSiteUrl = (value: string): boolean => {
  if (value === "") return true
  try {
    const url = new URL(value)
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== ""
  } catch {
    return false
  }
}

/** Each refused field and why (empty when the profile may be saved). */
export const profileProblems = (input: ProfileInput): Record<string, string> => {
  const problems: Record<string, string> = {}
  for (const key of Object.keys(PROFILE_MAX) as Array<keyof typeof PROFILE_MAX>) {
    if ([...input[key]].length > PROFILE_MAX[key]) {
      problems[key] = `${LABELS[key]} must be at most ${PROFILE_MAX[key]} characters.`
    }
  }
  if (problems.website === undefined && !isSiteUrl(input.website)) {
    problems.website = "The website must be an http:// or https:// address."
  }
  if (!(VISIBILITIES as ReadonlyArray<string>).includes(input.visibility)) {
    problems.visibility = "Choose public, limited or private."
  }
  return problems
}

/** The changes to save once `profileProblems` found none. */
export const profileChanges = (input: ProfileInput): AccountChanges => ({
  full_name: input.full_name,
  description: input.description,
  website: input.website,
  location: input.location,
  pronouns: input.pronouns,
  visibility: input.visibility as Visibility,
  keep_email_private: input.keep_email_private
})
