// OCI image layout directories written by hand (the image-spec's image-layout.md: `oci-layout`,
// `index.json`, `blobs/sha256/<hex>`), for skopeo to copy to and from Hearth's container registry
// (test/packages-container.test.ts, infra/bench/packages/container.ts).
import { createHash, randomBytes } from "node:crypto"
import { createWriteStream, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pipeline } from "node:stream/promises"
import { createGzip, gzipSync } from "node:zlib"

export interface Descriptor {
  readonly mediaType: string
  readonly digest: string
  readonly size: number
  readonly platform?: { readonly architecture: string; readonly os: string }
  readonly annotations?: Record<string, string>
}

export const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
export const OCI_INDEX = "application/vnd.oci.image.index.v1+json"
export const OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
/** Layers are gzip-compressed: skopeo compresses plain tar layers on the way to a registry (the manifest would change). */
export const OCI_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"

/** A layer of `size` random bytes, gzip-compressed (stored, level 0: random bytes do not shrink). */
export const randomLayer = (size: number): Buffer => gzipSync(randomBytes(size), { level: 0 })

const blobsDir = (dir: string) => join(dir, "blobs", "sha256")

/** Stores bytes as a blob of the layout; its descriptor. */
export const writeBlob = (dir: string, bytes: Buffer | string, mediaType: string): Descriptor => {
  const data = typeof bytes === "string" ? Buffer.from(bytes) : bytes
  mkdirSync(blobsDir(dir), { recursive: true })
  const hex = createHash("sha256").update(data).digest("hex")
  writeFileSync(join(blobsDir(dir), hex), data)
  return { mediaType, digest: `sha256:${hex}`, size: data.length }
}

/** A layer of about `size` random bytes (gzip, level 0) written in 1 MiB pieces (large images); its descriptor. */
export const writeRandomLayer = async (dir: string, size: number): Promise<Descriptor> => {
  mkdirSync(blobsDir(dir), { recursive: true })
  const temp = join(blobsDir(dir), `tmp-${process.pid}-${Date.now()}`)
  const hash = createHash("sha256")
  let written = 0
  const gzip = createGzip({ level: 0 })
  gzip.on("data", (chunk: Buffer) => {
    hash.update(chunk)
    written += chunk.length
  })
  const done = pipeline(gzip, createWriteStream(temp))
  for (let left = size; left > 0; ) {
    const piece = randomBytes(Math.min(left, 1 << 20))
    if (!gzip.write(piece)) await new Promise((resolve) => gzip.once("drain", resolve))
    left -= piece.length
  }
  gzip.end()
  await done
  const hex = hash.digest("hex")
  renameSync(temp, join(blobsDir(dir), hex))
  return { mediaType: OCI_LAYER, digest: `sha256:${hex}`, size: written }
}

/** An image: its config (naming the layers' diff ids) and manifest; the manifest's descriptor. */
export const writeImage = (
  dir: string,
  options: { readonly arch: string; readonly layers: ReadonlyArray<Descriptor> }
): Descriptor => {
  const config = writeBlob(
    dir,
    JSON.stringify({
      architecture: options.arch,
      os: "linux",
      config: { Env: ["PATH=/usr/bin"] },
      rootfs: { type: "layers", diff_ids: options.layers.map((l) => l.digest) }
    }),
    OCI_CONFIG
  )
  const manifest = writeBlob(
    dir,
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config,
      layers: options.layers
    }),
    OCI_MANIFEST
  )
  return { ...manifest, platform: { architecture: options.arch, os: "linux" } }
}

/** An image index of platform manifests; its descriptor. */
export const writeIndex = (dir: string, manifests: ReadonlyArray<Descriptor>): Descriptor =>
  writeBlob(dir, JSON.stringify({ schemaVersion: 2, mediaType: OCI_INDEX, manifests }), OCI_INDEX)

/** Writes `oci-layout` and `index.json` naming each tag's manifest or index. */
export const writeLayout = (dir: string, tags: Record<string, Descriptor>) => {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }))
  writeFileSync(
    join(dir, "index.json"),
    JSON.stringify({
      schemaVersion: 2,
      manifests: Object.entries(tags).map(([tag, d]) => ({
        mediaType: d.mediaType,
        digest: d.digest,
        size: d.size,
        annotations: { "org.opencontainers.image.ref.name": tag }
      }))
    })
  )
}

/** The descriptor a layout's `index.json` gives a tag. */
export const layoutTag = (dir: string, tag: string): Descriptor => {
  const index = JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as { manifests: Array<Descriptor> }
  const found = index.manifests.find((m) => m.annotations?.["org.opencontainers.image.ref.name"] === tag)
  if (found === undefined) throw new Error(`${dir} has no tag ${tag}`)
  return found
}

/** A blob of a layout. */
export const readBlob = (dir: string, digest: string): Buffer =>
  readFileSync(join(blobsDir(dir), digest.replace(/^sha256:/, "")))
