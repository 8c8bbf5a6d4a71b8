// Webhooks at every level Forgejo has (routers/api/v1/{repo,org,user,admin}/hook.go): a
// repository's (its admins), an organization's (its owners), a user's own (/user/hooks) and the
// site's (/admin/hooks: system and default hooks). Beyond Forgejo's API, as GitHub has: each
// hook's delivery history (`/deliveries`) and sending a delivery again (`/deliveries/{id}/attempts`).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import type { Category } from "../auth/Scopes.ts"
import { Access, type AccessRule } from "../http/Access.ts"
import { Timestamp } from "../http/Json.ts"
import { PageQuery } from "../http/Pagination.ts"

export const Hook = Schema.Struct({
  id: Schema.Number,
  type: Schema.String,
  branch_filter: Schema.String,
  url: Schema.String,
  config: Schema.Record(Schema.String, Schema.String),
  events: Schema.Array(Schema.String),
  authorization_header: Schema.String,
  content_type: Schema.String,
  metadata: Schema.Unknown,
  active: Schema.Boolean,
  updated_at: Timestamp,
  created_at: Timestamp
}).annotate({ identifier: "Hook" })
export type Hook = typeof Hook.Type

export const CreateHookOption = Schema.Struct({
  type: Schema.String,
  config: Schema.Record(Schema.String, Schema.String),
  events: Schema.optional(Schema.Array(Schema.String)),
  branch_filter: Schema.optional(Schema.String),
  authorization_header: Schema.optional(Schema.String),
  active: Schema.optional(Schema.Boolean)
}).annotate({ identifier: "CreateHookOption" })
export type CreateHookOption = typeof CreateHookOption.Type

export const EditHookOption = Schema.Struct({
  config: Schema.optional(Schema.Record(Schema.String, Schema.String)),
  events: Schema.optional(Schema.Array(Schema.String)),
  branch_filter: Schema.optional(Schema.String),
  authorization_header: Schema.optional(Schema.String),
  active: Schema.optional(Schema.NullOr(Schema.Boolean))
}).annotate({ identifier: "EditHookOption" })
export type EditHookOption = typeof EditHookOption.Type

/** One delivery of a hook (Forgejo's hook_task, shown as GitHub shows deliveries). */
export const HookDelivery = Schema.Struct({
  id: Schema.Number,
  /** The delivery id sent as X-Forgejo-Delivery (the same on every retry). */
  uuid: Schema.String,
  event: Schema.String,
  event_type: Schema.String,
  /** The delivery this one sends again, or null. */
  redelivery_of: Schema.NullOr(Schema.Number),
  delivered: Schema.Boolean,
  success: Schema.Boolean,
  attempts: Schema.Number,
  duration_ms: Schema.Number,
  delivered_at: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  request: Schema.NullOr(
    Schema.Struct({
      url: Schema.String,
      http_method: Schema.String,
      headers: Schema.Record(Schema.String, Schema.String),
      body: Schema.String
    })
  ),
  response: Schema.NullOr(
    Schema.Struct({
      status: Schema.Number,
      headers: Schema.Record(Schema.String, Schema.String),
      body: Schema.String
    })
  )
}).annotate({ identifier: "HookDelivery" })
export type HookDelivery = typeof HookDelivery.Type

const ownerRepo = { owner: Schema.String, repo: Schema.String }
const hookId = { id: Schema.String }
const deliveryId = { id: Schema.String, delivery: Schema.String }
const repoHooks: AccessRule = {
  signedIn: true,
  scopes: ["repository"],
  repo: { role: "admin", changes: "settings" }
}
const scoped = (category: Category): AccessRule => ({ signedIn: true, scopes: [category] })

/** The CRUD, history and redelivery routes of one level, under `base` (`/repos/:owner/:repo`, …). */
const level = <
  N extends "repo" | "org" | "user" | "admin",
  B extends "" | `/${string}`,
  P extends Schema.Struct.Fields
>(
  prefix: N,
  base: B,
  params: P,
  access: AccessRule
) =>
  [
    HttpApiEndpoint.get(`${prefix}ListHooks`, `${base}/hooks`, {
      params,
      query: PageQuery,
      success: Schema.Array(Hook)
    })
      .annotate(OpenApi.Identifier, `${prefix}ListHooks`)
      .annotate(Access, access),
    HttpApiEndpoint.post(`${prefix}CreateHook`, `${base}/hooks`, {
      params,
      payload: CreateHookOption,
      success: Hook.pipe(HttpApiSchema.status(201))
    })
      .annotate(OpenApi.Identifier, `${prefix}CreateHook`)
      .annotate(Access, access),
    HttpApiEndpoint.get(`${prefix}GetHook`, `${base}/hooks/:id`, { params: { ...params, ...hookId }, success: Hook })
      .annotate(OpenApi.Identifier, `${prefix}GetHook`)
      .annotate(Access, access),
    HttpApiEndpoint.patch(`${prefix}EditHook`, `${base}/hooks/:id`, {
      params: { ...params, ...hookId },
      payload: EditHookOption,
      success: Hook
    })
      .annotate(OpenApi.Identifier, `${prefix}EditHook`)
      .annotate(Access, access),
    HttpApiEndpoint.delete(`${prefix}DeleteHook`, `${base}/hooks/:id`, {
      params: { ...params, ...hookId },
      success: HttpApiSchema.NoContent
    })
      .annotate(OpenApi.Identifier, `${prefix}DeleteHook`)
      .annotate(Access, access),
    HttpApiEndpoint.get(`${prefix}ListHookDeliveries`, `${base}/hooks/:id/deliveries`, {
      params: { ...params, ...hookId },
      query: PageQuery,
      success: Schema.Array(HookDelivery)
    })
      .annotate(OpenApi.Identifier, `${prefix}ListHookDeliveries`)
      .annotate(Access, access),
    HttpApiEndpoint.get(`${prefix}GetHookDelivery`, `${base}/hooks/:id/deliveries/:delivery`, {
      params: { ...params, ...deliveryId },
      success: HookDelivery
    })
      .annotate(OpenApi.Identifier, `${prefix}GetHookDelivery`)
      .annotate(Access, access),
    // 202: a new delivery of the same payload is queued; its history entry is the answer.
    HttpApiEndpoint.post(`${prefix}RedeliverHook`, `${base}/hooks/:id/deliveries/:delivery/attempts`, {
      params: { ...params, ...deliveryId },
      success: HookDelivery.pipe(HttpApiSchema.status(202))
    })
      .annotate(OpenApi.Identifier, `${prefix}RedeliverHook`)
      .annotate(Access, access)
  ] as const

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(...level("repo", "/repos/:owner/:repo", ownerRepo, repoHooks))
  .add(
    // 204: a push payload for the commit `ref` names (default: the default branch's head) is queued.
    HttpApiEndpoint.post("repoTestHook", "/repos/:owner/:repo/hooks/:id/tests", {
      params: { ...ownerRepo, ...hookId },
      query: { ref: Schema.optional(Schema.String) },
      success: HttpApiSchema.NoContent
    })
      .annotate(OpenApi.Identifier, "repoTestHook")
      .annotate(Access, repoHooks)
  )
  .add(...level("org", "/orgs/:org", { org: Schema.String }, scoped("organization")))
  .add(...level("user", "/user", {}, scoped("user")))
  .add(...level("admin", "/admin", {}, scoped("admin"))) {}
