// Release asset benchmark (`npm run bench:releases`; issue 20, speed section): one asset of
// BENCH_ASSET_MIB (default 500 MiB) uploaded to a release as `multipart/form-data` (the part
// `attachment`, streamed from disk) and downloaded from its `browser_download_url`
// (`/attachments/{uuid}`), against a bare `node:http` server (infra/bench/file-server.ts, its own
// process) streaming the same file, in the same run. Per round (BENCH_ROUNDS, default 3): one
// upload (its asset deleted again unless it is the last round's), then the two downloads in an
// order that alternates between rounds, after a warm-up (a BENCH_WARMUP_MIB asset, default 64 MiB,
// up and down; its RSS growth shown apart).
// The client discards what it reads.
// RSS growth of the server: its peak RSS during the transfer (VmHWM, reset before it through
// /proc/<pid>/clear_refs; when that is not allowed, the largest of samples every 20 ms) minus its
// RSS when the transfer began; the largest over the rounds. Throughput is size / wall time
// (medians); the ratio is the median of the per-round ratios.
// Targets: RSS growth < 30 MB for upload and download; download ≥ 70 % of the bare server's.
import { randomBytes } from "node:crypto"
import { createReadStream, createWriteStream, readFileSync, statSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import os from "node:os"
import { join } from "node:path"
import {
  type Account,
  type Backend,
  basic,
  createAccount,
  fmt,
  http,
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
} from "./support.ts"

const MiB = 1024 * 1024
const config = {
  mib: Math.round(positive("BENCH_ASSET_MIB", 500)),
  rounds: Math.max(1, Math.round(positive("BENCH_ROUNDS", 3))),
  warmupMib: Math.round(positive("BENCH_WARMUP_MIB", 64)),
  // PostgreSQL by default, as bench:storage: the embedded database leaves memory freed but
  // resident in the server, which the transfers' allocations would reuse, hiding any growth.
  backend: (process.env.BENCH_BACKEND ?? "postgres") as "embedded" | "postgres",
  output: process.env.BENCH_OUTPUT
}
const ACCOUNT: Account = { username: "bench", password: "bench-password-123" }

const kb = (pid: number, field: string) =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0)

/** Runs `transfer`, measuring the growth of `pid`'s RSS (MB) while it runs. */
const measured = async <A>(pid: number, transfer: () => Promise<A>) => {
  let peakReset = true
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5")
  } catch {
    peakReset = false
  }
  const before = kb(pid, "VmRSS")
  let sampled = before
  const sampler = setInterval(() => {
    sampled = Math.max(sampled, kb(pid, "VmRSS"))
  }, 20)
  try {
    const result = await transfer()
    const peak = Math.max(sampled, kb(pid, "VmRSS"), peakReset ? kb(pid, "VmHWM") : 0)
    return { result, growthMb: (peak - before) / 1024 }
  } finally {
    clearInterval(sampler)
  }
}

/** GET, the body counted and dropped; wall time in ms. */
const download = (url: string, headers: Record<string, string> = {}) =>
  new Promise<{ ms: number; bytes: number }>((done, fail) => {
    const started = performance.now()
    const req = request(url, { headers, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        res.resume()
        return fail(new Error(`GET ${url}: ${res.statusCode}`))
      }
      let bytes = 0
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length
      })
      res.on("end", () => done({ ms: performance.now() - started, bytes }))
      res.on("error", fail)
    })
    req.on("error", fail)
    req.end()
  })

