// Avatar pictures with sharp (libvips), loaded on first use (src/lib/LazyRequire.ts): an upload is
// checked (a PNG, JPEG, GIF or WebP within [picture]'s limits), cropped to a square and stored as
// a PNG of at most AVATAR_SIZE pixels (Forgejo's `avatar.ProcessAvatarImage`); identicons and
// smaller sizes are drawn on demand.
import { Effect } from "effect"

import type { SettingsShape } from "../config/Settings.ts"
import * as Errors from "../http/Errors.ts"
import { lazyRequire } from "../lib/LazyRequire.ts"
import { BACKGROUND, FOREGROUND, hslToRgb, identicon } from "./Identicon.ts"
import { AVATAR_SIZE } from "./Url.ts"

// require() gives the CommonJS build, whose export is the function the ESM types call `default`.
const sharp = lazyRequire<typeof import("sharp").default>("sharp")

/** What Forgejo's avatar decoding accepts (Go's image package with png, jpeg, gif and webp). */
const ACCEPTED = new Set(["png", "jpeg", "gif", "webp"])

/**
 * The PNG stored for an uploaded picture; 422 (nothing stored) when it is no picture or too big,
 * with Forgejo's limits `[picture] AVATAR_MAX_FILE_SIZE`, `AVATAR_MAX_WIDTH`, `AVATAR_MAX_HEIGHT`.
 */
export const prepareAvatar = (settings: SettingsShape, data: Uint8Array) =>
  Effect.gen(function* () {
    const limits = settings.picture
    if (data.length > limits.AVATAR_MAX_FILE_SIZE) {
      return yield* Errors.validationFailed(
        `the image is too large: ${data.length} bytes, at most ${limits.AVATAR_MAX_FILE_SIZE} ([picture] AVATAR_MAX_FILE_SIZE)`
      )
    }
    const notAnImage = Errors.validationFailed("the file is not a PNG, JPEG, GIF or WebP image")
    // The header only: sizes are checked before any pixel is decoded.
    const meta = yield* Effect.tryPromise({
      try: () => sharp()(data, { animated: false }).metadata(),
      catch: () => notAnImage
    })
    if (meta.format === undefined || !ACCEPTED.has(meta.format) || !meta.width || !meta.height) {
      return yield* notAnImage
    }
    if (meta.width > limits.AVATAR_MAX_WIDTH) {
      return yield* Errors.validationFailed(
        `the image is too wide: ${meta.width} pixels, at most ${limits.AVATAR_MAX_WIDTH} ([picture] AVATAR_MAX_WIDTH)`
      )
    }
    if (meta.height > limits.AVATAR_MAX_HEIGHT) {
      return yield* Errors.validationFailed(
        `the image is too high: ${meta.height} pixels, at most ${limits.AVATAR_MAX_HEIGHT} ([picture] AVATAR_MAX_HEIGHT)`
      )
    }
    const side = Math.min(meta.width, meta.height, AVATAR_SIZE)
    // Turned as its EXIF orientation says, centred square crop (Forgejo's `cropSquare`), PNG
    // without the upload's metadata (a photo's location stays with its owner).
    return yield* Effect.tryPromise({
      try: () =>
        sharp()(data, { animated: false })
          .rotate()
          .resize(side, side, { fit: "cover", position: "centre" })
          .png()
          .toBuffer(),
      catch: () => notAnImage
    })
  })

/** A stored avatar at `size` pixels (smaller than its own). */
export const resizedPng = (png: Uint8Array, size: number) =>
  Effect.promise(() => sharp()(png).resize(size, size, { fit: "cover", withoutEnlargement: true }).png().toBuffer())

/** The identicon of `name` as a PNG of `size` pixels: the cells of src/web/Avatar.ts's SVG (7×7 with a margin). */
export const identiconPng = (name: string, size: number) =>
  Effect.promise(() => {
    const { hue, cells } = identicon(name)
    const background = hslToRgb(hue, BACKGROUND.saturation, BACKGROUND.lightness)
    const foreground = hslToRgb(hue, FOREGROUND.saturation, FOREGROUND.lightness)
    const pixels = Buffer.alloc(7 * 7 * 3)
    for (let y = 0; y < 7; y++) {
      for (let x = 0; x < 7; x++) {
        const on = y >= 1 && y <= 5 && x >= 1 && x <= 5 && cells[y - 1]![x - 1]!
        pixels.set(on ? foreground : background, (y * 7 + x) * 3)
      }
    }
    return sharp()(pixels, { raw: { width: 7, height: 7, channels: 3 } })
      .resize(size, size, { kernel: "nearest" })
      .png()
      .toBuffer()
  })
