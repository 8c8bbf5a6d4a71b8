// Blob storage (issue 16 item 3; Forgejo's models/packages `package_blob`): the
// local store of a running Hearth on its real database — digests against node:crypto, dedup,
// reference counts and removal, holds, the size limit before and during the body, aborted and
// interrupted uploads, concurrent puts and a removal racing a put, reading back (ranges, effect
// streams), the sweep of what crashes leave behind, and the [storage] settings. Uploads over
// HTTP go through a small server of this file on the same `BlobStorage` (`putRequest`, as
// attachment and package handlers will use it).

import { createHash, randomBytes, randomFillSync } from "node:crypto"
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync
} from "node:fs"
import { createServer, request as httpRequest, IncomingMessage } from "node:http"
import { Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Readable } from "node:stream"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Context, Effect, Exit, Fiber, Layer, Option, Scope, Stream } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Settings from "../src/config/Settings.ts"
import * as Errors from "../src/http/Errors.ts"
import { FileDigester } from "../src/storage/Digests.ts"
import { parseRange, putRequest } from "../src/storage/Http.ts"
import { WRITE_BYTES } from "../src/storage/Local.ts"
import { BlobStorage } from "../src/storage/Service.ts"
import { type Hearth, startHearth } from "./support/hearth.ts"
import { killAll, spawnHearth, within } from "./support/spawn.ts"

/** The limit of the upload route of this file's HTTP server. */
const LIMIT = 256 * 1024

let hearth: Hearth
let storage: BlobStorage["Service"]
let root: string
let scope: Scope.Closeable
let uploadBase: string
/** Each upload's outcome once the server has finished with it, by the request's x-upload id. */
const settled = new Map<
  string,
  { promise: Promise<Exit.Exit<unknown, unknown>>; resolve: (exit: Exit.Exit<unknown, unknown>) => void }
>()
const outcome = (id: string) => {
  let entry = settled.get(id)
  if (entry === undefined) {
    let resolve!: (exit: Exit.Exit<unknown, unknown>) => void
    const promise = new Promise<Exit.Exit<unknown, unknown>>((done) => (resolve = done))
    entry = { promise, resolve }
    settled.set(id, entry)
  }
  return entry
}

const run = <A, E>(effect: Effect.Effect<A, E, any>) => hearth.run(effect)
const runExit = <A, E>(effect: Effect.Effect<A, E, any>) => hearth.run(Effect.exit(effect))
/** The error an effect failed with. */
const failure = async <A, E>(effect: Effect.Effect<A, E, any>): Promise<E> => {
  const exit = await runExit(effect)
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  return Option.getOrThrow(Exit.findErrorOption(exit))
}
const sql = <A extends object = Record<string, unknown>>(text: TemplateStringsArray, ...params: Array<unknown>) =>
  hearth.sql((client) => client<A>(text, ...params))

const fileOf = (sha256: string) => join(root, sha256.slice(0, 2), sha256.slice(2, 4), sha256)
const tmpFiles = () => readdirSync(join(root, "tmp"))
const trashFiles = () => readdirSync(join(root, "trash"))
const digest = (algorithm: string, bytes: Uint8Array) => createHash(algorithm).update(bytes).digest("hex")
const fiveDigests = (bytes: Uint8Array) => ({
  md5: digest("md5", bytes),
  sha1: digest("sha1", bytes),
  sha256: digest("sha256", bytes),
  sha512: digest("sha512", bytes),
  blake2b: digest("blake2b512", bytes)
})
/** The nice values of this process's background digest threads (Digests.ts names them so). */
const backgroundNice = () =>
  readdirSync("/proc/self/task").flatMap((task) => {
    try {
      if (readFileSync(`/proc/self/task/${task}/comm`, "utf8").trim() !== "hearth-bgdigest") return []
      return [
        Number(
          readFileSync(`/proc/self/task/${task}/stat`, "utf8")
            .replace(/^.*\) /, "")
            .split(" ")[16]
        )
      ]
    } catch {
      return [] // a thread that ended meanwhile
    }
  })
const blobRows = async () => (await sql<{ n: bigint }>`SELECT count(*) AS n FROM blobs`)[0]!.n

/** `bytes` as a stream of `chunk`-sized pieces (as a socket delivers them). */
const chunked = (bytes: Uint8Array, chunk = 64 * 1024) => {
  const pieces: Array<Uint8Array> = []
  for (let i = 0; i < bytes.length; i += chunk) pieces.push(bytes.subarray(i, i + chunk))
  return Readable.from(pieces)
}
const put = (bytes: Uint8Array, maxSize = 64 * 1024 * 1024) => run(storage.put(chunked(bytes), { maxSize }))
const readAll = async (sha256: string) => {
  const opened = await run(storage.open(sha256))
  const chunks: Array<Buffer> = []
  for await (const chunk of opened.readable()) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}
const refcount = async (sha256: string) => Option.map(await run(storage.stat(sha256)), (info) => info.refcount)

/** Left in the store's directory before the server starts: what a crash leaves behind. */
const crashLeftovers = { stale: "", trashed: "" }

