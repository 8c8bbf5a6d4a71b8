// What an uploaded file is, from its first bytes (Go's `http.DetectContentType`, which Forgejo's
// `upload.Verify` checks `[attachment] ALLOWED_TYPES` against), and how a stored upload is served
// without letting it act in the forge's origin (Forgejo's `httplib.ServeSetHeaders`).

/** Bytes the detection looks at (Go's `sniffLen`). */
export const SNIFF_BYTES = 512

const startsWith = (bytes: Uint8Array, magic: ReadonlyArray<number>, at = 0) =>
  bytes.length >= at + magic.length && magic.every((b, i) => bytes[at + i] === b)
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0))

/** Signatures of binary formats, with Go's names for them. */
const SIGNATURES: ReadonlyArray<readonly [ReadonlyArray<number>, string, number?]> = [
  [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "image/png"],
  [[0xff, 0xd8, 0xff], "image/jpeg"],
  [ascii("GIF87a"), "image/gif"],
  [ascii("GIF89a"), "image/gif"],
  [ascii("BM"), "image/bmp"],
  [[0x00, 0x00, 0x01, 0x00], "image/x-icon"],
  [ascii("%PDF-"), "application/pdf"],
  [ascii("%!PS-Adobe-"), "application/postscript"],
  [[0x50, 0x4b, 0x03, 0x04], "application/zip"],
  [[0x1f, 0x8b, 0x08], "application/x-gzip"],
  [ascii("Rar!\x1a\x07\x00"), "application/x-rar-compressed"],
  [ascii("Rar!\x1a\x07\x01\x00"), "application/x-rar-compressed"],
  [[0x00, 0x61, 0x73, 0x6d], "application/wasm"],
  [[0x1a, 0x45, 0xdf, 0xa3], "video/webm"],
  [ascii("OggS\x00"), "application/ogg"],
  [ascii("ID3"), "audio/mpeg"],
  [ascii("fLaC"), "audio/flac"],
  [ascii("wOFF"), "font/woff"],
  [ascii("wOF2"), "font/woff2"]
]

/** The HTML openings Go recognises (case-insensitive, after white space, then a space or `>`). */
const HTML_TAGS = [
  "<!DOCTYPE HTML",
  "<HTML",
  "<HEAD",
  "<SCRIPT",
  "<IFRAME",
  "<H1",
  "<DIV",
  "<FONT",
  "<TABLE",
  "<A",
  "<STYLE",
  "<TITLE",
  "<B",
  "<BODY",
  "<BR",
  "<P",
  "<!--"
]

const isWhite = (b: number) => b === 0x09 || b === 0x0a || b === 0x0c || b === 0x0d || b === 0x20
/** Go's "binary data byte": a control character other than tab, LF, FF, CR and ESC. */
const isBinary = (b: number) => b <= 0x08 || b === 0x0b || (b >= 0x0e && b <= 0x1a) || (b >= 0x1c && b <= 0x1f)

/** The MIME type of content starting with `bytes` (the first SNIFF_BYTES are read), as Go names it. */
export const detectContentType = (input: Uint8Array): string => {
  const bytes = input.subarray(0, SNIFF_BYTES)
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBPVP"), 8)) return "image/webp"
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WAVE"), 8)) return "audio/wave"
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("AVI "), 8)) return "video/avi"
  if (startsWith(bytes, ascii("ftyp"), 4) && !startsWith(bytes, ascii("ftypqt"), 4)) return "video/mp4"
  for (const [magic, type] of SIGNATURES) if (startsWith(bytes, magic)) return type
  if (startsWith(bytes, [0xfe, 0xff]) || startsWith(bytes, [0xff, 0xfe])) return "text/plain; charset=utf-16"
  let start = 0
  while (start < bytes.length && isWhite(bytes[start]!)) start++
  const rest = new TextDecoder("latin1").decode(bytes.subarray(start, start + 16)).toUpperCase()
  for (const tag of HTML_TAGS) {
    if (!rest.startsWith(tag)) continue
    const next = rest.charCodeAt(tag.length)
    if (next === 0x20 || next === 0x3e) return "text/html; charset=utf-8"
  }
  if (rest.startsWith("<?XML")) return "text/xml; charset=utf-8"
  if (!bytes.some(isBinary)) return "text/plain; charset=utf-8"
  return "application/octet-stream"
}

/**
 * Forgejo's `upload.Verify`: whether a file named `filename` whose content was detected as
 * `detected` may be uploaded under `allowed` (comma- or `|`-separated extensions, MIME types and
 * `type/*` wildcards; an empty list or `*\/*` allows anything).
 */
export const typeAllowed = (allowed: string, filename: string, detected: string): boolean => {
  const entries = allowed
    .replaceAll("|", ",")
    .split(",")
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== "")
  if (entries.length === 0) return true
  const mime = detected.split(";")[0]!.trim().toLowerCase()
  const dot = filename.lastIndexOf(".")
  const slash = filename.lastIndexOf("/")
  const extension = dot > slash ? filename.slice(dot).toLowerCase() : ""
  return entries.some(
    (entry) =>
      entry === "*/*" ||
      (entry.startsWith(".") && entry === extension) ||
      entry === mime ||
      (/^[a-z]+\/\*$/.test(entry) && mime.startsWith(entry.slice(0, -1)))
  )
}

/** Forgejo's header for served uploads: whatever a file holds, it runs nothing in the forge's origin. */
export const SERVED_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"

/**
 * How a stored upload of detected type `detected` is served: images, audio, video and PDF as
 * themselves, inline; any text (HTML, SVG and XML included) as plain text, inline; everything else as
 * `application/octet-stream`, downloaded. With `nosniff`, a browser never renders an upload as a page.
 */
export const servedAs = (detected: string): { readonly contentType: string; readonly inline: boolean } => {
  const mime = detected.split(";")[0]!.trim().toLowerCase()
  if (/^(image\/(png|jpeg|gif|webp|bmp|x-icon)|audio\/[a-z0-9.+-]+|video\/[a-z0-9.+-]+|application\/pdf)$/.test(mime)) {
    return { contentType: mime, inline: true }
  }
  if (mime.startsWith("text/")) {
    return { contentType: detected.includes("utf-16") ? detected : "text/plain; charset=utf-8", inline: true }
  }
  return { contentType: "application/octet-stream", inline: false }
}

/** `Content-Disposition` for a file named `name` (RFC 6266, with an ASCII fallback). */
export const contentDisposition = (name: string, inline: boolean) => {
  const fallback = name.replace(/[^\x20-\x7e]|["\\]/g, "_")
  return `${inline ? "inline" : "attachment"}; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(name)}`
}
