// bench:packages, generic part (issue 21): a BENCH_PACKAGES_MIB file (default 1 GiB) uploaded to
// Hearth's generic registry (PUT /api/packages/{owner}/generic/…, a token) and downloaded again,
// side by side in the same run with a bare node:http server (its own process, as Hearth) that
// receives the same file to disk (createWriteStream, no hashing, no fsync) and serves it
// (createReadStream). The client is node:http in this process, streaming the file from disk and
// discarding what it downloads. Per round, in an order that alternates between rounds: the bare
// server's upload and download, then Hearth's (the version is deleted after each round, so every
// upload stores anew). Throughput is size / wall time; ratios are medians of per-round ratios.
// Hearth's RSS growth: its peak RSS during a transfer (VmHWM, reset through /proc/<pid>/clear_refs
// before it) minus its RSS at the transfer's start; the largest over the rounds.
// Targets: RSS growth < 30 MB; download ≥ 70 % of the bare server's; upload ≥ 60 %.
// BENCH_BEFORE=<checkout>: that checkout's Hearth too (its own data and database), in the same
// rounds, the order rotating (bare, before, this): a change measured side by side with its base.
import { randomBytes } from "node:crypto"
import { createReadStream, readFileSync, writeFileSync } from "node:fs"
import { open } from "node:fs/promises"
import { request } from "node:http"
import os from "node:os"
import { join } from "node:path"
import {
  type Backend,
  cpuSeconds,
  createAccount,
  createToken,
  fmt,
  log,
  machineLine,
  median,
  pct,
  positive,
  preparePostgres,
  runMain,
  spawnListening,
  startHearth,
  tempDir
} from "../support.ts"

const MiB = 1024 * 1024
const config = {
  mib: Math.round(positive("BENCH_PACKAGES_MIB", 1024)),
  rounds: Math.max(1, Math.round(positive("BENCH_ROUNDS", 3))),
  database: (process.env.BENCH_DATABASE ?? "postgres") as "embedded" | "postgres",
  output: process.env.BENCH_OUTPUT
}
const TARGET_RSS_MB = 30
const TARGET_DOWNLOAD = 0.7
const TARGET_UPLOAD = 0.6

/** The bare server: GET serves argv[1]; PUT writes the body to argv[2], then 201. Prints its port. */
const BARE_SERVER = `
const { createReadStream, createWriteStream, statSync } = require("node:fs")
const { createServer } = require("node:http")
const { pipeline } = require("node:stream")
const [file, target] = process.argv.slice(1)
const server = createServer((req, res) => {
  if (req.method === "PUT") {
    pipeline(req, createWriteStream(target), (error) => {
      res.writeHead(error ? 500 : 201).end()
    })
    return
  }
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(statSync(file).size) })
  createReadStream(file).pipe(res)
})
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"))
`

const kb = (pid: number, field: string) =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? Number.NaN) / 1024

/**
 * Runs `f` and measures its wall time, `pid`'s RSS growth (peak during it − RSS at its start) and
 * the CPU seconds `pid` used meanwhile (all its threads).
 */
const measured = async (pid: number, f: () => Promise<void>) => {
  writeFileSync(`/proc/${pid}/clear_refs`, "5") // VmHWM := VmRSS
  const before = kb(pid, "VmRSS")
  const cpu = cpuSeconds(pid).self
  const t = performance.now()
  await f()
  const seconds = (performance.now() - t) / 1000
  return { seconds, rssGrowth: kb(pid, "VmHWM") - before, cpu: cpuSeconds(pid).self - cpu }
}

/** PUTs `file` (streamed from disk, with its length); resolves with the status. */
const upload = (url: string, file: string, size: number, headers: Record<string, string> = {}) =>
  new Promise<number>((done, fail) => {
    const req = request(
      url,
      { method: "PUT", agent: false, headers: { ...headers, "content-length": String(size) } },
      (res) => {
        res.resume()
        res.on("end", () => done(res.statusCode ?? 0))
      }
    )
    req.on("error", fail)
    createReadStream(file, { highWaterMark: MiB }).pipe(req)
  })

