// Blob storage benchmark (`npm run bench:storage`; issue 16 item 3): Hearth's local blob store
// (src/storage, on a real database) storing a BENCH_STORAGE_MIB stream (default 1 GiB) and
// reading it back, side by side with `cp` of the same file in the same run and on the same
// filesystem. Per round, in an order that alternates between rounds:
//   cp     `cp source copy`, then `sync --data copy` (timed apart: the store fsyncs what it stores,
//          plain cp does not, so the store is compared with both); then, as a reference, the
//          same copy by this Node process (createReadStream → createWriteStream, no hashing)
//   store  `put(createReadStream(source))` (64 KiB chunks, as a socket delivers them): the temp
//          file written while size, md5, sha1, sha256 and sha512 are computed, fdatasync, the row
//          and the rename into place; then `acquire`
//   read   `open(sha).readable()` piped into a new file (no fsync, as cp), then `release` (the
//          blob is removed, so that every round stores anew)
// Throughput is size / wall time; the columns are medians over the rounds; each ratio is the
// median of the per-round ratios. RSS growth: the process's peak RSS during a phase (VmHWM, reset
// before it through /proc/self/clear_refs) minus its RSS when the phase began; the largest over
// the rounds. Also shown: what each digest alone costs on this machine (CPU time of one thread
// over 256 MiB in memory), the bound the four of them set on one core.
// Targets: RSS growth < 30 MB; throughput ≥ 70 % of cp.

import { createHash, randomBytes } from "node:crypto"
import {
  createReadStream,
  createWriteStream,
  existsSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeFileSync
} from "node:fs"
import { open } from "node:fs/promises"
import os from "node:os"
import { join } from "node:path"
import { pipeline } from "node:stream/promises"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import * as Settings from "../../src/config/Settings.ts"
import * as Database from "../../src/db/Database.ts"
import { BlobStorage } from "../../src/storage/Service.ts"
import {
  execFileP,
  fmt,
  log,
  machineLine,
  median,
  nodeBin,
  pct,
  positive,
  preparePostgres,
  runMain,
  tempDir
} from "./support.ts"

const MiB = 1024 * 1024
const config = {
  mib: Math.round(positive("BENCH_STORAGE_MIB", 1024)),
  rounds: Math.max(1, Math.round(positive("BENCH_ROUNDS", 5))),
  // PostgreSQL by default: the embedded database leaves hundreds of MB freed but resident in this
  // process after it starts, which the store's allocations would reuse, hiding any growth.
  database: (process.env.BENCH_DATABASE ?? "postgres") as "embedded" | "postgres",
  output: process.env.BENCH_OUTPUT
}
if (config.database !== "embedded" && config.database !== "postgres")
  throw new Error(`BENCH_DATABASE: unknown database "${config.database}"`)
const TARGET_RSS_MB = 30
const TARGET_RATIO = 0.7

// ------------------------------------------------------------------ memory

const status = () => readFileSync("/proc/self/status", "utf8")
const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status())?.[1] ?? NaN) / 1024
/** The highest RSS seen by `measured` since the storage was set up (MB). */
let overallPeak = 0
/**
 * Runs `f`, returning its wall time (s) and how far the peak RSS rose above the RSS at its start
 * (MB); with `counted`, its peak counts in the overall growth (the store's phases, not the copies
 * made for comparison).
 */
const measured = async (f: () => Promise<void>, counted = false) => {
  writeFileSync("/proc/self/clear_refs", "5") // VmHWM := VmRSS
  const before = kb("VmRSS")
  const cpu = process.cpuUsage()
  const t = performance.now()
  await f()
  const seconds = (performance.now() - t) / 1000
  const used = process.cpuUsage(cpu)
  const peak = kb("VmHWM")
  if (counted) overallPeak = Math.max(overallPeak, peak)
  return { seconds, rssGrowth: peak - before, cpuSeconds: (used.user + used.system) / 1e6 }
}

/** Copies argv[1] to argv[2] with Node streams; prints the seconds it took. */
const NODE_COPY = `
const { createReadStream, createWriteStream } = require("node:fs")
const { pipeline } = require("node:stream/promises")
const t = performance.now()
pipeline(createReadStream(process.argv[1]), createWriteStream(process.argv[2]))
  .then(() => console.log((performance.now() - t) / 1000))
`

// ------------------------------------------------------------------ the digests alone

const digestCosts = () => {
  const block = randomBytes(MiB)
  return ["md5", "sha1", "sha256", "sha512"].map((algorithm) => {
    const hash = createHash(algorithm)
    const cpu = process.cpuUsage()
    for (let i = 0; i < 256; i++) hash.update(block)
    hash.digest()
    const used = process.cpuUsage(cpu)
    return { algorithm, secondsPerGiB: ((used.user + used.system) / 1e6) * 4 }
  })
}

// ------------------------------------------------------------------ main

interface Round {
  readonly cp: number
  readonly sync: number
  readonly node: number
  readonly store: number
  readonly storeCpu: number
  readonly read: number
  readonly storeRss: number
  readonly readRss: number
}

