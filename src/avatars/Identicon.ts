// The identicon of an account without an uploaded avatar: a symmetric 5×5 pattern in a colour of
// its own, from the sha256 of its lower-cased name (as GitHub's default avatars). One pattern for
// both the web's inline SVG (src/web/Avatar.ts) and the PNG served at its avatar_url (Image.ts),
// so that the web and the API show the same picture.
import { createHash } from "node:crypto"

export interface Identicon {
  /** Hue of both colours, 0–359. */
  readonly hue: number
  /** 5 rows of 5 cells, true where the foreground colour is drawn (mirrored left to right). */
  readonly cells: ReadonlyArray<ReadonlyArray<boolean>>
}

/** The background's and the pattern's saturation and lightness (CSS `hsl`, percent). */
export const BACKGROUND = { saturation: 20, lightness: 92 } as const
export const FOREGROUND = { saturation: 55, lightness: 45 } as const

export const identicon = (name: string): Identicon => {
  const digest = createHash("sha256").update(name.toLowerCase()).digest()
  const hue = ((digest[0]! << 8) | digest[1]!) % 360
  const cells: Array<Array<boolean>> = []
  for (let y = 0; y < 5; y++) {
    const row = [false, false, false, false, false]
    for (let x = 0; x < 3; x++) {
      if ((digest[2 + y * 3 + x]! & 1) === 0) continue
      row[x] = true
      row[4 - x] = true
    }
    cells.push(row)
  }
  return { hue, cells }
}

/** CSS's hsl() as 8-bit RGB (the PNG's colours). */
export const hslToRgb = (hue: number, saturation: number, lightness: number): readonly [number, number, number] => {
  const s = saturation / 100
  const l = lightness / 100
  const a = s * Math.min(l, 1 - l)
  const f = (n: number) => {
    const k = (n + hue / 30) % 12
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))))
  }
  return [f(0), f(8), f(4)]
}
