// Octicons (`@primer/octicons`), inline as SVG so that they take the text's colour; each icon's
// markup is built once from the package's data and kept.
import { packageRequire as require } from "../lib/PackageRoot.ts"
import { type Html, raw } from "./Html.ts"

interface IconData {
  readonly heights: Readonly<Record<string, { readonly width: number; readonly path: string }>>
}

let data: Readonly<Record<string, IconData>> | undefined
const built = new Map<string, Html>()

/** The octicon `name` at `size` pixels high (16 or 24), decorative (hidden from screen readers). */
export const icon = (name: string, size: 16 | 24 = 16): Html => {
  const key = `${name}/${size}`
  const hit = built.get(key)
  if (hit !== undefined) return hit
  data ??= require("@primer/octicons/build/data.json") as Record<string, IconData>
  const heights = data[name]?.heights
  // The drawing made for this size, or the 16 px one scaled.
  const drawn = heights?.[String(size)] !== undefined ? size : 16
  const shape = heights?.[String(drawn)]
  if (shape === undefined) throw new Error(`web: no octicon named ${name}`)
  const svg = raw(
    `<svg class="octicon octicon-${name}" width="${(shape.width * size) / drawn}" height="${size}" viewBox="0 0 ${shape.width} ${drawn}" aria-hidden="true" focusable="false">${shape.path}</svg>`
  )
  built.set(key, svg)
  return svg
}

/** The raw SVG document of an octicon (the favicon). */
export const iconDocument = (name: string, fill: string): string => {
  data ??= require("@primer/octicons/build/data.json") as Record<string, IconData>
  const shape = data[name]?.heights["16"]
  if (shape === undefined) throw new Error(`web: no octicon named ${name}`)
  return `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16" fill="${fill}">${shape.path}</svg>`
}
