// Release routes (Forgejo's routers/api/v1/repo/release.go, release_tags.go; CONTRACT-WEBHOOKS §3),
// with Forgejo's operationIds. The group's gate is `reqRepoReader(releases)` (unit off: 404);
// changes need a writer on releases (`reqRepoWriter(releases)`).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access, type AccessRule } from "../http/Access.ts"
import { Id, Timestamp } from "../http/Json.ts"
import { PageQuery } from "../http/Pagination.ts"
import { Attachment, EditAttachmentOptions } from "../issues/AttachmentsSchema.ts"
import { User } from "../users/Schema.ts"

const read = {
  signedIn: false,
  scopes: ["repository"],
  repo: { role: "read", unit: "releases" }
} as const satisfies AccessRule
/** Create and edit make git tags: not while the repository is being created or is archived. */
const write = {
  signedIn: true,
  scopes: ["repository"],
  repo: { role: "write", unit: "releases", changes: "mirrors" }
} as const satisfies AccessRule
/** Forgejo's delete routes have no archived gate. */
const remove = {
  signedIn: true,
  scopes: ["repository"],
  repo: { role: "write", unit: "releases" }
} as const satisfies AccessRule

/** Uploads also need `[attachment] ENABLED` (Forgejo: 404 "Attachment is not enabled"). */
const upload = { ...write, enabled: (settings) => settings.attachment.ENABLED } as const satisfies AccessRule
/** Asset edits and deletes: Forgejo has no archived gate on them. */
const assetWrite = remove

const ownerRepo = { owner: Schema.String, repo: Schema.String }
const withAsset = { ...ownerRepo, id: Schema.String, attachment_id: Schema.String }

/** The upload's body as Forgejo documents it (the handler reads it as a stream, undeclared). */
const uploadBody = {
  requestBody: {
    required: false,
    content: {
      "multipart/form-data": {
        schema: {
          type: "object",
          properties: { attachment: { type: "string", format: "binary", description: "attachment to upload" } }
        }
      },
      "application/octet-stream": { schema: { type: "string", format: "binary" } }
    }
  }
}
const withId = { ...ownerRepo, id: Schema.String }
const withTag = { ...ownerRepo, tag: Schema.String }
/**
 * A tag with `/` (`release/v1.0`): Forgejo's `{tag}` takes the rest of the path, so the tag routes
 * have a `/{tag}/{rest}/*` twin (as the branch and tag routes of src/branches/Api.ts).
 */
const withDeepTag = { ...withTag, rest: Schema.String, "*": Schema.optional(Schema.String) }

export const Release = Schema.Struct({
  id: Id,
  tag_name: Schema.String,
  target_commitish: Schema.String,
  name: Schema.String,
  body: Schema.String,
  url: Schema.String,
  html_url: Schema.String,
  tarball_url: Schema.String,
  zipball_url: Schema.String,
  hide_archive_links: Schema.Boolean,
  upload_url: Schema.String,
  draft: Schema.Boolean,
  prerelease: Schema.Boolean,
  created_at: Timestamp,
  published_at: Timestamp,
  author: User,
  assets: Schema.Array(Attachment),
  archive_download_count: Schema.Struct({ zip: Schema.Int, tar_gz: Schema.Int })
}).annotate({ identifier: "Release" })
export type Release = typeof Release.Type

const optionalString = Schema.optionalKey(Schema.NullOr(Schema.String))
const optionalBoolean = Schema.optionalKey(Schema.NullOr(Schema.Boolean))

export const CreateReleaseOption = Schema.Struct({
  // Required; checked by the handler for Forgejo's message (`[TagName]: Required`).
  tag_name: optionalString,
  target_commitish: optionalString,
  name: optionalString,
  body: optionalString,
  draft: optionalBoolean,
  prerelease: optionalBoolean,
  hide_archive_links: optionalBoolean
}).annotate({ identifier: "CreateReleaseOption" })
export type CreateReleaseOption = typeof CreateReleaseOption.Type

export const EditReleaseOption = CreateReleaseOption.annotate({ identifier: "EditReleaseOption" })
export type EditReleaseOption = typeof EditReleaseOption.Type

export const ListReleasesQuery = {
  draft: Schema.optional(Schema.String),
  "pre-release": Schema.optional(Schema.String),
  q: Schema.optional(Schema.String),
  ...PageQuery
}

