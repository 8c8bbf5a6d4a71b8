// The activities Hearth sends, as plain ActivityStreams JSON (Fedify reads them into its own
// objects to sign and deliver them; the outbox stores them as they are). Ids are this server's
// URLs with a random part, so a receiver can tell activities apart and never confuses two.
import { randomUUID } from "node:crypto"

export const AS = "https://www.w3.org/ns/activitystreams"
export const PUBLIC = `${AS}#Public`
/** The context of the documents Hearth writes itself (actors, collections, activities). */
export const CONTEXT = [AS, "https://w3id.org/security/v1"]

export type Activity = Record<string, unknown>

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z")

export const newId = (actor: string, kind: string) => `${actor}#${kind}-${randomUUID()}`

export const follow = (actor: string, object: string): Activity => ({
  "@context": AS,
  id: newId(actor, "follow"),
  type: "Follow",
  actor,
  object
})

/** A star of a ForgeFed repository, as Forgejo sends it (`startTime` required there). */
export const like = (actor: string, object: string): Activity => ({
  "@context": AS,
  id: newId(actor, "like"),
  type: "Like",
  actor,
  object,
  startTime: now()
})

/** Undoes an earlier activity of the same actor, named by id, type and object. */
export const undo = (
  actor: string,
  inner: { readonly id: string; readonly type: string; readonly object: string }
): Activity => ({
  "@context": AS,
  id: newId(actor, "undo"),
  type: "Undo",
  actor,
  object: { id: inner.id, type: inner.type, actor, object: inner.object }
})

/** Accepts a Follow received (the Follow as its sender wrote it: id, actor, object). */
export const accept = (actor: string, followed: { readonly id: string; readonly actor: string }): Activity => ({
  "@context": AS,
  id: newId(actor, "accept"),
  type: "Accept",
  actor,
  object: { id: followed.id, type: "Follow", actor: followed.actor, object: actor }
})

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/**
 * A public note about something a user did (created a repository, pushed), addressed to everyone
 * and to the user's followers, as Mastodon shows it in a timeline.
 */
export const createNote = (
  actor: string,
  note: { readonly text: string; readonly url: string },
  /** Its id's last part (random unless given). */
  key: string = randomUUID()
): Activity => {
  const id = `${actor}/activities/${key}`
  const published = now()
  const addressing = { to: [PUBLIC], cc: [`${actor}/followers`] }
  return {
    "@context": AS,
    id,
    type: "Create",
    actor,
    published,
    ...addressing,
    object: {
      id: `${id}/note`,
      type: "Note",
      attributedTo: actor,
      published,
      ...addressing,
      content: `<p>${escapeHtml(note.text)} <a href="${escapeHtml(note.url)}">${escapeHtml(note.url)}</a></p>`,
      url: note.url
    }
  }
}

/**
 * A person's actor changed (after a rename: its id and `preferredUsername` name the new login),
 * told to everyone and its followers; `formerly` is the actor id it had (ActivityStreams
 * `alsoKnownAs`, as Mastodon reads account moves).
 */
export const updatePerson = (
  actor: string,
  person: { readonly name: string; readonly fullName: string; readonly profile: string; readonly formerly: string }
): Activity => ({
  "@context": CONTEXT,
  id: newId(actor, "update"),
  type: "Update",
  actor,
  published: now(),
  to: [PUBLIC],
  cc: [`${actor}/followers`],
  object: {
    id: actor,
    type: "Person",
    preferredUsername: person.name,
    ...(person.fullName === "" ? {} : { name: person.fullName }),
    url: person.profile,
    inbox: `${actor}/inbox`,
    outbox: `${actor}/outbox`,
    followers: `${actor}/followers`,
    alsoKnownAs: [person.formerly]
  }
})
