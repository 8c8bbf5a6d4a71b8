// npm install metadata benchmark (`npm run bench:packages`, part "npm"; issue 21, speed section):
// a package with BENCH_NPM_VERSIONS versions (default 1,000; each a small tarball and a manifest
// with a few dependencies, published with npm's PUT document) and the document `npm install` asks
// for (`Accept: application/vnd.npm.install-v1+json`, with the owner's token), against a bare
// `node:http` server (infra/bench/file-server.ts, its own process) sending the same document from
// disk, in the same run. Per round (BENCH_ROUNDS, default 3) each is loaded for BENCH_DURATION
// seconds (default 5) over one connection, in an order that alternates between rounds; latencies
// are per request (sub-millisecond). Also shown: the first request after a publish, which
// rebuilds the cached document. Target: Hearth's p50 ≤ 20 ms.
import { createHash, randomBytes } from "node:crypto"
import { writeFileSync } from "node:fs"
import os from "node:os"
import { join } from "node:path"
import {
  type Account,
  type Backend,
  createAccount,
  createToken,
  fmt,
  http,
  load,
  log,
  machineLine,
  median,
  positive,
  preparePostgres,
  runMain,
  type Sample,
  spawnListening,
  startHearth,
  tempDir
} from "../support.ts"

const config = {
  versions: Math.round(positive("BENCH_NPM_VERSIONS", 1000)),
  rounds: Math.max(1, Math.round(positive("BENCH_ROUNDS", 3))),
  duration: positive("BENCH_DURATION", 5),
  backend: (process.env.BENCH_BACKEND ?? "postgres") as "embedded" | "postgres"
}
const ACCOUNT: Account = { username: "bench", password: "bench-password-123" }
const NAME = "bench-package"
const ABBREVIATED = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*"

/** npm's publish document for one version (as libnpmpublish builds it). */
const publishDocument = (registry: string, version: string) => {
  const tarball = randomBytes(512)
  const file = `${NAME}-${version}.tgz`
  return JSON.stringify({
    _id: NAME,
    name: NAME,
    description: "a package with many versions",
    "dist-tags": { latest: version },
    versions: {
      [version]: {
        name: NAME,
        version,
        description: "a package with many versions",
        main: "index.js",
        license: "MIT",
        scripts: { test: "node test.js" },
        dependencies: { "left-pad": "^1.3.0", lodash: "^4.17.21", semver: "^7.6.0" },
        devDependencies: { vitest: "^5.1.1" },
        engines: { node: ">=18" },
        _id: `${NAME}@${version}`,
        dist: {
          integrity: `sha512-${createHash("sha512").update(tarball).digest("base64")}`,
          shasum: createHash("sha1").update(tarball).digest("hex"),
          tarball: `${registry}${NAME}/-/${file}`
        }
      }
    },
    _attachments: {
      [file]: { content_type: "application/octet-stream", data: tarball.toString("base64"), length: 512 }
    }
  })
}

