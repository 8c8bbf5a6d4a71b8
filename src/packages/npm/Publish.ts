// Reading `npm publish`'s document (libnpmpublish's PUT /{name}): a JSON object whose
// `_attachments.<file>.data` holds the whole tarball in base64, next to the version's manifest.
// The tarball can be large, so the document is not parsed in one piece: a scanner follows the JSON
// structure byte by byte, decodes that one string as it arrives and hands its bytes to the blob
// storage, and keeps the rest of the document (with `"data":""`) to parse once the body has ended.
// Only the document without its tarball is ever held, up to MAX_DOCUMENT_BYTES.
import { parseSemver } from "../../lib/Semver.ts"

/** The document without its tarball (manifest, readme, dist-tags) may not exceed this. */
export const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024

/** A refusal of the publish document: the status and npm's `error` text. */
export class PublishRefused extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

const bad = (message: string) => new PublishRefused(400, message)

interface Level {
  readonly object: boolean
  expectKey: boolean
  key: string | undefined
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const BASE64 = /^[A-Za-z0-9+/]*$/

/**
 * Follows a JSON document chunk by chunk: `feed` returns the decoded bytes of the first
 * `_attachments.*.data` string found in the chunk, and keeps every other byte for `document`.
 * Malformed JSON is not judged here: it fails `document`'s parse at the end.
 */
class Scanner {
  private readonly kept: Array<Buffer> = []
  private keptBytes = 0
  private readonly stack: Array<Level> = []
  private inString = false
  private escaped = false
  private keyBytes: Array<number> | undefined
  private streaming = false
  private streamed = false
  private pendingEscape = false
  private base64 = ""
  private padded = false
  decoded = 0

  feed(chunk: Buffer): Buffer {
    const out: Array<Buffer> = []
    let copyFrom = this.streaming ? -1 : 0
    let i = 0
    while (i < chunk.length) {
      if (this.streaming) {
        if (this.pendingEscape) {
          // Only `\/` can stand for a base64 character.
          if (chunk[i] !== 0x2f) throw bad("the tarball attachment's data is not base64")
          this.pendingEscape = false
          this.decode(Buffer.from("/"), out)
          i++
          continue
        }
        let end = chunk.indexOf(QUOTE, i)
        const slash = chunk.indexOf(BACKSLASH, i)
        if (end === -1 || (slash !== -1 && slash < end)) end = slash
        if (end === -1) {
          this.decode(chunk.subarray(i), out)
          i = chunk.length
          break
        }
        this.decode(chunk.subarray(i, end), out)
        if (chunk[end] === BACKSLASH) {
          this.pendingEscape = true
          i = end + 1
          continue
        }
        this.finishBase64(out)
        this.streaming = false
        this.inString = false
        copyFrom = end
        i = end + 1
        continue
      }
      const c = chunk[i]!
      if (this.inString) {
        if (this.escaped) this.escaped = false
        else if (c === BACKSLASH) this.escaped = true
        else if (c === QUOTE) {
          this.inString = false
          if (this.keyBytes !== undefined) {
            const top = this.stack[this.stack.length - 1]
            if (top !== undefined) top.key = this.decodeKey(this.keyBytes)
            this.keyBytes = undefined
          }
          i++
          continue
        }
        if (this.keyBytes !== undefined && this.keyBytes.length < 1024) this.keyBytes.push(c)
        i++
        continue
      }
      const top = this.stack[this.stack.length - 1]
      switch (c) {
        case 0x7b: // {
          this.stack.push({ object: true, expectKey: true, key: undefined })
          break
        case 0x5b: // [
          this.stack.push({ object: false, expectKey: false, key: undefined })
          break
        case 0x7d: // }
        case 0x5d: // ]
          this.stack.pop()
          break
        case 0x3a: // :
          if (top?.object === true) top.expectKey = false
          break
        case 0x2c: // ,
          if (top?.object === true) top.expectKey = true
          break
        case QUOTE:
          this.inString = true
          if (top?.object === true && top.expectKey) {
            this.keyBytes = []
          } else if (!this.streamed && this.atTarball()) {
            this.streaming = true
            this.streamed = true
            this.keep(chunk.subarray(copyFrom, i + 1))
            copyFrom = -1
          }
          break
      }
      i++
    }
    if (copyFrom !== -1 && copyFrom < chunk.length) this.keep(chunk.subarray(copyFrom))
    return out.length === 1 ? out[0]! : Buffer.concat(out)
  }

  /** The parsed document (its tarball's data ""), once the body has ended. */
  document(): unknown {
    if (this.streaming || this.inString || this.stack.length > 0) throw bad("the publish document ends too early")
    try {
      return JSON.parse(Buffer.concat(this.kept).toString("utf8"))
    } catch (e) {
      throw bad(`the publish document is not JSON: ${(e as Error).message}`)
    }
  }

  /** `_attachments.<any>.data`, as a value. */
  private atTarball(): boolean {
    const [root, attachments, attachment] = this.stack
    return (
      this.stack.length === 3 &&
      root!.object &&
      root!.key === "_attachments" &&
      attachments!.object &&
      attachment!.object &&
      attachment!.key === "data"
    )
  }