/** GETs `url`, discarding the body; resolves with the bytes received. */
const download = (url: string, headers: Record<string, string> = {}) =>
  new Promise<number>((done, fail) => {
    const req = request(url, { agent: false, headers }, (res) => {
      if (res.statusCode !== 200) fail(new Error(`GET ${url}: ${res.statusCode}`))
      let received = 0
      res.on("data", (chunk: Buffer) => {
        received += chunk.length
      })
      res.on("end", () => done(received))
      res.on("error", fail)
    })
    req.on("error", fail)
    req.end()
  })

interface HearthRound {
  readonly up: number
  readonly down: number
  readonly upCpu: number
  /** CPU seconds after the upload's answer until its four other digests were recorded (the files API answered). */
  readonly digestCpu: number
  readonly digestSeconds: number
  readonly downCpu: number
  readonly upRss: number
  readonly downRss: number
}

interface Round {
  readonly bareUp: number
  readonly bareDown: number
  readonly bareUpCpu: number
  readonly bareDownCpu: number
  /** By server label ("this", and "before" with BENCH_BEFORE). */
  readonly hearth: Record<string, HearthRound>
  /** The load average (1 min) at the round's start. */
  readonly load: number
}

const main = async () => {
  const load0 = os.loadavg()
  const work = tempDir("hearth-bench-packages-")
  const source = join(work, "package.bin")
  const bytes = config.mib * MiB
  log(`writing a ${config.mib} MiB file of random bytes in ${work}`)
  {
    const file = await open(source, "w")
    const block = randomBytes(MiB)
    for (let i = 0; i < config.mib; i++) {
      block.writeUInt32LE(i, 0)
      await file.write(block)
    }
    await file.sync()
    await file.close()
  }

  // BENCH_BEFORE: another checkout (the code before a change) measured in the same rounds.
  const trees: Array<{ label: string; tree?: string }> = [{ label: "this" }]
  if (process.env.BENCH_BEFORE !== undefined && process.env.BENCH_BEFORE !== "")
    trees.unshift({ label: "before", tree: process.env.BENCH_BEFORE })
  const account = { username: "bench", password: "bench-password-1" }
  const servers: Array<{ label: string; pid: number; base: string; auth: Record<string, string>; version: number }> = []
  for (const { label, tree } of trees) {
    const backend: Backend = {
      name: config.database,
      dataDir: join(work, `data-${label}`),
      logFile: join(work, `hearth-${label}.log`),
      ...(config.database === "postgres" ? { databaseUrl: (await preparePostgres()).url } : {}),
      ...(tree === undefined ? {} : { tree }),
      env: { HEARTH__log__LEVEL: "Warn" },
      // BENCH_NODE_ARGS: Node flags for Hearth (a profile: `--cpu-prof --cpu-prof-dir=DIR`).
      nodeArgs: (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter((a) => a !== "")
    }
    await createAccount(backend, account)
    const hearth = await startHearth(backend)
    const token = await createToken(hearth.base, account, ["write:package"])
    servers.push({
      label,
      pid: hearth.child.pid!,
      base: hearth.base,
      auth: { authorization: `token ${token}` },
      version: 0
    })
  }

  // Started as Hearth is (spawnListening: on Hearth's core with BENCH_PIN=1), so that both compete alike.
  const { child: bare, base: bareBase } = await spawnListening(
    ["-e", BARE_SERVER, source, join(work, "received.bin")],
    process.env,
    "the bare server"
  )
  const bareUrl = `${bareBase}/package.bin`

  const bareRound = async () => {
    const up = await measured(bare.pid!, async () => {
      const status = await upload(bareUrl, source, bytes)
      if (status !== 201) throw new Error(`bare upload: ${status}`)
    })
    const down = await measured(bare.pid!, async () => {
      if ((await download(bareUrl)) !== bytes) throw new Error("bare download: wrong size")
    })
    return { bareUp: up.seconds, bareDown: down.seconds, bareUpCpu: up.cpu, bareDownCpu: down.cpu }
  }
  const hearthRound = async (server: (typeof servers)[number]): Promise<HearthRound> => {
    const { pid, auth } = server
    const version = ++server.version
    const url = `${server.base}/api/packages/bench/generic/big/${version}.0.0/package.bin`
    // New bytes for every upload (its first 8 bytes): a blob already stored is not stored again
    // (nor its digests computed again), and neither may be skipped here.
    {
      const file = await open(source, "r+")
      const stamp = Buffer.alloc(8)
      stamp.writeDoubleLE(performance.timeOrigin + performance.now())
      await file.write(stamp, 0, 8, 0)
      await file.close()
    }
    const up = await measured(pid, async () => {
      const status = await upload(url, source, bytes, auth)
      if (status !== 201) throw new Error(`Hearth (${server.label}) upload: ${status}`)
    })
    // md5, sha1, sha512 and blake2b are computed after the answer (src/storage/Digests.ts): the
    // package's files (Forgejo's PackageFile JSON) answer once they are recorded, waiting for them.
    // Their CPU is the upload's, and the download that follows is measured without it.
    const digests = await measured(pid, async () => {
      const files = await new Promise<string>((done, fail) => {
        const req = request(
          `${server.base}/api/v1/packages/bench/generic/big/${version}.0.0/files`,
          { agent: false, headers: auth },
          (res) => {
            let body = ""
            res.setEncoding("utf8")
            res.on("data", (chunk: string) => {
              body += chunk
            })
            res.on("end", () => (res.statusCode === 200 ? done(body) : fail(new Error(`files: ${res.statusCode}`))))
          }
        )
        req.on("error", fail)
        req.end()
      })
      const [file] = JSON.parse(files) as Array<{ md5?: string; sha512?: string }>
      if (!file?.md5 || !file.sha512) throw new Error(`Hearth (${server.label}) files: no digests in ${files}`)
    })
    const down = await measured(pid, async () => {
      if ((await download(url, auth)) !== bytes) throw new Error(`Hearth (${server.label}) download: wrong size`)
    })
    // Deleted, so that the next round stores anew (the blob goes with its last reference).
    const deleted = await new Promise<number>((done, fail) => {
      const req = request(
        `${server.base}/api/packages/bench/generic/big/${version}.0.0`,
        { method: "DELETE", agent: false, headers: auth },
        (res) => {
          res.resume()
          res.on("end", () => done(res.statusCode ?? 0))
        }
      )
      req.on("error", fail)
      req.end()
    })
    if (deleted !== 204) throw new Error(`Hearth (${server.label}) delete: ${deleted}`)
    return {
      up: up.seconds,
      down: down.seconds,
      upRss: up.rssGrowth,
      downRss: down.rssGrowth,
      upCpu: up.cpu,
      digestCpu: digests.cpu,
      digestSeconds: digests.seconds,
      downCpu: down.cpu
    }
  }

  log("warm-up round")
  await bareRound()
  for (const server of servers) {
    const warm = await hearthRound(server)
    log(
      `warm-up (${server.label}): upload ${fmt(warm.up, 2)} s (RSS +${fmt(warm.upRss, 1)} MB), download ${fmt(warm.down, 2)} s`
    )
  }
  const rounds: Array<Round> = []
  // The order rotates from round to round: bare, then each server, each first in turn.
  const steps = ["bare", ...servers.map((s) => s.label)]
  for (let round = 0; round < config.rounds; round++) {
    const load = os.loadavg()[0]!
    const order = steps.map((_, i) => steps[(i + round) % steps.length]!)
    let b: Awaited<ReturnType<typeof bareRound>> | undefined
    const hearth: Record<string, HearthRound> = {}
    for (const step of order) {
      if (step === "bare") b = await bareRound()
      else hearth[step] = await hearthRound(servers.find((s) => s.label === step)!)
    }
    rounds.push({ ...b!, hearth, load })
    log(
      `round ${round + 1} (load ${fmt(load, 2)}; ${order.join(", ")}): bare up ${fmt(b!.bareUp, 2)} s down ${fmt(b!.bareDown, 2)} s; ` +
        servers
          .map(
            (s) =>
              `${s.label} up ${fmt(hearth[s.label]!.up, 2)} s (RSS +${fmt(hearth[s.label]!.upRss, 1)} MB) down ${fmt(hearth[s.label]!.down, 2)} s (RSS +${fmt(hearth[s.label]!.downRss, 1)} MB)`
          )
          .join("; ")
    )
  }

  const med = (f: (r: Round) => number) => median(rounds.map(f))
  const mibps = (seconds: number) => config.mib / seconds
  const yes = (ok: boolean) => (ok ? "yes" : "NO")
  const perRound = (f: (r: Round) => number) => rounds.map((r) => pct(f(r))).join(", ")
  const results: Record<string, unknown> = {}
  let missedThis = 0

  const out: Array<string> = []
  out.push(
    `Generic package: ${fmt(config.mib)} MiB uploaded and downloaded, ${config.rounds} rounds (after one warm-up round), ${config.database} database`
  )
  out.push(machineLine(load0))
  out.push(`Date: ${new Date().toISOString()}; Node ${process.version}`)
  out.push(`Load average (1 min) at each round's start: ${rounds.map((r) => fmt(r.load, 2)).join(", ")}`)
  out.push("")
  out.push("| transfer | median time | MiB/s | ratio to the bare server (per round) | target | met |")
  out.push("|---|---:|---:|---|---:|---|")
  out.push(
    `| bare node:http, upload to disk | ${fmt(
      med((r) => r.bareUp),
      2
    )} s | ${fmt(mibps(med((r) => r.bareUp)))} | | | |`
  )
  out.push(
    `| bare node:http, download | ${fmt(
      med((r) => r.bareDown),
      2
    )} s | ${fmt(mibps(med((r) => r.bareDown)))} | | | |`
  )
  const notes: Array<string> = []
  for (const { label } of servers) {
    const h = (r: Round) => r.hearth[label]!
    const ratios = { upload: med((r) => r.bareUp / h(r).up), download: med((r) => r.bareDown / h(r).down) }
    const rss = {
      upload: Math.max(...rounds.map((r) => h(r).upRss)),
      download: Math.max(...rounds.map((r) => h(r).downRss))
    }
    const missed: Array<string> = []
    if (ratios.upload < TARGET_UPLOAD) missed.push(`upload ${pct(ratios.upload)} of the bare server`)
    if (ratios.download < TARGET_DOWNLOAD) missed.push(`download ${pct(ratios.download)} of the bare server`)
    if (rss.upload >= TARGET_RSS_MB) missed.push(`upload RSS growth ${fmt(rss.upload, 1)} MB`)
    if (rss.download >= TARGET_RSS_MB) missed.push(`download RSS growth ${fmt(rss.download, 1)} MB`)
    if (label === "this") missedThis = missed.length
    results[label] = { ratios, rss, missed }
    out.push(
      `| Hearth (${label}) upload (PUT, token) | ${fmt(
        med((r) => h(r).up),
        2
      )} s | ${fmt(mibps(med((r) => h(r).up)))} | **${pct(ratios.upload)}** (${perRound((r) => r.bareUp / h(r).up)}) | ≥ ${pct(TARGET_UPLOAD)} | ${yes(ratios.upload >= TARGET_UPLOAD)} |`
    )
    out.push(
      `| Hearth (${label}) download (GET, token) | ${fmt(
        med((r) => h(r).down),
        2
      )} s | ${fmt(mibps(med((r) => h(r).down)))} | **${pct(ratios.download)}** (${perRound((r) => r.bareDown / h(r).down)}) | ≥ ${pct(TARGET_DOWNLOAD)} | ${yes(ratios.download >= TARGET_DOWNLOAD)} |`
    )
    const perGiB = (f: (r: Round) => number) => fmt((med(f) * 1024) / config.mib, 2)
    notes.push(
      `Hearth (${label}): RSS growth (peak during the transfer − RSS at its start, largest of the rounds) upload ${fmt(rss.upload, 1)} MB, download ${fmt(rss.download, 1)} MB (target < ${TARGET_RSS_MB} MB: ${yes(rss.upload < TARGET_RSS_MB && rss.download < TARGET_RSS_MB)}); ` +
        `CPU per GiB (all threads, median) upload ${perGiB((r) => h(r).upCpu)} s (until its answer; ${perGiB((r) => h(r).upCpu + h(r).digestCpu)} s with the digests after it, which took ${fmt(
          med((r) => h(r).digestSeconds),
          2
        )} s more), download ${perGiB((r) => h(r).downCpu)} s. ` +
        (missed.length === 0 ? "All targets met." : `Missed: ${missed.join("; ")}`)
    )
  }
  out.push("")
  const perGiB = (f: (r: Round) => number) => fmt((med(f) * 1024) / config.mib, 2)
  out.push(
    `Bare server CPU per GiB: upload ${perGiB((r) => r.bareUpCpu)} s, download ${perGiB((r) => r.bareDownCpu)} s.`
  )
  out.push(...notes)
  process.stdout.write(`${out.join("\n")}\n`)
  if (config.output !== undefined) writeFileSync(config.output, JSON.stringify({ config, rounds, results }, null, 2))
  return missedThis
}

await runMain(main)