const main = async () => {
  const load0 = os.loadavg()
  const dir = tempDir("hearth-bench-npm-")
  const backend: Backend = {
    name: config.backend,
    dataDir: join(dir, "data"),
    logFile: join(dir, "hearth.log"),
    ...(config.backend === "postgres" ? { databaseUrl: (await preparePostgres()).url } : {}),
    env: { HEARTH__log__LEVEL: "Warn" }
  }
  await createAccount(backend, ACCOUNT)
  const hearth = await startHearth(backend)
  const token = await createToken(hearth.base, ACCOUNT, ["write:package"])
  const auth = { authorization: `Bearer ${token}` }
  const registry = `${hearth.base}/api/packages/${ACCOUNT.username}/npm/`
  const publish = async (version: string) => {
    const res = await http(`${registry}${NAME}`, {
      method: "PUT",
      headers: { ...auth, "content-type": "application/json" },
      body: publishDocument(registry, version),
      timeoutMs: 60_000
    })
    if (res.status !== 201) throw new Error(`publishing ${version}: ${res.status} ${res.body.toString()}`)
  }
  log(`publishing ${config.versions} versions of ${NAME}`)
  const started = performance.now()
  for (let i = 0; i < config.versions; i++) await publish(`1.${Math.floor(i / 100)}.${i % 100}`)
  const publishMs = (performance.now() - started) / config.versions

  // The first request after a publish rebuilds the document (the median of a few).
  const rebuilds: Array<number> = []
  for (let i = 0; i < 5; i++) {
    await publish(`2.0.${i}`)
    const t = performance.now()
    const res = await http(`${registry}${NAME}`, { headers: { ...auth, accept: ABBREVIATED } })
    rebuilds.push(performance.now() - t)
    if (res.status !== 200) throw new Error(`document: ${res.status}`)
  }
  const document = await http(`${registry}${NAME}`, { headers: { ...auth, accept: ABBREVIATED } })
  const body = document.body
  const parsed = JSON.parse(body.toString("utf8"))
  const versions = Object.keys(parsed.versions).length
  if (versions !== config.versions + 5) throw new Error(`the document lists ${versions} versions`)
  const file = join(dir, "document.json")
  writeFileSync(file, body)
  const bare = await spawnListening(["infra/bench/file-server.ts", file], process.env, "the bare file server")

  const samples: Record<"hearth" | "bare", Array<Sample & { load: number }>> = { hearth: [], bare: [] }
  for (let round = 0; round < config.rounds; round++) {
    const order = round % 2 === 0 ? (["hearth", "bare"] as const) : (["bare", "hearth"] as const)
    for (const which of order) {
      const loadNow = os.loadavg()[0]!
      log(`round ${round + 1}/${config.rounds}: ${which} (load ${loadNow.toFixed(2)})`)
      const sample =
        which === "hearth"
          ? await load(`${registry}${NAME}`, { ...auth, accept: ABBREVIATED }, config.duration, 1)
          : await load(`${bare.base}/document.json`, {}, config.duration, 1)
      if (sample.bad > 0) throw new Error(`${which}: ${sample.bad} failed requests`)
      samples[which].push({ ...sample, load: loadNow })
    }
  }
  const p50 = median(samples.hearth.map((s) => s.p50))
  const bareP50 = median(samples.bare.map((s) => s.p50))
  const lines = [
    machineLine(load0),
    `Date: ${new Date().toISOString()}; ${config.backend} database; ${versions} versions, abbreviated document ${fmt(body.length / 1024)} KiB; ${config.rounds} rounds of ${config.duration} s, one connection`,
    "",
    "| measure | Hearth | bare node:http | target |",
    "|---|---:|---:|---:|",
    `| p50 latency, ms, median of the rounds | ${fmt(p50, 2)} | ${fmt(bareP50, 2)} | ≤ 20 (Hearth) |`,
    `| p99 latency, ms, median of the rounds | ${fmt(median(samples.hearth.map((s) => s.p99)), 2)} | ${fmt(median(samples.bare.map((s) => s.p99)), 2)} | |`,
    `| requests/s, median of the rounds | ${fmt(median(samples.hearth.map((s) => s.rps)))} | ${fmt(median(samples.bare.map((s) => s.rps)))} | |`,
    `| p50 per round, ms (load average at its start) | ${samples.hearth.map((s) => `${fmt(s.p50, 2)} (${fmt(s.load, 2)})`).join(", ")} | ${samples.bare.map((s) => `${fmt(s.p50, 2)} (${fmt(s.load, 2)})`).join(", ")} | |`,
    `| first request after a publish (document rebuilt), ms, median of 5 | ${fmt(median(rebuilds), 1)} | | |`,
    `| one publish (PUT with a 512-byte tarball), ms, mean of ${config.versions} | ${fmt(publishMs, 1)} | | |`
  ]
  process.stdout.write(`${lines.join("\n")}\n`)
  return p50 <= 20 ? 0 : 1
}

void runMain(main)