/** POST of `file` as the multipart part `attachment`, streamed; the answer's JSON and wall time. */
const upload = (url: string, file: string, headers: Record<string, string>) =>
  new Promise<{ ms: number; status: number; json: any }>((done, fail) => {
    const boundary = `bench${randomBytes(8).toString("hex")}`
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="attachment"; filename="asset.bin"\r\n` +
        "Content-Type: application/octet-stream\r\n\r\n"
    )
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
    const started = performance.now()
    const req = request(
      url,
      {
        method: "POST",
        agent: false,
        headers: {
          ...headers,
          "content-type": `multipart/form-data; boundary=${boundary}`,
          "content-length": String(head.length + statSync(file).size + tail.length)
        }
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          done({
            ms: performance.now() - started,
            status: res.statusCode ?? 0,
            json: text === "" ? {} : JSON.parse(text)
          })
        })
      }
    )
    req.on("error", fail)
    req.write(head)
    const source = createReadStream(file)
    source.on("error", fail)
    source.pipe(req, { end: false })
    source.on("end", () => req.end(tail))
  })

const writeAsset = (file: string, mib: number) =>
  new Promise<void>((done, fail) => {
    const out = createWriteStream(file)
    out.on("error", fail)
    let left = mib
    const more = () => {
      while (left > 0) {
        left--
        if (!out.write(randomBytes(MiB))) return void out.once("drain", more)
      }
      out.end(done)
    }
    more()
  })

const main = async () => {
  const load0 = os.loadavg()
  const dir = tempDir("hearth-bench-releases-")
  const asset = join(dir, "asset.bin")
  log(`writing a ${config.mib} MiB asset`)
  await writeAsset(asset, config.mib)
  const size = config.mib * MiB
  const backend: Backend = {
    name: config.backend,
    dataDir: join(dir, "data"),
    logFile: join(dir, "hearth.log"),
    ...(config.backend === "postgres" ? { databaseUrl: (await preparePostgres()).url } : {}),
    env: { HEARTH__log__LEVEL: "Warn" }
  }
  await createAccount(backend, ACCOUNT)
  const hearth = await startHearth(backend)
  const pid = hearth.child.pid!
  const bare = await spawnListening(["infra/bench/file-server.ts", asset], process.env, "the bare file server")
  const auth = { authorization: basic(ACCOUNT.username, ACCOUNT.password) }
  const api = (path: string, method: string, body?: unknown) =>
    http(`${hearth.base}/api/v1${path}`, {
      method,
      headers: { ...auth, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      timeoutMs: 60_000
    })
  const made = await api("/user/repos", "POST", { name: "assets", auto_init: true })
  if (made.status !== 201) throw new Error(`creating the repository: ${made.status} ${made.body}`)
  const release = await api("/repos/bench/assets/releases", "POST", { tag_name: "v1" })
  if (release.status !== 201) throw new Error(`creating the release: ${release.status} ${release.body}`)
  const releaseId = JSON.parse(release.body.toString("utf8")).id as number

  const uploads: Array<{ ms: number; growthMb: number }> = []
  const hearthDownloads: Array<{ ms: number; growthMb: number }> = []
  const bareDownloads: Array<number> = []
  const ratios: Array<number> = []
  let bareGrowth = 0
  let downloadUrl = ""
  // A warm-up: one smaller asset up and down, so that what is measured is the transfers, not the
  // first use of their code (modules loaded, functions compiled, connections opened) nor the
  // one-time growth of V8's heap to its working size under a stream of allocations; its own RSS
  // growth is reported apart (the first upload a fresh server takes).
  const small = join(dir, "warm-up.bin")
  await writeAsset(small, config.warmupMib)
  const warm = await measured(pid, () =>
    upload(`${hearth.base}/api/v1/repos/bench/assets/releases/${releaseId}/assets?name=warm.bin`, small, auth)
  )
  if (warm.result.status !== 201)
    throw new Error(`warm-up upload: ${warm.result.status} ${JSON.stringify(warm.result.json)}`)
  const warmDownload = await measured(pid, () => download(warm.result.json.browser_download_url))
  await download(`${bare.base}/warm-up.bin`)
  for (let round = 0; round < config.rounds; round++) {
    log(`round ${round + 1}/${config.rounds}: upload (load ${os.loadavg()[0]!.toFixed(2)})`)
    const up = await measured(pid, () =>
      upload(
        `${hearth.base}/api/v1/repos/bench/assets/releases/${releaseId}/assets?name=asset-${round}.bin`,
        asset,
        auth
      )
    )
    if (up.result.status !== 201 || up.result.json.size !== size)
      throw new Error(`upload: ${up.result.status} ${JSON.stringify(up.result.json)}`)
    uploads.push({ ms: up.result.ms, growthMb: up.growthMb })
    downloadUrl = up.result.json.browser_download_url
    const both = async (which: "hearth" | "bare") => {
      if (which === "bare") {
        const got = await measured(bare.child.pid!, () => download(`${bare.base}/asset.bin`))
        if (got.result.bytes !== size) throw new Error(`bare download: ${got.result.bytes} bytes`)
        bareDownloads.push(got.result.ms)
        bareGrowth = Math.max(bareGrowth, got.growthMb)
        return got.result.ms
      }
      const got = await measured(pid, () => download(downloadUrl))
      if (got.result.bytes !== size) throw new Error(`hearth download: ${got.result.bytes} bytes`)
      hearthDownloads.push({ ms: got.result.ms, growthMb: got.growthMb })
      return got.result.ms
    }
    log(`round ${round + 1}/${config.rounds}: downloads`)
    const order = round % 2 === 0 ? (["hearth", "bare"] as const) : (["bare", "hearth"] as const)
    const times: Record<string, number> = {}
    for (const which of order) times[which] = await both(which)
    ratios.push(times.bare! / times.hearth!)
    if (round < config.rounds - 1) {
      const removed = await api(`/repos/bench/assets/releases/${releaseId}/assets/${up.result.json.id}`, "DELETE")
      if (removed.status !== 204) throw new Error(`deleting the asset: ${removed.status}`)
    }
  }

  const mibps = (ms: number) => config.mib / (ms / 1000)
  const uploadGrowth = Math.max(...uploads.map((u) => u.growthMb))
  const downloadGrowth = Math.max(...hearthDownloads.map((d) => d.growthMb))
  const ratio = median(ratios)
  const lines = [
    machineLine(load0),
    `Date: ${new Date().toISOString()}; ${config.backend} database; one ${config.mib} MiB asset, ${config.rounds} rounds`,
    "",
    "| measure | result | target |",
    "|---|---:|---:|",
    `| upload (multipart), MiB/s, median | ${fmt(mibps(median(uploads.map((u) => u.ms))), 1)} | |`,
    `| server RSS growth during upload, MB, largest | ${fmt(uploadGrowth, 1)} | < 30 |`,
    `| download from Hearth (/attachments/{uuid}), MiB/s, median | ${fmt(mibps(median(hearthDownloads.map((d) => d.ms))), 1)} | |`,
    `| download from a bare node:http server, MiB/s, median | ${fmt(mibps(median(bareDownloads)), 1)} | |`,
    `| Hearth / bare, median of the rounds' ratios | ${pct(ratio)} (${ratios.map((r) => pct(r)).join(", ")}) | ≥ 70 % |`,
    `| server RSS growth during download, MB, largest | ${fmt(downloadGrowth, 1)} | < 30 |`,
    `| the bare server's RSS growth during its download, MB, largest | ${fmt(bareGrowth, 1)} | |`,
    `| warm-up (${config.warmupMib} MiB, a fresh server's first): RSS growth upload / download, MB | ${fmt(warm.growthMb, 1)} / ${fmt(warmDownload.growthMb, 1)} | |`,
    `| RSS growth per round, upload / download, MB | ${uploads.map((u, i) => `${fmt(u.growthMb, 1)} / ${fmt(hearthDownloads[i]!.growthMb, 1)}`).join("; ")} | |`
  ]
  process.stdout.write(`${lines.join("\n")}\n`)
  if (config.output !== undefined)
    writeFileSync(config.output, JSON.stringify({ uploads, hearthDownloads, bareDownloads, ratios }))
  let missed = 0
  if (uploadGrowth >= 30) missed++
  if (downloadGrowth >= 30) missed++
  if (ratio < 0.7) missed++
  return missed
}

void runMain(main)