export class ReleasesApi extends HttpApiGroup.make("releases").add(
  HttpApiEndpoint.get("listReleases", "/repos/:owner/:repo/releases", {
    params: ownerRepo,
    query: ListReleasesQuery,
    success: Schema.Array(Release)
  })
    .annotate(OpenApi.Identifier, "repoListReleases")
    .annotate(Access, read),
  HttpApiEndpoint.post("createRelease", "/repos/:owner/:repo/releases", {
    params: ownerRepo,
    payload: CreateReleaseOption,
    success: Release.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "repoCreateRelease")
    .annotate(Access, write),
  HttpApiEndpoint.get("getLatestRelease", "/repos/:owner/:repo/releases/latest", {
    params: ownerRepo,
    success: Release
  })
    .annotate(OpenApi.Identifier, "repoGetLatestRelease")
    .annotate(Access, read),
  HttpApiEndpoint.get("getReleaseByTag", "/repos/:owner/:repo/releases/tags/:tag", {
    params: withTag,
    success: Release
  })
    .annotate(OpenApi.Identifier, "repoGetReleaseByTag")
    .annotate(Access, read),
  HttpApiEndpoint.delete("deleteReleaseByTag", "/repos/:owner/:repo/releases/tags/:tag", {
    params: withTag,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeleteReleaseByTag")
    .annotate(Access, remove),
  HttpApiEndpoint.get("getReleaseByTagDeep", "/repos/:owner/:repo/releases/tags/:tag/:rest/*", {
    params: withDeepTag,
    success: Release
  })
    .annotate(Access, read)
    .annotate(OpenApi.Exclude, true),
  HttpApiEndpoint.delete("deleteReleaseByTagDeep", "/repos/:owner/:repo/releases/tags/:tag/:rest/*", {
    params: withDeepTag,
    success: HttpApiSchema.NoContent
  })
    .annotate(Access, remove)
    .annotate(OpenApi.Exclude, true),
  HttpApiEndpoint.get("getRelease", "/repos/:owner/:repo/releases/:id", {
    params: withId,
    success: Release
  })
    .annotate(OpenApi.Identifier, "repoGetRelease")
    .annotate(Access, read),
  HttpApiEndpoint.patch("editRelease", "/repos/:owner/:repo/releases/:id", {
    params: withId,
    payload: EditReleaseOption,
    success: Release
  })
    .annotate(OpenApi.Identifier, "repoEditRelease")
    .annotate(Access, write),
  HttpApiEndpoint.delete("deleteRelease", "/repos/:owner/:repo/releases/:id", {
    params: withId,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeleteRelease")
    .annotate(Access, remove),
  HttpApiEndpoint.get("listReleaseAssets", "/repos/:owner/:repo/releases/:id/assets", {
    params: withId,
    success: Schema.Array(Attachment)
  })
    .annotate(OpenApi.Identifier, "repoListReleaseAttachments")
    .annotate(Access, read),
  HttpApiEndpoint.post("createReleaseAsset", "/repos/:owner/:repo/releases/:id/assets", {
    params: withId,
    query: { name: Schema.optional(Schema.String), external_url: Schema.optional(Schema.String) },
    success: Attachment.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "repoCreateReleaseAttachment")
    .annotate(OpenApi.Override, uploadBody)
    .annotate(Access, upload),
  HttpApiEndpoint.get("getReleaseAsset", "/repos/:owner/:repo/releases/:id/assets/:attachment_id", {
    params: withAsset,
    success: Attachment
  })
    .annotate(OpenApi.Identifier, "repoGetReleaseAttachment")
    .annotate(Access, read),
  HttpApiEndpoint.patch("editReleaseAsset", "/repos/:owner/:repo/releases/:id/assets/:attachment_id", {
    params: withAsset,
    payload: EditAttachmentOptions,
    // Forgejo answers an edit with 201.
    success: Attachment.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "repoEditReleaseAttachment")
    .annotate(Access, assetWrite),
  HttpApiEndpoint.delete("deleteReleaseAsset", "/repos/:owner/:repo/releases/:id/assets/:attachment_id", {
    params: withAsset,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeleteReleaseAttachment")
    .annotate(Access, assetWrite)
) {}
