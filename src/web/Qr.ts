// QR codes for the two-factor enrolment page: the `otpauth://` URI as an SVG image in a data: URL
// (the CSP allows `img-src data:`; no script draws it). The modules come from `qr` (paulmillr/qr:
// maintained, no dependencies, generator and reader), loaded on first use; the SVG is written here
// with one path per row run, dark on a white quiet zone, so it scans in dark mode too.
import { lazyRequire } from "../lib/LazyRequire.ts"

const qr = lazyRequire<typeof import("qr")>("qr")

/** `text` as a QR code: an `image/svg+xml` data: URL, `scale` pixels a module. */
export const qrDataUrl = (text: string, scale = 4): string => {
  const modules = qr().default(text, "raw", { ecc: "medium", border: 4 })
  const size = modules.length
  let path = ""
  modules.forEach((row, y) => {
    let x = 0
    while (x < size) {
      if (!row[x]) {
        x++
        continue
      }
      const start = x
      while (x < size && row[x]) x++
      path += `M${start} ${y}h${x - start}v1h-${x - start}z`
    }
  })
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${size * scale}" height="${size * scale}" viewBox="0 0 ${size} ${size}" shape-rendering="crispEdges">` +
    `<rect width="${size}" height="${size}" fill="#fff"/><path fill="#000" d="${path}"/></svg>`
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}`
}
