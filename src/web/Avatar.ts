// An account's picture: Hearth stores no uploaded avatars yet, so every account gets an identicon
// made from its name (a symmetric 5×5 pattern in a colour of its own, as GitHub's default ones),
// inline SVG so that it needs no request and no image route. Decorative: the name is always
// written beside it.
import { createHash } from "node:crypto"
import { type Html, raw } from "./Html.ts"

const built = new Map<string, string>()

/** The identicon of `name`, `size` pixels wide; a circle for users, a rounded square for organizations. */
export const avatar = (
  account: { readonly name: string; readonly type: "user" | "organization" },
  size: number
): Html => {
  const key = `${account.type}/${account.name.toLowerCase()}`
  let shapes = built.get(key)
  if (shapes === undefined) {
    const digest = createHash("sha256").update(account.name.toLowerCase()).digest()
    const hue = ((digest[0]! << 8) | digest[1]!) % 360
    const cells: Array<string> = []
    for (let y = 0; y < 5; y++) {
      for (let x = 0; x < 3; x++) {
        if ((digest[2 + y * 3 + x]! & 1) === 0) continue
        cells.push(`M${x + 1} ${y + 1}h1v1h-1z`)
        if (x < 2) cells.push(`M${5 - x} ${y + 1}h1v1h-1z`)
      }
    }
    shapes = `<rect width="7" height="7" fill="hsl(${hue} 20% 92%)"/><path fill="hsl(${hue} 55% 45%)" d="${cells.join("")}"/>`
    if (built.size > 10_000) built.clear()
    built.set(key, shapes)
  }
  // Primer's `avatar` (rounded square, for organizations) and `circle` (for users).
  const shape = account.type === "organization" ? "avatar" : "avatar circle"
  // Every value written here is a number or Hearth's own markup: nothing of the name itself.
  return raw(
    `<svg class="${shape}" width="${size}" height="${size}" viewBox="0 0 7 7" aria-hidden="true" focusable="false">${shapes}</svg>`
  )
}
