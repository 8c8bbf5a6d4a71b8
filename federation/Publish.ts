// What local users do in public, as the fediverse sees it: a Note about it in their outbox, sent
// to their remote followers (Federation.announce). Private repositories, and repositories of
// accounts that are not public, make no note. A release is the repository's news, not its
// publisher's: its note is the owner's, for the owner's followers (issue 20). An organization has
// no actor (only people federate), so nobody follows it and its releases make no note.
import type { RepoRow } from "../src/repos/Repo.ts"
import type { UserRow } from "../src/users/Repo.ts"
import type { Paths } from "./Paths.ts"

export type RepositoryEvent =
  | { readonly kind: "created"; readonly doer: UserRow; readonly owner: UserRow; readonly repo: RepoRow }
  | {
      readonly kind: "forked"
      readonly doer: UserRow
      readonly owner: UserRow
      readonly repo: RepoRow
      readonly source: string
    }
  | { readonly kind: "pushed"; readonly doer: UserRow; readonly owner: UserRow; readonly repo: RepoRow }
  | {
      readonly kind: "released"
      readonly doer: UserRow
      readonly owner: UserRow
      readonly repo: RepoRow
      readonly tag: string
      readonly title: string
    }

/** Whose activity the note is (and so whose followers get it): the owner's for a release, else the doer's. */
export const noteAuthor = (event: RepositoryEvent): UserRow => (event.kind === "released" ? event.owner : event.doer)

export const repositoryNote = (
  paths: Paths,
  event: RepositoryEvent
): { readonly text: string; readonly url: string } | undefined => {
  const { owner, repo, doer } = event
  if (repo.isPrivate || owner.visibility !== "public") return undefined
  const name = `${owner.name}/${repo.name}`
  if (event.kind === "released") {
    const title = event.title === event.tag ? event.tag : `${event.title} (${event.tag})`
    return {
      text: `${doer.name} published the release ${title} of ${name}`,
      url: `${paths.repositoryPage(owner, repo)}/releases/tag/${event.tag.split("/").map(encodeURIComponent).join("/")}`
    }
  }
  const text =
    event.kind === "created"
      ? `${doer.name} created the repository ${name}`
      : event.kind === "forked"
        ? `${doer.name} forked ${event.source} to ${name}`
        : `${doer.name} pushed to ${name}`
  return { text, url: paths.repositoryPage(owner, repo) }
}