const main = async () => {
  const load0 = os.loadavg()
  const work = tempDir("hearth-bench-storage-")
  const source = join(work, "source.bin")
  const bytes = config.mib * MiB
  log(`writing a ${config.mib} MiB source file of random bytes in ${work}`)
  {
    const file = await open(source, "w")
    const block = randomBytes(MiB)
    for (let i = 0; i < config.mib; i++) {
      block.writeUInt32LE(i, 0) // no two blocks alike: nothing for a filesystem to share
      await file.write(block)
    }
    await file.sync()
    await file.close()
  }

  const database =
    config.database === "postgres"
      ? { DB_TYPE: "postgres", DATABASE_URL: (await preparePostgres()).url }
      : { DB_TYPE: "embedded" }
  const settings = Settings.withSecretKey(
    Settings.resolveSettings({ server: { APP_DATA_PATH: join(work, "data") }, database, log: { LEVEL: "Error" } })
  )
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(
    Layer.buildWithScope(
      BlobStorage.layer.pipe(Layer.provideMerge(Database.layer), Layer.provide(Settings.layerValue(settings))),
      scope
    )
  )
  const storage = Context.get(context, BlobStorage)
  const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

  const copy = join(work, "copy.bin")
  const readBack = join(work, "read.bin")
  const cpRound = async () => {
    const cp = await measured(() => execFileP("cp", [source, copy]).then(() => undefined))
    const sync = await measured(() => execFileP("sync", ["--data", copy]).then(() => undefined))
    unlinkSync(copy)
    // What a Node process that reads every byte (and hashes none) takes for the same copy; in a
    // process of its own, so that its memory is not this one's.
    const node = Number((await execFileP(nodeBin, ["-e", NODE_COPY, source, copy])).stdout.trim())
    unlinkSync(copy)
    return { cp: cp.seconds, sync: sync.seconds, node }
  }
  const storeRound = async () => {
    let sha256 = ""
    const store = await measured(async () => {
      const blob = await run(storage.put(createReadStream(source), { maxSize: bytes, length: bytes }))
      await run(storage.acquire(blob))
      if (blob.size !== bytes || !blob.created) throw new Error(`unexpected put result: ${JSON.stringify(blob)}`)
      sha256 = blob.sha256
    }, true)
    const read = await measured(async () => {
      const opened = await run(storage.open(sha256))
      await pipeline(opened.readable(), createWriteStream(readBack))
    }, true)
    if (statSync(readBack).size !== bytes) throw new Error("the blob read back is not the size stored")
    unlinkSync(readBack)
    await run(storage.release(sha256))
    if (existsSync(join(settings.storage.PATH, sha256.slice(0, 2), sha256.slice(2, 4), sha256)))
      throw new Error("the released blob is still there")
    return {
      store: store.seconds,
      storeCpu: store.cpuSeconds,
      storeRss: store.rssGrowth,
      read: read.seconds,
      readRss: read.rssGrowth
    }
  }

  // The baseline of the overall growth: the database and the store set up, nothing stored yet.
  const baseline = kb("VmRSS")
  // One round of each not counted in the table (code compiled, the source in the page cache for
  // both, the digest worker started); its memory counts in the overall growth.
  log("warm-up round")
  await cpRound()
  const warm = await storeRound()
  log(`warm-up: store RSS +${fmt(warm.storeRss, 1)} MB, read RSS +${fmt(warm.readRss, 1)} MB`)

  const rounds: Array<Round> = []
  for (let round = 0; round < config.rounds; round++) {
    let c: Awaited<ReturnType<typeof cpRound>>
    let s: Awaited<ReturnType<typeof storeRound>>
    if (round % 2 === 0) {
      c = await cpRound()
      s = await storeRound()
    } else {
      s = await storeRound()
      c = await cpRound()
    }
    rounds.push({ ...c, ...s })
    log(
      `round ${round + 1}: cp ${fmt(c.cp, 2)} s (+ sync ${fmt(c.sync, 2)} s), Node copy ${fmt(c.node, 2)} s, store ${fmt(s.store, 2)} s (CPU ${fmt(s.storeCpu, 2)} s, RSS +${fmt(s.storeRss, 1)} MB), read ${fmt(s.read, 2)} s (RSS +${fmt(s.readRss, 1)} MB)`
    )
  }
  const costs = digestCosts()
  await Effect.runPromise(Scope.close(scope, Exit.void))

  const mibps = (seconds: number) => config.mib / seconds
  const med = (f: (r: Round) => number) => median(rounds.map(f))
  const ratios = {
    storeVsCp: med((r) => r.cp / r.store),
    storeVsCpSync: med((r) => (r.cp + r.sync) / r.store),
    readVsCp: med((r) => r.cp / r.read)
  }
  const rss = {
    store: Math.max(...rounds.map((r) => r.storeRss)),
    read: Math.max(...rounds.map((r) => r.readRss)),
    overall: overallPeak - baseline
  }
  const missed: Array<string> = []
  if (ratios.storeVsCp < TARGET_RATIO) missed.push(`store ${pct(ratios.storeVsCp)} of cp`)
  if (ratios.storeVsCpSync < TARGET_RATIO) missed.push(`store ${pct(ratios.storeVsCpSync)} of cp + fdatasync`)
  if (ratios.readVsCp < TARGET_RATIO) missed.push(`read ${pct(ratios.readVsCp)} of cp`)
  if (rss.store >= TARGET_RSS_MB) missed.push(`store RSS growth ${fmt(rss.store, 1)} MB`)
  if (rss.read >= TARGET_RSS_MB) missed.push(`read RSS growth ${fmt(rss.read, 1)} MB`)
  if (rss.overall >= TARGET_RSS_MB) missed.push(`overall RSS growth ${fmt(rss.overall, 1)} MB`)
  const perRound = (f: (r: Round) => number) => rounds.map((r) => pct(f(r))).join(", ")
  const yes = (ok: boolean) => (ok ? "yes" : "NO")

  const out: Array<string> = []
  out.push(
    `Blob storage: ${fmt(config.mib)} MiB stored and read back, ${config.rounds} rounds (after one warm-up round), ${config.database} database`
  )
  out.push(machineLine(load0))
  out.push(`Date: ${new Date().toISOString()}; Node ${process.version}; files in ${os.tmpdir()} (one filesystem)`)
  out.push("")
  out.push("| operation | median time | MiB/s | ratio (per round) | target | met |")
  out.push("|---|---:|---:|---|---:|---|")
  out.push(
    `| cp | ${fmt(
      med((r) => r.cp),
      2
    )} s | ${fmt(mibps(med((r) => r.cp)))} | | | |`
  )
  out.push(
    `| cp + fdatasync of the copy | ${fmt(
      med((r) => r.cp + r.sync),
      2
    )} s | ${fmt(mibps(med((r) => r.cp + r.sync)))} | | | |`
  )
  out.push(
    `| Node stream copy (createReadStream → createWriteStream; reference) | ${fmt(
      med((r) => r.node),
      2
    )} s | ${fmt(mibps(med((r) => r.node)))} | ${pct(med((r) => r.cp / r.node))} of cp | | |`
  )
  out.push(
    `| store (put + acquire) vs cp | ${fmt(
      med((r) => r.store),
      2
    )} s | ${fmt(mibps(med((r) => r.store)))} | **${pct(ratios.storeVsCp)}** (${perRound((r) => r.cp / r.store)}) | ≥ ${pct(TARGET_RATIO)} | ${yes(ratios.storeVsCp >= TARGET_RATIO)} |`
  )
  out.push(
    `| store vs cp + fdatasync | | | **${pct(ratios.storeVsCpSync)}** (${perRound((r) => (r.cp + r.sync) / r.store)}) | ≥ ${pct(TARGET_RATIO)} | ${yes(ratios.storeVsCpSync >= TARGET_RATIO)} |`
  )
  out.push(
    `| read back (open → file) vs cp | ${fmt(
      med((r) => r.read),
      2
    )} s | ${fmt(mibps(med((r) => r.read)))} | **${pct(ratios.readVsCp)}** (${perRound((r) => r.cp / r.read)}) | ≥ ${pct(TARGET_RATIO)} | ${yes(ratios.readVsCp >= TARGET_RATIO)} |`
  )
  out.push("")
  out.push("| RSS growth | MB | target | met |")
  out.push("|---|---:|---:|---|")
  out.push(
    `| store: peak during the phase − RSS at its start, largest of the rounds | ${fmt(rss.store, 1)} | < ${TARGET_RSS_MB} | ${yes(rss.store < TARGET_RSS_MB)} |`
  )
  out.push(`| read back: the same | ${fmt(rss.read, 1)} | < ${TARGET_RSS_MB} | ${yes(rss.read < TARGET_RSS_MB)} |`)
  out.push(
    `| overall: peak of the whole run (warm-up included) − RSS before the first store | ${fmt(rss.overall, 1)} | < ${TARGET_RSS_MB} | ${yes(rss.overall < TARGET_RSS_MB)} |`
  )
  out.push("")
  const total = costs.reduce((sum, c) => sum + c.secondsPerGiB, 0)
  out.push(
    `CPU per GiB on this machine, one thread: ${costs.map((c) => `${c.algorithm} ${fmt(c.secondsPerGiB, 2)} s`).join(", ")}; ` +
      `the four digests ${fmt(total, 2)} s (at most ${fmt(1024 / total)} MiB/s on one core). ` +
      `The store used ${fmt((med((r) => r.storeCpu) * 1024) / config.mib, 2)} s of CPU per GiB (median).`
  )
  out.push(missed.length === 0 ? "All targets met." : `Missed: ${missed.join("; ")}`)
  process.stdout.write(out.join("\n") + "\n")
  if (config.output !== undefined) {
    writeFileSync(config.output, JSON.stringify({ config, rounds, ratios, rss, digestCosts: costs, missed }, null, 2))
  }
  return missed.length
}

await runMain(main)