  private decodeKey(bytes: Array<number>): string | undefined {
    try {
      return JSON.parse(`"${Buffer.from(bytes).toString("utf8")}"`) as string
    } catch {
      return undefined
    }
  }

  private keep(bytes: Buffer) {
    if (bytes.length === 0) return
    this.keptBytes += bytes.length
    if (this.keptBytes > MAX_DOCUMENT_BYTES)
      throw new PublishRefused(
        413,
        `the publish document without its tarball is over ${MAX_DOCUMENT_BYTES / 1024 / 1024} MiB`
      )
    // A copy: a slice would keep the whole chunk (mostly tarball) alive.
    this.kept.push(Buffer.from(bytes))
  }

  private decode(text: Buffer, out: Array<Buffer>) {
    if (text.length === 0) return
    const piece = text.toString("latin1")
    if (this.padded) {
      // After the padding only more padding may come.
      if (!/^=*$/.test(piece)) throw bad("the tarball attachment's data is not base64")
      this.base64 += piece
      return
    }
    const chars = this.base64 + piece
    const pad = chars.indexOf("=")
    if (pad !== -1) {
      if (!/^=*$/.test(chars.slice(pad))) throw bad("the tarball attachment's data is not base64")
      this.padded = true
    }
    if (!BASE64.test(pad === -1 ? chars : chars.slice(0, pad))) throw bad("the tarball attachment's data is not base64")
    // Whole groups of 4 now; the rest (and a padded last group) when more comes or at the end.
    const end = pad === -1 ? chars.length : pad
    const whole = end - (end % 4)
    this.base64 = chars.slice(whole)
    if (whole === 0) return
    const bytes = Buffer.from(chars.slice(0, whole), "base64")
    this.decoded += bytes.length
    out.push(bytes)
  }

