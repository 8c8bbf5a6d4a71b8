// The avatar part of a settings page (Forgejo's `/user/settings/avatar` and its delete): the
// current picture, a multipart form to upload one and a button to delete it. The upload is read
// into memory (at most [picture] AVATAR_MAX_FILE_SIZE bytes) and given to AvatarsService, which
// checks, shrinks and stores it; the CSRF token, the form's first field, is checked before that.
import type { Readable } from "node:stream"
import { Effect } from "effect"
import { AVATAR_SIZE } from "../../../avatars/Url.ts"
import * as Errors from "../../../http/Errors.ts"
import { readMultipartUpload } from "../../../storage/Multipart.ts"
import type { StoredBlob } from "../../../storage/Service.ts"
import { avatar } from "../../Avatar.ts"
import { formError } from "../../Form.ts"
import { empty, type Html, html } from "../../Html.ts"
import { csrfField } from "../../Layout.ts"
import type { Web, WebContext } from "../../Web.ts"
import { buttonForm, section } from "./Frame.ts"

export const CSRF_REFUSED = "The form has expired. Go back, reload the page and try again."

/** The section of an account's settings: `action` takes the upload, `${action}/delete` removes the picture. */
export const avatarSection = (
  ctx: WebContext,
  account: { readonly name: string; readonly type: "user" | "organization"; readonly avatar: string },
  action: string,
  message?: string
) => uploadSection(ctx, avatar(account, 96), account.avatar !== "", action, message)

/** The same for a repository (Forgejo's `/{owner}/{repo}/settings/avatar`): a square, none by default. */
export const repoAvatarSection = (ctx: WebContext, repo: { readonly avatar: string }, action: string) =>
  uploadSection(
    ctx,
    repo.avatar === ""
      ? html`<span class="color-fg-muted">No avatar</span>`
      : html`<img class="avatar" src="/repo-avatars/${repo.avatar}?size=192" width="96" height="96" alt="">`,
    repo.avatar !== "",
    action
  )

const uploadSection = (ctx: WebContext, picture: Html, uploaded: boolean, action: string, message?: string) =>
  section(
    "Avatar",
    html`<div class="Box-body">${formError(message)}</div>
<div class="Box-body d-flex flex-items-center flex-wrap">
  <span class="mr-3" data-testid="avatar-current">${picture}</span>
  <form method="post" action="${action}" enctype="multipart/form-data" class="mr-2" data-testid="avatar-form">
    ${csrfField(ctx)}
    <label class="d-block text-bold mb-1" for="avatar-file">Upload a picture</label>
    <input type="file" id="avatar-file" name="avatar" accept="image/png,image/jpeg,image/gif,image/webp" required>
    <p class="note">PNG, JPEG, GIF or WebP, at most ${Math.floor(ctx.settings.picture.AVATAR_MAX_FILE_SIZE / 1024)} KiB; stored as a square of at most ${AVATAR_SIZE} pixels.</p>
    <button class="btn" type="submit">Update avatar</button>
  </form>
  ${!uploaded ? empty : buttonForm(ctx, `${action}/delete`, {}, "Delete avatar", { danger: true })}
</div>`,
    "avatar"
  )

/**
 * The picture of the form's `avatar` field, once the CSRF token before it matched: a 400 page for
 * an expired form, the message of a refused upload (to show on the page), or the bytes.
 */
export const readAvatarUpload = (web: Web, ctx: WebContext) =>
  Effect.gen(function* () {
    const limit = ctx.settings.picture.AVATAR_MAX_FILE_SIZE
    const chunks: Array<Buffer> = []
    const upload = yield* Effect.result(
      readMultipartUpload(ctx.request, {
        fileField: "avatar",
        maxSize: limit,
        accept: (file) =>
          web.csrfMatches(ctx, file.fields.get("_csrf") ?? null)
            ? Effect.void
            : Effect.fail(Errors.badRequest(CSRF_REFUSED)),
        // Kept in memory, not in the blob storage: AvatarsService stores the PNG it makes of it.
        put: (body: Readable) =>
          Effect.tryPromise({
            try: async () => {
              let size = 0
              for await (const chunk of body) {
                size += (chunk as Buffer).length
                if (size > limit) throw new Error("too large")
                chunks.push(chunk as Buffer)
              }
              return { sha256: "", size, created: false, hold: 0 } satisfies StoredBlob
            },
            catch: () =>
              Errors.payloadTooLarge(`the picture is larger than ${limit} bytes ([picture] AVATAR_MAX_FILE_SIZE)`)
          })
      })
    )
    if (upload._tag === "Failure") {
      if (upload.failure.message === CSRF_REFUSED) return { refused: "csrf" } as const
      return { message: upload.failure.message ?? "The picture could not be read." } as const
    }
    if (upload.success.file === undefined) return { message: "Choose a picture to upload." } as const
    return { bytes: new Uint8Array(Buffer.concat(chunks)) } as const
  })