beforeAll(async () => {
  const storageDir = mkdtempSync(join(tmpdir(), "hearth-storage-test-"))
  mkdirSync(join(storageDir, "tmp"))
  mkdirSync(join(storageDir, "trash"))
  crashLeftovers.stale = join(storageDir, "tmp", "upload-of-a-crashed-server")
  crashLeftovers.trashed = join(storageDir, "trash", `${"ab".repeat(32)}.crashed`)
  for (const file of Object.values(crashLeftovers)) {
    writeFileSync(file, "leftover")
    const longAgo = new Date(Date.now() - 2 * 60 * 60 * 1000)
    utimesSync(file, longAgo, longAgo)
  }
  hearth = await startHearth({ storage: { PATH: storageDir } })
  root = hearth.settings.storage.PATH
  // The start-up sweep runs beside the server; the tests below expect an empty tmp (the first test
  // checks what it removed).
  for (let i = 0; i < 2000 && Object.values(crashLeftovers).some(existsSync); i++)
    await new Promise((done) => setTimeout(done, 5))
  storage = await run(BlobStorage.use(Effect.succeed))
  scope = Effect.runSync(Scope.make())
  const upload = HttpRouter.add("PUT", "/blob", (request) => {
    const id = request.headers["x-upload"] ?? ""
    return putRequest(request, { maxSize: LIMIT }).pipe(
      Effect.map((blob) => HttpServerResponse.jsonUnsafe(blob, { status: 201 })),
      Effect.catch((error) =>
        Effect.succeed(
          HttpServerResponse.jsonUnsafe({ message: error.message }, { status: Errors.statusOf(error) ?? 500 })
        )
      ),
      Effect.onExit((exit) => Effect.sync(() => outcome(id).resolve(exit)))
    )
  })
  const app = HttpRouter.serve(upload, { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide(Layer.succeed(BlobStorage, storage))
  )
  const context = await Effect.runPromise(Layer.buildWithScope(app, scope))
  const address = Context.get(context, HttpServer.HttpServer).address
  if (!("port" in address)) throw new Error("expected a TCP address")
  uploadBase = `http://127.0.0.1:${address.port}`
})
afterAll(async () => {
  killAll()
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  await hearth?.close()
  if (root !== undefined) rmSync(root, { recursive: true, force: true })
})

describe("start-up", () => {
  it("the sweep runs when the server starts: a crashed upload's temp file and a set-aside file with no row are removed", () => {
    expect(existsSync(crashLeftovers.stale)).toBe(false)
    expect(existsSync(crashLeftovers.trashed)).toBe(false)
  })
})

describe("put", () => {
  it("computes size and sha256 while storing; the other digests (md5, sha1, sha512, blake2b), read right after the put, equal node:crypto's", async () => {
    for (const bytes of [randomBytes(3 * 1024 * 1024 + 17), Buffer.from("hello blob\n")]) {
      const blob = await put(bytes)
      expect(blob).toMatchObject({ size: bytes.length, sha256: digest("sha256", bytes), created: true })
      expect(readFileSync(fileOf(blob.sha256)).equals(bytes)).toBe(true)
      expect(await run(storage.digests(blob.sha256))).toEqual(fiveDigests(bytes))
      const info = Option.getOrThrow(await run(storage.stat(blob.sha256)))
      expect(info).toMatchObject({ ...fiveDigests(bytes), size: bytes.length, refcount: 0 })
      expect(await run(storage.exists(blob.sha256))).toBe(true)
    }
    expect(tmpFiles()).toEqual([])
  })

  it("the digests are computed after the put without any reader, and recorded in the row", async () => {
    const bytes = randomBytes(2 * 1024 * 1024 + 5)
    const blob = await put(bytes)
    const recorded = async () => {
      const info = Option.getOrThrow(await run(storage.stat(blob.sha256)))
      return info.md5 !== null && info.sha1 !== null && info.sha512 !== null && info.blake2b !== null
    }
    for (let i = 0; i < 2000 && !(await recorded()); i++) await new Promise((done) => setTimeout(done, 10))
    expect(Option.getOrThrow(await run(storage.stat(blob.sha256)))).toMatchObject(fiveDigests(bytes))
    // By the background worker, at its low priority.
    expect(backgroundNice()).toContain(10)
  })

  it("a blob whose digests were not computed yet shows none (null), never a wrong value; `digests` computes and records them", async () => {
    const bytes = randomBytes(300_000)
    const blob = await put(bytes)
    await run(storage.digests(blob.sha256))
    // As a row is between the put's answer and its computation (or after a crash in between).
    await sql`UPDATE blobs SET md5 = NULL, sha1 = NULL, sha512 = NULL, blake2b = NULL WHERE sha256 = ${blob.sha256}`
    expect(Option.getOrThrow(await run(storage.stat(blob.sha256)))).toMatchObject({
      md5: null,
      sha1: null,
      sha512: null,
      blake2b: null
    })
    // Asked twice at once: one computation, the same answer.
    const [a, b] = await Promise.all([run(storage.digests(blob.sha256)), run(storage.digests(blob.sha256))])
    expect(a).toEqual(fiveDigests(bytes))
    expect(b).toEqual(a)
    expect(Option.getOrThrow(await run(storage.stat(blob.sha256)))).toMatchObject(fiveDigests(bytes))
    expect(await failure(storage.digests("0".repeat(64)))).toMatchObject({ _tag: "BlobNotFound" })
  })

  it("digests asked for in the put are computed on the way and returned with it (a caller checking them before it answers)", async () => {
    const bytes = randomBytes(100_000)
    const blob = await run(storage.put(chunked(bytes), { maxSize: 1 << 20, digests: ["sha1", "sha512"] }))
    expect(blob).toMatchObject({ sha1: digest("sha1", bytes), sha512: digest("sha512", bytes) })
    const row = Option.getOrThrow(await run(storage.stat(blob.sha256)))
    expect(row).toMatchObject({ sha1: digest("sha1", bytes), sha512: digest("sha512", bytes) })
    // The same bytes again, on a row whose sha512 is not computed yet: recorded before the put returns.
    await sql`UPDATE blobs SET sha512 = NULL WHERE sha256 = ${blob.sha256}`
    await run(storage.put(chunked(bytes), { maxSize: 1 << 20, digests: ["sha512"] }))
    expect(Option.getOrThrow(await run(storage.stat(blob.sha256))).sha512).toBe(digest("sha512", bytes))
  })

  it("sha256 is right at and around write boundaries, whatever the chunking", async () => {
    for (const size of [WRITE_BYTES - 1, WRITE_BYTES, WRITE_BYTES + 1, 3 * WRITE_BYTES + 123]) {
      const bytes = randomBytes(size)
      for (const chunk of [WRITE_BYTES, 100_003]) {
        const blob = await run(storage.put(chunked(bytes, chunk), { maxSize: size }))
        expect(blob).toMatchObject({ size, sha256: digest("sha256", bytes) })
        expect(readFileSync(fileOf(blob.sha256)).equals(bytes)).toBe(true)
      }
      expect((await run(storage.digests(digest("sha256", bytes)))).md5).toBe(digest("md5", bytes))
    }
  })

  it("an HTTP request's chunks are freed once written (the parser's own copies); chunks sharing a buffer, and other sources' chunks, are left alone", async () => {
    const whole = Array.from({ length: 5 }, () => randomFillSync(Buffer.allocUnsafeSlow(300_000)))
    const slab = randomFillSync(Buffer.allocUnsafeSlow(200_000))
    const shared = [slab.subarray(0, 100_000), slab.subarray(100_000)]
    const expected = digest("sha256", Buffer.concat([...whole, ...shared]))
    const message = new IncomingMessage(new Socket())
    for (const chunk of [...whole, ...shared]) message.push(chunk)
    message.push(null)
    const blob = await run(storage.put(message, { maxSize: (1 << 20) << 4, length: 1_700_000 }))
    expect(blob).toMatchObject({ size: 1_700_000, sha256: expected })
    expect(digest("sha256", readFileSync(fileOf(blob.sha256)))).toBe(expected)
    expect(whole.map((chunk) => chunk.buffer.detached)).toEqual([true, true, true, true, true])
    expect(slab.buffer.detached).toBe(false)
    // A plain stream's chunks are its caller's.
    const mine = randomFillSync(Buffer.allocUnsafeSlow(300_000))
    await run(storage.put(Readable.from([mine]), { maxSize: 1 << 20 }))
    expect(mine.buffer.detached).toBe(false)
  })

  it("digests nobody waits for run on a worker thread at a low priority (nice 10); a reader's are computed at once", async () => {
    const digester = new FileDigester()
    const file = join(root, "tmp", "digester-background")
    const data = randomBytes(16 * 1024 * 1024)
    writeFileSync(file, data)
    const expected = { md5: digest("md5", data), sha512: digest("sha512", data) }
    const later = digester.digest(file, ["md5", "sha512"], "background")
    expect(digester.runningFor("background")).toBe(true)
    expect(digester.runningFor("now")).toBe(false)
    expect(await later).toEqual(expected)
    const nice = backgroundNice()
    expect(nice.length).toBeGreaterThan(0)
    expect(nice.every((n) => n === 10)).toBe(true)
    // A reader comes for a file waiting in the background: it moves to the other worker.
    const hurried = digester.digest(file, ["md5", "sha512"], "background")
    digester.hurry(file)
    expect(digester.runningFor("now")).toBe(true)
    expect(await hurried).toEqual(expected)
    await digester.close()
    rmSync(file)
  })

  it("the digest worker: a file it was hashing when it died fails, and the next file gets a new worker", async () => {
    const digester = new FileDigester()
    const file = join(root, "tmp", "digester-input")
    const data = randomBytes(8 * 1024 * 1024)
    writeFileSync(file, data)
    const cut = digester.digest(file, ["md5", "sha512"])
    await digester.close()
    await expect(cut).rejects.toThrow("the digest worker thread exited")
    expect(await digester.digest(file, ["md5", "sha1", "sha512", "blake2b"])).toEqual({
      md5: digest("md5", data),
      sha1: digest("sha1", data),
      sha512: digest("sha512", data),
      blake2b: digest("blake2b512", data)
    })
    await expect(digester.digest(join(root, "tmp", "no-such-file"), ["md5"])).rejects.toThrow("ENOENT")
    await digester.close()
    rmSync(file)
  })

  it("the digest worker stops once idle for its time-out, and starts again for the next file", async () => {
    const digester = new FileDigester({ idleMs: 50 })
    const file = join(root, "tmp", "digester-idle")
    writeFileSync(file, Buffer.alloc(1000, 7))
    const first = (await digester.digest(file, ["md5"])).md5
    expect(digester.running).toBe(true)
    for (let i = 0; i < 400 && digester.running; i++) await new Promise((done) => setTimeout(done, 5))
    expect(digester.running).toBe(false)
    expect((await digester.digest(file, ["md5"])).md5).toBe(first)
    expect(first).toBe(digest("md5", Buffer.alloc(1000, 7)))
    await digester.close()
    rmSync(file)
  })

  it("stores an empty body, with the well-known digests of empty input (Forgejo's ListPackageFiles test)", async () => {
    const blob = await run(storage.put(Readable.from([]), { maxSize: 10 }))
    expect(blob).toMatchObject({ size: 0, sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" })
    expect(await run(storage.digests(blob.sha256))).toEqual({
      md5: "d41d8cd98f00b204e9800998ecf8427e",
      sha1: "da39a3ee5e6b4b0d3255bfef95601890afd80709",
      sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
      sha512:
        "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
      blake2b:
        "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce"
    })
    expect(statSync(fileOf(blob.sha256)).size).toBe(0)
  })

  it("BLAKE2b-512 is RFC 7693's (the 'abc' vector), recorded; a blob from before 0034 gets it when put again", async () => {
    const abc = await run(storage.put(Readable.from([Buffer.from("abc")]), { maxSize: 10 }))
    const vector =
      "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"
    expect((await run(storage.digests(abc.sha256))).blake2b).toBe(vector)
    expect(Option.getOrThrow(await run(storage.stat(abc.sha256))).blake2b).toBe(vector)
    // As migration 0034 leaves an older row: no blake2b, until the same bytes come again.
    await sql`UPDATE blobs SET blake2b = NULL WHERE sha256 = ${abc.sha256}`
    expect(Option.getOrThrow(await run(storage.stat(abc.sha256))).blake2b).toBeNull()
    const again = await run(storage.put(Readable.from([Buffer.from("abc")]), { maxSize: 10 }))
    expect(again.created).toBe(false)
    const blake2b = async () => Option.getOrThrow(await run(storage.stat(abc.sha256))).blake2b
    for (let i = 0; i < 2000 && (await blake2b()) === null; i++) await new Promise((done) => setTimeout(done, 10))
    expect(await blake2b()).toBe(vector)
  })

  it("dedup is by sha256: a stored row of another size is not taken as the same content", async () => {
    const bytes = Buffer.from(`size-mismatch ${Math.random()}`)
    const first = await run(storage.put(Readable.from([bytes]), { maxSize: 100 }))
    await sql`UPDATE blobs SET size = ${bytes.length + 1} WHERE sha256 = ${first.sha256}`
    const exit = await runExit(storage.put(Readable.from([bytes]), { maxSize: 100 }))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(String(Exit.isFailure(exit) ? exit.cause : "")).toMatch(/does not match its content/)
    await sql`UPDATE blobs SET size = ${bytes.length} WHERE sha256 = ${first.sha256}`
  })

  it("accepts any async iterable of chunks (strings too)", async () => {
    async function* pieces() {
      yield new TextEncoder().encode("abc")
      yield "def"
    }
    const blob = await run(storage.put(pieces(), { maxSize: 100 }))
    expect(blob.sha256).toBe(digest("sha256", Buffer.from("abcdef")))
  })

  it("deduplicates: the same bytes stored twice are one file and one row", async () => {
    const bytes = randomBytes(200_000)
    const before = await blobRows()
    const first = await put(bytes)
    const second = await run(storage.put(Readable.from([bytes]), { maxSize: 1 << 20 }))
    expect(first.created).toBe(true)
    expect(second.created).toBe(false)
    expect(second).toMatchObject({ sha256: first.sha256, size: first.size })
    expect(second.hold).not.toBe(first.hold)
    expect(await blobRows()).toBe(before + 1n)
    expect(
      readdirSync(join(root, first.sha256.slice(0, 2), first.sha256.slice(2, 4))).filter((n) => n === first.sha256)
    ).toHaveLength(1)
    expect(tmpFiles()).toEqual([])
  })

  it("keeps an intact file a put finds in place, and replaces one that is not intact", async () => {
    const bytes = randomBytes(5000)
    const blob = await put(bytes)
    writeFileSync(fileOf(blob.sha256), "truncated")
    await put(bytes)
    expect(readFileSync(fileOf(blob.sha256)).equals(bytes)).toBe(true)
  })
})

describe("references", () => {
  it("acquire and release count references; the last release removes the row and the file; one more release is refused", async () => {
    const bytes = randomBytes(10_000)
    const blob = await put(bytes)
    await run(storage.acquire(blob))
    await run(storage.acquire(blob.sha256))
    expect(await refcount(blob.sha256)).toEqual(Option.some(2))
    expect((await sql`SELECT id FROM blob_holds WHERE id = ${blob.hold}`).length).toBe(0)
    await run(storage.release(blob.sha256))
    expect(await refcount(blob.sha256)).toEqual(Option.some(1))
    expect(existsSync(fileOf(blob.sha256))).toBe(true)
    await run(storage.release(blob.sha256))
    expect(await run(storage.exists(blob.sha256))).toBe(false)
    expect(existsSync(fileOf(blob.sha256))).toBe(false)
    expect(trashFiles()).toEqual([])
    expect(await failure(storage.release(blob.sha256))).toMatchObject({ _tag: "BlobNotFound" })
    expect(await failure(storage.acquire(blob.sha256))).toMatchObject({ _tag: "BlobNotFound" })
  })

  it("a release inside a transaction that rolls back keeps the reference and the file; one that commits removes them after the commit", async () => {
    const blob = await put(randomBytes(1000))
    await run(storage.acquire(blob))
    const rolledBack = await runExit(
      SqlClient.use((client) =>
        client.withTransaction(Effect.andThen(storage.release(blob.sha256), Effect.fail("caller's failure" as const)))
      )
    )
    expect(Exit.isFailure(rolledBack)).toBe(true)
    expect(await refcount(blob.sha256)).toEqual(Option.some(1))
    expect(existsSync(fileOf(blob.sha256))).toBe(true)
    const seenInside = await run(
      SqlClient.use((client) =>
        client.withTransaction(
          Effect.andThen(
            storage.release(blob.sha256),
            Effect.sync(() => existsSync(fileOf(blob.sha256)))
          )
        )
      )
    )
    expect(seenInside).toBe(true) // not removed before the commit
    expect(existsSync(fileOf(blob.sha256))).toBe(false)
    expect(await run(storage.exists(blob.sha256))).toBe(false)
  })

  it("a put holds its blob: releasing the last other reference before the put's acquire keeps it, and the acquire then succeeds", async () => {
    const bytes = randomBytes(4000)
    const owner = await put(bytes)
    await run(storage.acquire(owner))
    const second = await put(bytes) // finds the blob; holds it
    expect(second.created).toBe(false)
    await run(storage.release(owner.sha256)) // the last reference
    expect(existsSync(fileOf(owner.sha256))).toBe(true)
    await run(storage.acquire(second))
    expect(await refcount(owner.sha256)).toEqual(Option.some(1))
    expect(readFileSync(fileOf(owner.sha256)).equals(bytes)).toBe(true)
  })

  it("acquireAll counts one reference per blob named (a name twice: once); one missing name fails, and in a transaction counts none", async () => {
    const a = await put(randomBytes(1500))
    const b = await put(randomBytes(1600))
    await run(Effect.andThen(storage.acquire(a), storage.acquire(b)))
    await run(storage.acquireAll([a.sha256, b.sha256, a.sha256]))
    expect([await refcount(a.sha256), await refcount(b.sha256)]).toEqual([Option.some(2), Option.some(2)])
    const gone = digest("sha256", randomBytes(16))
    expect(
      await failure(SqlClient.use((client) => client.withTransaction(storage.acquireAll([a.sha256, gone, b.sha256]))))
    ).toMatchObject({ _tag: "BlobNotFound", sha256: gone })
    expect([await refcount(a.sha256), await refcount(b.sha256)]).toEqual([Option.some(2), Option.some(2)])
    expect(await failure(storage.acquireAll(["../etc/passwd"]))).toMatchObject({ _tag: "BlobNotFound" })
    await run(storage.acquireAll([]))
  })

  it("names that are no sha256 find nothing and never reach the filesystem", async () => {
    for (const name of [
      "../../../etc/passwd",
      "ABCDEF",
      "a".repeat(63),
      `${"a".repeat(64)}/..`,
      "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"
    ]) {
      expect(await failure(storage.open(name))).toMatchObject({ _tag: "BlobNotFound" })
      expect(await failure(storage.acquire(name))).toMatchObject({ _tag: "BlobNotFound" })
      expect(await failure(storage.release(name))).toMatchObject({ _tag: "BlobNotFound" })
      expect(await run(storage.exists(name))).toBe(false)
    }
  })
})

describe("size limit", () => {
  it("a body announced larger than the limit is refused with 413 before anything is read", async () => {
    let read = false
    const untouched = new Readable({
      read() {
        read = true
        this.push(null)
      }
    })
    const error = await failure(storage.put(untouched, { maxSize: 100, length: 101 }))
    expect(error).toBeInstanceOf(Errors.PayloadTooLarge)
    expect(error.message).toBe("the upload is larger than the limit of 100 bytes")
    expect(read).toBe(false)
    expect(tmpFiles()).toEqual([])
  })

  it("a body that grows past the limit while it is read is refused with 413; nothing is kept", async () => {
    const before = await blobRows()
    const error = await failure(storage.put(chunked(randomBytes(LIMIT + 1), 1000), { maxSize: LIMIT }))
    expect(error).toBeInstanceOf(Errors.PayloadTooLarge)
    expect(error.message).toBe("the upload is larger than the limit of 256 KiB (262144 bytes)")
    expect(tmpFiles()).toEqual([])
    expect(await blobRows()).toBe(before)
    // Exactly the limit is accepted.
    expect((await run(storage.put(chunked(randomBytes(LIMIT)), { maxSize: LIMIT }))).size).toBe(LIMIT)
  })

  it("a large body refused part-way (writes in flight) fails at once; the next large body is stored", async () => {
    const error = await failure(storage.put(chunked(randomBytes(9 * WRITE_BYTES)), { maxSize: 6 * WRITE_BYTES }))
    expect(error).toBeInstanceOf(Errors.PayloadTooLarge)
    expect(tmpFiles()).toEqual([])
    const bytes = randomBytes(4 * WRITE_BYTES)
    expect((await put(bytes)).sha256).toBe(digest("sha256", bytes))
  })

  it("a body of another length than announced is refused with 400", async () => {
    for (const [length, bytes] of [
      [10, 5],
      [10, 11]
    ] as const) {
      const error = await failure(storage.put(Readable.from([randomBytes(bytes)]), { maxSize: 100, length }))
      expect(error).toBeInstanceOf(Errors.BadRequest)
      expect(error.message).toBe("the upload's size is not the 10 bytes its Content-Length announced")
    }
    expect(tmpFiles()).toEqual([])
  })
})

describe("uploads over HTTP (putRequest)", () => {
  /** A PUT whose body the caller writes; resolves with the status and body once answered. */
  const upload = (id: string, headers: Record<string, string>) => {
    const req = httpRequest(`${uploadBase}/blob`, { method: "PUT", headers: { "x-upload": id, ...headers } })
    req.on("error", () => {}) // aborted on purpose in some tests
    const response = new Promise<{ status: number; body: any; headers: Record<string, unknown> }>((done, fail) => {
      req.on("response", (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () =>
          done({
            status: res.statusCode!,
            body: JSON.parse(Buffer.concat(chunks).toString() || "null"),
            headers: res.headers
          })
        )
        res.on("error", fail)
      })
    })
    return { req, response }
  }

  it("stores a request body (Content-Length and chunked) with the digests of the bytes sent", async () => {
    const bytes = randomBytes(100_000)
    const sized = upload("sized", { "content-length": String(bytes.length) })
    sized.req.end(bytes)
    const a = await sized.response
    expect(a.status).toBe(201)
    expect(a.body).toMatchObject({ size: bytes.length, sha256: digest("sha256", bytes) })
    const streamed = upload("chunked", {})
    for (let i = 0; i < bytes.length; i += 7000) streamed.req.write(bytes.subarray(i, i + 7000))
    streamed.req.end()
    const b = await streamed.response
    expect(b.status).toBe(201)
    expect(b.body).toMatchObject({ size: bytes.length, sha256: digest("sha256", bytes), created: false })
  })

  it("413 from the Content-Length alone: answered before any of the body is sent (the server then closes rather than read it)", async () => {
    const { req, response } = upload("announced", { "content-length": String(LIMIT + 1) })
    req.flushHeaders() // headers only; the body is never sent
    const res = await response
    expect(res.status).toBe(413)
    expect(res.body.message).toBe("the upload is larger than the limit of 256 KiB (262144 bytes)")
    expect(res.headers.connection).toBe("close")
    req.destroy()
    expect(await outcome("announced").promise).toMatchObject({ _tag: "Success", value: { status: 413 } })
    expect(tmpFiles()).toEqual([])
  })

  it("413 as soon as a chunked body passes the limit; no temp file is left", async () => {
    const before = await blobRows()
    const { req, response } = upload("growing", {})
    const bytes = randomBytes(LIMIT + 1)
    for (let i = 0; i < bytes.length; i += 16 * 1024) req.write(bytes.subarray(i, i + 16 * 1024))
    // Not ended: the server must answer from what it has read.
    const res = await response
    expect(res.status).toBe(413)
    req.destroy()
    await outcome("growing").promise
    expect(tmpFiles()).toEqual([])
    expect(await blobRows()).toBe(before)
  })

  it("a client that goes away mid-upload leaves nothing behind", async () => {
    const before = await blobRows()
    const { req } = upload("aborted", {})
    req.write(randomBytes(100_000))
    // Once the server is writing the upload's temp file, the client disappears.
    for (let i = 0; i < 2000 && tmpFiles().length === 0; i++) await new Promise((done) => setTimeout(done, 5))
    expect(tmpFiles().length).toBe(1)
    req.destroy()
    const exit = await outcome("aborted").promise
    expect(Exit.isSuccess(exit) && (exit.value as { status: number }).status === 201).toBe(false)
    expect(tmpFiles()).toEqual([])
    expect(await blobRows()).toBe(before)
  })
})

describe("aborted and interrupted puts", () => {
  it("a body that fails part-way is a 400 and leaves no temp file", async () => {
    async function* failing() {
      yield randomBytes(50_000)
      throw new Error("connection reset")
    }
    const error = await failure(storage.put(failing(), { maxSize: 1 << 20 }))
    expect(error).toBeInstanceOf(Errors.BadRequest)
    expect(error.message).toBe("the upload was cut off before its end")
    expect(tmpFiles()).toEqual([])
  })

  it("a put reading from a source that never answers again can still be interrupted, and leaves nothing", async () => {
    let waiting!: () => void
    const waitingForSecondChunk = new Promise<void>((done) => (waiting = done))
    const stuck: AsyncIterable<Uint8Array> = {
      [Symbol.asyncIterator]: () => {
        let sent = false
        return {
          next: () => {
            if (sent) {
              waiting()
              return new Promise<IteratorResult<Uint8Array>>(() => {}) // never
            }
            sent = true
            return Promise.resolve({ done: false, value: randomBytes(10_000) })
          }
        }
      }
    }
    const fiber = Effect.runFork(storage.put(stuck, { maxSize: 1 << 20 }))
    await waitingForSecondChunk
    expect(tmpFiles().length).toBe(1)
    await Effect.runPromise(Fiber.interrupt(fiber))
    expect(tmpFiles()).toEqual([])
  })

  it("an interrupted put has removed its temp file when the interruption completes", async () => {
    const body = new Readable({ read() {} })
    body.push(randomBytes(30_000))
    const fiber = Effect.runFork(storage.put(body, { maxSize: 1 << 20 }))
    for (let i = 0; i < 2000 && tmpFiles().length === 0; i++) await new Promise((done) => setTimeout(done, 5))
    expect(tmpFiles().length).toBe(1)
    await Effect.runPromise(Fiber.interrupt(fiber))
    expect(tmpFiles()).toEqual([])
    expect(body.destroyed).toBe(true)
  })
})

describe("concurrency", () => {
  it("concurrent puts of the same content: one creates it, all get its digests and a hold, one file and one row", async () => {
    const bytes = randomBytes(1024 * 1024 + 3)
    const before = await blobRows()
    const results = await Promise.all(Array.from({ length: 8 }, () => put(bytes)))
    expect(results.filter((r) => r.created)).toHaveLength(1)
    expect(new Set(results.map((r) => r.sha256)).size).toBe(1)
    expect(new Set(results.map((r) => r.hold)).size).toBe(8)
    expect(await blobRows()).toBe(before + 1n)
    expect(readFileSync(fileOf(results[0]!.sha256)).equals(bytes)).toBe(true)
    await Promise.all(results.map((r) => run(storage.acquire(r))))
    expect(await refcount(results[0]!.sha256)).toEqual(Option.some(8))
    expect(tmpFiles()).toEqual([])
  })

  it("a removal racing a put of the same content: whichever wins, the put's blob is there and its acquire succeeds", async () => {
    for (let round = 0; round < 20; round++) {
      const bytes = randomBytes(20_000 + round)
      const first = await put(bytes)
      await run(storage.acquire(first))
      const [, second] = await Promise.all([run(storage.release(first.sha256)), put(bytes)])
      await run(storage.acquire(second))
      expect(readFileSync(fileOf(second.sha256)).equals(bytes)).toBe(true)
      expect(await refcount(second.sha256)).toEqual(Option.some(1))
      await run(storage.release(second.sha256))
      expect(existsSync(fileOf(second.sha256))).toBe(false)
    }
    expect(trashFiles()).toEqual([])
    expect(tmpFiles()).toEqual([])
  })

  it("a removal that starts while a put of the same content is committing waits for it, sees its hold, and keeps the blob", async () => {
    const bytes = randomBytes(7000)
    const first = await put(bytes)
    // Garbage for the sweep (no reference, hold expired) until the put below holds it again.
    await sql`UPDATE blob_holds SET expires_at = now() - interval '1 minute' WHERE sha256 = ${first.sha256}`
    let stored!: () => void
    const putStored = new Promise<void>((done) => (stored = done))
    let commit!: () => void
    const mayCommit = new Promise<void>((done) => (commit = done))
    // The put runs inside a transaction of this test, so that its commit waits for the test.
    const putting = run(
      SqlClient.use((client) =>
        client.withTransaction(
          Effect.gen(function* () {
            const blob = yield* storage.put(chunked(bytes), { maxSize: 1 << 20 })
            stored()
            yield* Effect.promise(() => mayCommit)
            return blob
          })
        )
      )
    )
    await putStored
    const sweeping = run(storage.sweep)
    if (hearth.settings.database.DB_TYPE === "postgres") {
      // The removal is waiting for the put's row lock (on PGlite, transactions never overlap).
      const waiting = async () =>
        (
          await sql<{ n: bigint }>`SELECT count(*) AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`
        )[0]!.n > 0n
      for (let i = 0; i < 2000 && !(await waiting()); i++) await new Promise((done) => setTimeout(done, 5))
      expect(await waiting()).toBe(true)
    }
    commit()
    const second = await putting
    await sweeping
    await run(storage.acquire(second))
    expect(readFileSync(fileOf(second.sha256)).equals(bytes)).toBe(true)
    expect(await refcount(second.sha256)).toEqual(Option.some(1))
  })
})

describe("reading back", () => {
  it("streams the whole blob or a range, as a Node stream and as an effect stream", async () => {
    const bytes = randomBytes(3 * 1024 * 1024 + 5)
    const blob = await put(bytes)
    expect((await readAll(blob.sha256)).equals(bytes)).toBe(true)
    const part = await run(storage.open(blob.sha256, { start: 1000, end: 1_500_000 }))
    expect(part).toMatchObject({ size: bytes.length, range: { start: 1000, end: 1_500_000 }, length: 1_499_001 })
    const chunks = await run(Stream.runCollect(part.stream))
    expect(Buffer.concat(chunks).equals(bytes.subarray(1000, 1_500_001))).toBe(true)
    const tail = await run(storage.open(blob.sha256, { start: bytes.length - 10, end: Number.MAX_SAFE_INTEGER }))
    expect(tail.length).toBe(10)
    expect(await failure(storage.open(blob.sha256, { start: bytes.length, end: bytes.length + 5 }))).toMatchObject({
      _tag: "RangeNotSatisfiable",
      size: bytes.length
    })
    expect(await failure(storage.open("0".repeat(64)))).toMatchObject({ _tag: "BlobNotFound" })
  })

  it("parseRange reads the one-range forms of a Range header", () => {
    expect(parseRange(undefined, 100)).toBeUndefined()
    expect(parseRange("bytes=0-9", 100)).toEqual({ start: 0, end: 9 })
    expect(parseRange("bytes=90-", 100)).toEqual({ start: 90, end: 99 })
    expect(parseRange("bytes=-10", 100)).toEqual({ start: 90, end: 99 })
    expect(parseRange("bytes=-500", 100)).toEqual({ start: 0, end: 99 })
    expect(parseRange("bytes=50-500", 100)).toEqual({ start: 50, end: 99 })
    expect(parseRange("bytes=100-", 100)).toBe("unsatisfiable")
    expect(parseRange("bytes=-0", 100)).toBe("unsatisfiable")
    expect(parseRange("bytes=0-", 0)).toBe("unsatisfiable")
    for (const ignored of ["bytes=5-1", "bytes=0-1,5-6", "items=0-1", "bytes=-", "bytes=a-b"]) {
      expect(parseRange(ignored, 100)).toBeUndefined()
    }
  })
})

describe("sweep (garbage left by crashes)", () => {
  it("removes temp files not written to for a long time, and keeps those of uploads in progress", async () => {
    const stale = join(root, "tmp", "stale-upload")
    const fresh = join(root, "tmp", "fresh-upload")
    writeFileSync(stale, "x")
    writeFileSync(fresh, "y")
    const hourAgo = new Date(Date.now() - 60 * 60 * 1000)
    utimesSync(stale, hourAgo, hourAgo)
    const report = await run(storage.sweep)
    expect(report.tempFiles).toBe(1)
    expect(tmpFiles()).toEqual(["fresh-upload"])
    writeFileSync(fresh, "") // left for the next tests to see an empty tmp
    utimesSync(fresh, hourAgo, hourAgo)
    await run(storage.sweep)
    expect(tmpFiles()).toEqual([])
  })

  it("computes the digests a stopped process never computed after its put", async () => {
    const bytes = randomBytes(5000)
    const blob = await put(bytes)
    await run(storage.digests(blob.sha256))
    await sql`UPDATE blobs SET md5 = NULL, sha1 = NULL, sha512 = NULL WHERE sha256 = ${blob.sha256}`
    const report = await run(storage.sweep)
    expect(report.digested).toBeGreaterThanOrEqual(1)
    expect(Option.getOrThrow(await run(storage.stat(blob.sha256)))).toMatchObject(fiveDigests(bytes))
  })

  it("removes a blob whose put never reached its acquire once the hold has expired, not before", async () => {
    const blob = await put(randomBytes(3000))
    await run(storage.sweep)
    expect(existsSync(fileOf(blob.sha256))).toBe(true)
    await sql`UPDATE blob_holds SET expires_at = now() - interval '1 minute' WHERE sha256 = ${blob.sha256}`
    const report = await run(storage.sweep)
    expect(report.expiredHolds).toBeGreaterThanOrEqual(1)
    expect(report.blobs).toBeGreaterThanOrEqual(1)
    expect(await run(storage.exists(blob.sha256))).toBe(false)
    expect(existsSync(fileOf(blob.sha256))).toBe(false)
  })

  it("keeps referenced blobs; puts back a file a removal set aside when its row still exists, and deletes one whose row is gone", async () => {
    const kept = await put(randomBytes(3000))
    await run(storage.acquire(kept))
    const gone = await put(randomBytes(3000))
    await run(storage.acquire(gone))
    await run(storage.release(gone.sha256))
    // A crash between moving the file aside and the commit: the row is still there, the file not.
    const asideKept = join(root, "trash", `${kept.sha256}.crashed`)
    renameSync(fileOf(kept.sha256), asideKept)
    // A crash after the commit, before the file was deleted.
    const asideGone = join(root, "trash", `${gone.sha256}.crashed`)
    writeFileSync(asideGone, "leftover")
    const report = await run(storage.sweep)
    expect(report.restored).toBe(1)
    expect(existsSync(fileOf(kept.sha256))).toBe(true)
    expect(trashFiles()).toEqual([])
    expect(await refcount(kept.sha256)).toEqual(Option.some(1))
  })
})

describe("[storage] settings", () => {
  it("STORAGE_TYPE is local and PATH is <APP_DATA_PATH>/storage by default; a relative PATH is taken from the working directory", () => {
    const defaults = Settings.resolveSettings({ server: { APP_DATA_PATH: "/srv/hearth" } })
    expect(defaults.storage).toEqual({ STORAGE_TYPE: "local", PATH: "/srv/hearth/storage" })
    const relative = Settings.resolveSettings({ storage: { STORAGE_TYPE: "Local", PATH: "blobs" } })
    expect(relative.storage).toEqual({ STORAGE_TYPE: "local", PATH: join(process.cwd(), "blobs") })
    expect(() => Settings.resolveSettings({ storage: { STORAGE_TYPE: "s3" } })).toThrow(
      `invalid setting [storage] STORAGE_TYPE = "s3": expected one of local, minio`
    )
  })

  /** Builds the storage layer, as start-up does, with the given [storage] settings. */
  const build = (storageSettings: Record<string, string>) =>
    failure(
      Effect.scoped(
        Layer.build(
          Layer.fresh(BlobStorage.layer).pipe(
            Layer.provide(
              Settings.layerValue(
                Settings.resolveSettings({
                  server: { APP_DATA_PATH: hearth.settings.server.APP_DATA_PATH },
                  storage: storageSettings
                })
              )
            )
          )
        )
      )
    )

  it("STORAGE_TYPE = minio stops start-up with a message saying only local is supported", async () => {
    expect(await build({ STORAGE_TYPE: "minio" })).toMatchObject({
      _tag: "SettingsError",
      message:
        "[storage] STORAGE_TYPE = minio is not supported by Hearth yet: only local is (blobs in [storage] PATH, default <APP_DATA_PATH>/storage)"
    })
  })

  it("hearth serve with STORAGE_TYPE = minio exits 1 with that one line, no stack trace", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "hearth-storage-minio-"))
    try {
      const server = spawnHearth({ HEARTH__server__APP_DATA_PATH: dataDir, HEARTH__storage__STORAGE_TYPE: "minio" })
      expect((await within(server.exited, 60_000, "exit")).code).toBe(1)
      expect(server.output().stderr.trim()).toBe(
        "hearth: [storage] STORAGE_TYPE = minio is not supported by Hearth yet: only local is (blobs in [storage] PATH, default <APP_DATA_PATH>/storage)"
      )
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
    // A whole start of `hearth serve` on a loaded machine can take longer than the default 30 s.
  }, 90_000)

  it("a PATH that cannot be used stops start-up naming it", async () => {
    const file = join(hearth.settings.server.APP_DATA_PATH, "not-a-directory")
    writeFileSync(file, "")
    const error = await build({ PATH: file })
    expect(error).toMatchObject({ _tag: "SettingsError" })
    expect((error as { message: string }).message).toMatch(
      new RegExp(`^cannot use \\[storage\\] PATH = ${file}: EEXIST`)
    )
  })
})
