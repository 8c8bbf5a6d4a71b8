// The federation's routes as operations: federation/Routes.ts mounts each one with its handler,
// and the API's OpenAPI document lists them (they are served beside HttpApi, not through it:
// ActivityPub's content types, raw signed inbox bodies, Fedify's documents). One list, so the
// document cannot name a route that is not served or miss one that is.
// Forgejo's operationId where Forgejo has the route; the person routes exist by name (Hearth's)
// and by id (Forgejo's).
import { AP } from "./Paths.ts"

export interface FederationOperation {
  readonly method: "GET" | "POST"
  /** The router's path, parameters as `:name`. */
  readonly path: string
  readonly operationId: string
  readonly summary: string
  /** What a successful answer is. */
  readonly answers: string
}

const ACTIVITY = "application/activity+json"

const op = (
  method: FederationOperation["method"],
  path: string,
  operationId: string,
  summary: string,
  answers = ACTIVITY
): FederationOperation => ({ method, path, operationId, summary, answers })

const person = (base: string, by: "name" | "id") => {
  const id = (forgejo: string, hearth: string) => (by === "id" ? forgejo : hearth)
  return {
    actor: op(
      "GET",
      base,
      id("activitypubPerson", "activitypubPersonByName"),
      "The Person actor of a user (a browser asking for HTML is sent to the profile page)"
    ),
    inbox: op(
      "POST",
      `${base}/inbox`,
      id("activitypubPersonInbox", "activitypubPersonByNameInbox"),
      "Send an activity to a user's inbox (HTTP-signed)",
      "empty"
    ),
    outbox: op(
      "GET",
      `${base}/outbox`,
      id("activitypubPersonFeed", "activitypubPersonByNameFeed"),
      "The user's published activities, an OrderedCollection paged with ?page="
    ),
    followers: op(
      "GET",
      `${base}/followers`,
      id("activitypubPersonFollowers", "activitypubPersonByNameFollowers"),
      "Who follows the user, an OrderedCollection"
    ),
    following: op(
      "GET",
      `${base}/following`,
      id("activitypubPersonFollowing", "activitypubPersonByNameFollowing"),
      "Whom the user follows, an OrderedCollection"
    ),
    liked: op(
      "GET",
      `${base}/liked`,
      id("activitypubPersonLiked", "activitypubPersonByNameLiked"),
      "The remote repositories the user starred, an OrderedCollection"
    ),
    // An activity's id dereferences to the activity itself, as ActivityPub requires (Forgejo answers
    // the object there and the activity under /activity; both of its paths are served).
    activity: op(
      "GET",
      `${base}/activities/:activity`,
      id("activitypubPersonActivityNote", "activitypubPersonByNameActivity"),
      "One activity the user published"
    ),
    activityAgain: op(
      "GET",
      `${base}/activities/:activity/activity`,
      id("activitypubPersonActivity", "activitypubPersonByNameActivityAgain"),
      "One activity the user published (Forgejo's path)"
    ),
    note: op(
      "GET",
      `${base}/activities/:activity/note`,
      id("activitypubPersonActivityObject", "activitypubPersonByNameActivityObject"),
      "The object (a Note) of one activity the user published"
    )
  } as const
}

export const FederationOperations = {
  webfinger: op(
    "GET",
    "/.well-known/webfinger",
    "webfinger",
    "WebFinger (RFC 7033) for acct:user@host, profile and actor URLs, and repositories",
    "application/jrd+json"
  ),
  nodeinfoLinks: op(
    "GET",
    "/.well-known/nodeinfo",
    "nodeinfoLinks",
    "Where the NodeInfo document is",
    "application/json"
  ),
  nodeinfo: op(
    "GET",
    "/api/v1/nodeinfo",
    "getNodeInfo",
    "The NodeInfo 2.1 document of this instance",
    "application/json"
  ),
  instanceActor: op("GET", `${AP}/actor`, "activitypubInstanceActor", "The instance's Application actor"),
  instanceInbox: op(
    "POST",
    `${AP}/actor/inbox`,
    "activitypubInstanceActorInbox",
    "Send an activity to the instance actor (HTTP-signed)",
    "empty"
  ),
  instanceOutbox: op(
    "GET",
    `${AP}/actor/outbox`,
    "activitypubInstanceActorOutbox",
    "The instance actor's outbox (always empty)"
  ),
  sharedInbox: op("POST", `${AP}/inbox`, "activitypubSharedInbox", "The shared inbox (HTTP-signed)", "empty"),
  repository: op(
    "GET",
    `${AP}/repository-id/:id`,
    "activitypubRepository",
    "The ForgeFed Repository actor of a repository"
  ),
  repositoryOutbox: op(
    "GET",
    `${AP}/repository-id/:id/outbox`,
    "activitypubRepositoryOutbox",
    "The repository's outbox, an OrderedCollection"
  ),
  repositoryFollowers: op(
    "GET",
    `${AP}/repository-id/:id/followers`,
    "activitypubRepositoryFollowers",
    "Who follows the repository, an OrderedCollection"
  ),
  repositoryInbox: op(
    "POST",
    `${AP}/repository-id/:id/inbox`,
    "activitypubRepositoryInbox",
    "Send an activity to a repository (HTTP-signed)",
    "empty"
  ),
  personByName: person(`${AP}/user/:name`, "name"),
  personById: person(`${AP}/user-id/:id`, "id")
} as const

const all = (): ReadonlyArray<FederationOperation> => {
  const { personByName, personById, ...rest } = FederationOperations
  return [...Object.values(rest), ...Object.values(personByName), ...Object.values(personById)]
}

/** The operations as OpenAPI 3.1 path items, to merge into the API's document. */
export const federationPaths = (): Record<string, Record<string, unknown>> => {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const operation of all()) {
    const names = [...operation.path.matchAll(/:([a-z]+)/g)].map((m) => m[1]!)
    const path = operation.path.replace(/:([a-z]+)/g, "{$1}")
    const success =
      operation.answers === "empty"
        ? { description: "Accepted" }
        : { description: "OK", content: { [operation.answers]: { schema: { type: "object" } } } }
    paths[path] = {
      ...paths[path],
      [operation.method.toLowerCase()]: {
        tags: ["activitypub"],
        operationId: operation.operationId,
        summary: operation.summary,
        parameters: names.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } })),
        responses: { [operation.method === "POST" ? "2XX" : "200"]: success, "404": { description: "Not found" } }
      }
    }
  }
  return paths
}