  private finishBase64(out: Array<Buffer>) {
    if (this.base64.length % 4 !== 0) throw bad("the tarball attachment's data is not base64 (its length is wrong)")
    if (this.base64.length > 0) {
      const bytes = Buffer.from(this.base64, "base64")
      this.decoded += bytes.length
      out.push(bytes)
      this.base64 = ""
    }
  }
}

export interface PublishScan {
  /** The tarball's bytes, for the blob storage; reading them to the end reads the whole body. */
  readonly tarball: AsyncIterable<Uint8Array>
  /** Why the body was refused while it was read, if it was. */
  readonly failure: () => PublishRefused | undefined
  /** The document without its tarball; the number of tarball bytes decoded. */
  readonly result: () => { readonly document: unknown; readonly tarballBytes: number }
}

/** Splits a publish body into its tarball's bytes (streamed) and its document (kept). */
export const scanPublish = (body: AsyncIterable<Uint8Array | string>): PublishScan => {
  const scanner = new Scanner()
  let failure: PublishRefused | undefined
  const tarball = async function* () {
    try {
      for await (const chunk of body) {
        const bytes = scanner.feed(
          typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
        )
        if (bytes.length > 0) yield bytes
      }
    } catch (e) {
      if (e instanceof PublishRefused) failure = e
      throw e
    }
  }
  return {
    tarball: tarball(),
    failure: () => failure,
    result: () => ({ document: scanner.document(), tarballBytes: scanner.decoded })
  }
}

// ---------------------------------------------------------------------------------------------
// The rules of a publish (npm's validate-npm-package-name as Forgejo's creator.go applies it).

const NAME = /^(@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/

/** Why `name` is not a package name npm accepts, if it is not (lower case, URL-safe, ≤ 214). */
export const invalidName = (name: string): string | undefined =>
  name.length === 0 || name.length > 214 || !NAME.test(name)
    ? `"${name}" is not a valid npm package name (lower case letters, digits, - . _ ~, an optional @scope/, at most 214 characters, not starting with . or _)`
    : undefined

/** Why `tag` cannot be a dist-tag, if it cannot: npm reads a tag that looks like a version or a range as one. */
export const invalidTag = (tag: string): string | undefined => {
  if (tag === "" || tag.length > 128 || encodeURIComponent(tag) !== tag)
    return `"${tag}" is not a valid dist-tag (letters, digits, - . _ ~)`
  if (/^v?\d/i.test(tag) || /^[x*]$/i.test(tag) || parseSemver(tag) !== undefined)
    return `"${tag}" is not a valid dist-tag: it would read as a version or a range`
  return undefined
}

/** The unscoped part of a name (`@scope/pkg` → `pkg`). */
export const unscoped = (name: string): string => name.slice(name.indexOf("/") + 1)

/** The tarball's file name, as npm names it: `<unscoped name>-<version>.tgz`. */
export const tarballName = (name: string, version: string): string => `${unscoped(name)}-${version}.tgz`.toLowerCase()

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

export interface Publish {
  readonly name: string
  readonly version: string
  /** The version's manifest as it will be served (registry-owned fields dropped). */
  readonly manifest: Json
  readonly readme: string | undefined
  readonly tags: ReadonlyArray<string>
  /** `dist.integrity` (SRI) and `dist.shasum` as declared, to check against the stored bytes. */
  readonly integrity: string | undefined
  readonly shasum: string | undefined
  readonly attachmentLength: number | undefined
}

/** The publish a document describes for the package `pathName`, or why it is refused (400). */
export const readPublish = (document: unknown, pathName: string): Publish => {
  if (!isObject(document)) throw bad("the publish document is not a JSON object")
  const versions = document.versions
  if (!isObject(versions) || Object.keys(versions).length !== 1)
    throw bad("the publish document must hold exactly one version in `versions`")
  const [key, manifest] = Object.entries(versions)[0]!
  if (!isObject(manifest)) throw bad(`the manifest of version "${key}" is not a JSON object`)
  const name = manifest.name
  if (typeof name !== "string") throw bad("the version's manifest has no `name`")
  const invalid = invalidName(name)
  if (invalid !== undefined) throw bad(invalid)
  if (name !== pathName || (document.name !== undefined && document.name !== name))
    throw bad(`the document publishes "${name}" but was sent to the address of "${pathName}"`)
  const version = manifest.version
  if (typeof version !== "string" || parseSemver(version) === undefined)
    throw bad(`"${String(version)}" is not a semantic version (such as 1.2.3 or 2.0.0-beta.1)`)
  if (key !== version) throw bad(`the version is listed as "${key}" but its manifest says "${version}"`)
  const tags: Array<string> = []
  const distTags = document["dist-tags"]
  if (distTags !== undefined) {
    if (!isObject(distTags)) throw bad("`dist-tags` is not a JSON object")
    for (const [tag, target] of Object.entries(distTags)) {
      // A tag names this version; one naming another version is not this publish's business.
      if (target !== version) continue
      const refused = invalidTag(tag)
      if (refused !== undefined) throw bad(refused)
      tags.push(tag)
    }
  }
  const attachments = document._attachments
  if (!isObject(attachments) || Object.keys(attachments).length !== 1)
    throw bad("the publish document must carry exactly one tarball in `_attachments`")
  const attachment = Object.values(attachments)[0]
  if (!isObject(attachment) || attachment.data !== "") throw bad("the tarball attachment has no base64 `data`")
  const dist = isObject(manifest.dist) ? manifest.dist : {}
  const integrity = typeof dist.integrity === "string" ? dist.integrity : undefined
  const shasum = typeof dist.shasum === "string" ? dist.shasum : undefined
  if (integrity === undefined && shasum === undefined)
    throw bad("the version's `dist` declares neither `integrity` nor `shasum`: the tarball cannot be checked")
  const served: Json = {}
  for (const [field, value] of Object.entries(manifest)) {
    // The registry's own fields (ids, dist, publish-time notes) are written by the registry.
    if (field.startsWith("_") && field !== "_hasShrinkwrap") continue
    if (field === "dist" || field === "readme" || field === "readmeFilename") continue
    served[field] = value
  }
  const readme = typeof manifest.readme === "string" ? manifest.readme : undefined
  return {
    name,
    version,
    manifest: served,
    readme,
    tags,
    integrity,
    shasum,
    attachmentLength: typeof attachment.length === "number" ? attachment.length : undefined
  }
}

const SRI_HEX = { sha1: "sha1", sha256: "sha256", sha512: "sha512" } as const

/**
 * Why the stored bytes are not the tarball the manifest declares, if they are not: every
 * `dist.integrity` entry of a known algorithm and `dist.shasum` must match (an integrity with no
 * known algorithm is refused, as it checks nothing).
 */
export const integrityMismatch = (
  publish: Publish,
  digests: { readonly sha1: string; readonly sha256: string; readonly sha512: string },
  size: number
): string | undefined => {
  if (publish.attachmentLength !== undefined && publish.attachmentLength !== size)
    return `the tarball is ${size} bytes but its attachment declares a length of ${publish.attachmentLength}`
  if (publish.shasum !== undefined && publish.shasum.toLowerCase() !== digests.sha1)
    return `the tarball's sha1 is ${digests.sha1}, not the declared dist.shasum ${publish.shasum}`
  if (publish.integrity !== undefined) {
    let checked = 0
    for (const entry of publish.integrity.trim().split(/\s+/)) {
      const dash = entry.indexOf("-")
      const algorithm = entry.slice(0, dash) as keyof typeof SRI_HEX
      if (dash < 0 || !(algorithm in SRI_HEX)) continue
      const expected = entry.slice(dash + 1).split("?")[0]!
      const actual = Buffer.from(digests[SRI_HEX[algorithm]], "hex").toString("base64")
      if (expected !== actual)
        return `the tarball does not match the declared dist.integrity (${algorithm} is ${algorithm}-${actual})`
      checked++
    }
    if (checked === 0) return `dist.integrity "${publish.integrity}" names no known algorithm (sha512, sha256, sha1)`
  }
  return undefined
}
