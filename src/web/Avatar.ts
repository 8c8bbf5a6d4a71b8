// An account's picture: its uploaded avatar (src/avatars) when it has one, else its identicon (a
// symmetric 5×5 pattern in a colour of its own, as GitHub's default ones, src/avatars/Identicon.ts)
// drawn inline as SVG, so that it needs no request; the API's identicon PNG has the same cells.
// Decorative: the name is always written beside it.
import { BACKGROUND, FOREGROUND, identicon } from "../avatars/Identicon.ts"
import { AVATAR_SIZE } from "../avatars/Url.ts"
import { type Html, raw } from "./Html.ts"

const built = new Map<string, string>()

const SHA256 = /^[0-9a-f]{64}$/

/** The picture of `account`, `size` pixels wide; a circle for users, a rounded square for organizations. */
export const avatar = (
  account: { readonly name: string; readonly type: "user" | "organization"; readonly avatar?: string },
  size: number
): Html => {
  // Primer's `avatar` (rounded square, for organizations) and `circle` (for users).
  const shape = account.type === "organization" ? "avatar" : "avatar circle"
  const uploaded = account.avatar ?? ""
  if (SHA256.test(uploaded)) {
    // Twice the size shown, for high-density screens (the stored one is at most AVATAR_SIZE).
    const pixels = Math.min(size * 2, AVATAR_SIZE)
    return raw(
      `<img class="${shape}" src="/avatars/${uploaded}?size=${pixels}" width="${size}" height="${size}" alt="" loading="lazy">`
    )
  }
  const key = account.name.toLowerCase()
  let shapes = built.get(key)
  if (shapes === undefined) {
    const { hue, cells } = identicon(account.name)
    const path: Array<string> = []
    cells.forEach((row, y) => {
      row.forEach((on, x) => {
        if (on) path.push(`M${x + 1} ${y + 1}h1v1h-1z`)
      })
    })
    shapes =
      `<rect width="7" height="7" fill="hsl(${hue} ${BACKGROUND.saturation}% ${BACKGROUND.lightness}%)"/>` +
      `<path fill="hsl(${hue} ${FOREGROUND.saturation}% ${FOREGROUND.lightness}%)" d="${path.join("")}"/>`
    if (built.size > 10_000) built.clear()
    built.set(key, shapes)
  }
  // Every value written here is a number or Hearth's own markup: nothing of the name itself.
  return raw(
    `<svg class="${shape}" width="${size}" height="${size}" viewBox="0 0 7 7" aria-hidden="true" focusable="false">${shapes}</svg>`
  )
}
