// Container registry benchmark (part of `npm run bench:packages`; issue 21 "Speed"): Debian's
// skopeo copying an image with one BENCH_CONTAINER_MIB layer (default 200 MiB; random bytes in a
// stored gzip stream, new each round: skopeo's blob info cache, /var/lib/containers/cache when run
// as root, would otherwise have it mounted from the image of an earlier round instead of sent) from
// an OCI layout directory to Hearth (`docker://`, a new image name each round) and back into a new
// OCI layout directory, side by side with the same copy between two OCI layout
// directories on disk, in the same run. Per round, in an order that alternates between rounds:
//   disk   skopeo copy oci:SRC:v1 oci:DST:v1
//   push   skopeo copy oci:SRC:v1 docker://HEARTH/bench/imgN:v1   (Basic credentials → token)
//   pull   skopeo copy docker://HEARTH/bench/imgN:v1 oci:BACK:v1
// Also shown, to tell Hearth's share from skopeo's: the same layer sent by curl in one monolithic
// `POST …/blobs/uploads/?digest=` (Hearth receiving it, computing its digests and storing it).
// Columns are medians over the rounds; each ratio is the median of the per-round ratios. Hearth's
// CPU (all its threads, from /proc) during each copy is shown too: it depends less on the load.
// Target: push and pull each within 1.3× of the disk copy (so the round trip within 1.3× of two).
// BENCH_BEFORE=<checkout>: that checkout's Hearth too, in the same rounds (the order rotating).
import { execFile } from "node:child_process"
import { rmSync, writeFileSync } from "node:fs"
import os from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { layoutTag, writeImage, writeLayout, writeRandomLayer } from "../../../test/support/oci.ts"
import {
  type Backend,
  cpuSeconds,
  createAccount,
  createToken,
  fmt,
  log,
  machineLine,
  median,
  positive,
  preparePostgres,
  runMain,
  startHearth,
  tempDir
} from "../support.ts"

const run = promisify(execFile)
const config = {
  mib: Math.round(positive("BENCH_CONTAINER_MIB", 200)),
  rounds: Math.max(1, Math.round(positive("BENCH_ROUNDS", 3))),
  database: (process.env.BENCH_DATABASE ?? "postgres") as "embedded" | "postgres",
  output: process.env.BENCH_OUTPUT
}
const TARGET = 1.3

/** One skopeo copy with a fresh HOME (no blob info cache, no stored credentials); seconds. */
const copy = async (args: ReadonlyArray<string>) => {
  const home = tempDir("hearth-bench-skopeo-home-")
  const started = performance.now()
  await run("skopeo", ["copy", "--quiet", ...args], {
    env: { ...process.env, HOME: home, XDG_RUNTIME_DIR: home, REGISTRY_AUTH_FILE: join(home, "auth.json") },
    maxBuffer: 16 * 1024 * 1024
  })
  return (performance.now() - started) / 1000
}

const main = async () => {
  const load0 = os.loadavg()
  await run("skopeo", ["--version"]).catch(() => {
    throw new Error("skopeo is not installed (apt-get install skopeo)")
  })
  // BENCH_BEFORE: another checkout (the code before a change) measured in the same rounds.
  const trees: Array<{ label: string; tree?: string }> = [{ label: "this" }]
  if (process.env.BENCH_BEFORE !== undefined && process.env.BENCH_BEFORE !== "")
    trees.unshift({ label: "before", tree: process.env.BENCH_BEFORE })
  const account = { username: "bench", password: "bench-password-1" }
  const servers: Array<{ label: string; pid: number; base: string; host: string; creds: string }> = []
  for (const { label, tree } of trees) {
    const backend: Backend = {
      name: config.database,
      dataDir: tempDir(`hearth-bench-container-${label}-`),
      logFile: join(tempDir("hearth-bench-container-log-"), "hearth.log"),
      ...(config.database === "postgres" ? { databaseUrl: (await preparePostgres()).url } : {}),
      ...(tree === undefined ? {} : { tree })
    }
    await createAccount(backend, account)
    const hearth = await startHearth(backend)
    const token = await createToken(hearth.base, account, ["write:package"])
    servers.push({
      label,
      pid: hearth.child.pid!,
      base: hearth.base,
      host: hearth.base.replace(/^http:\/\//, ""),
      creds: `${account.username}:${token}`
    })
  }

  /** curl sending the layer in one POST; seconds. */
  const curlPost = async (server: (typeof servers)[number], file: string, digest: string, image: string) => {
    const started = performance.now()
    const { stdout } = await run("curl", [
      "-s",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      "-u",
      server.creds,
      "-X",
      "POST",
      "-H",
      "content-type: application/octet-stream",
      "-T",
      file,
      `${server.base}/v2/bench/${image}/blobs/uploads?digest=${digest}`
    ])
    if (stdout !== "201") throw new Error(`curl POST of the layer answered ${stdout}`)
    return (performance.now() - started) / 1000
  }

  interface Trip {
    push: number
    pull: number
    curl: number
    /** Hearth's CPU seconds (all its threads) during each. */
    pushCpu: number
    pullCpu: number
    curlCpu: number
  }
  const rows: Array<{ disk: number; load: number; trips: Record<string, Trip> }> = []
  const steps = ["disk", ...servers.map((s) => s.label)]
  for (let round = 0; round < config.rounds; round++) {
    const src = tempDir("hearth-bench-oci-src-")
    const dst = tempDir("hearth-bench-oci-dst-")
    log(`round ${round + 1}: writing an OCI layout with a new ${config.mib} MiB layer`)
    const layer = await writeRandomLayer(src, config.mib * 1024 * 1024)
    writeLayout(src, { v1: writeImage(src, { arch: "amd64", layers: [layer] }) })
    const load = os.loadavg()[0]!
    const disk = async () => copy([`oci:${src}:v1`, `oci:${dst}:v1`])
    const hearthTrip = async (server: (typeof servers)[number]): Promise<Trip> => {
      const back = tempDir("hearth-bench-oci-back-")
      const image = `docker://${server.host}/bench/img${round}:v1`
      const cpu = () => cpuSeconds(server.pid).self
      const cpu0 = cpu()
      const push = await copy(["--dest-creds", server.creds, "--dest-tls-verify=false", `oci:${src}:v1`, image])
      const cpu1 = cpu()
      const pull = await copy(["--src-creds", server.creds, "--src-tls-verify=false", image, `oci:${back}:v1`])
      const cpu2 = cpu()
      if (layoutTag(back, "v1").digest !== layoutTag(src, "v1").digest)
        throw new Error("the image copied back from Hearth is not the image pushed")
      rmSync(back, { recursive: true, force: true })
      const curl = await curlPost(
        server,
        join(src, "blobs", "sha256", layer.digest.slice(7)),
        layer.digest,
        `curl${round}`
      )
      return { push, pull, curl, pushCpu: cpu1 - cpu0, pullCpu: cpu2 - cpu1, curlCpu: cpu() - cpu2 }
    }
    // The order rotates from round to round: disk, then each server, each first in turn.
    const order = steps.map((_, i) => steps[(i + round) % steps.length]!)
    let d = 0
    const trips: Record<string, Trip> = {}
    for (const step of order) {
      if (step === "disk") d = await disk()
      else trips[step] = await hearthTrip(servers.find((s) => s.label === step)!)
    }
    rows.push({ disk: d, load, trips })
    for (const dir of [src, dst]) rmSync(dir, { recursive: true, force: true })
    log(
      `round ${round + 1} (load ${fmt(load, 2)}; ${order.join(", ")}): disk ${fmt(d, 2)} s; ` +
        servers
          .map(
            (s) =>
              `${s.label}: push ${fmt(trips[s.label]!.push, 2)} s (CPU ${fmt(trips[s.label]!.pushCpu, 2)} s), pull ${fmt(trips[s.label]!.pull, 2)} s (CPU ${fmt(trips[s.label]!.pullCpu, 2)} s), curl POST ${fmt(trips[s.label]!.curl, 2)} s (CPU ${fmt(trips[s.label]!.curlCpu, 2)} s)`
          )
          .join("; ")
    )
  }

  const mibps = (s: number) => fmt((config.mib / s) * 1, 0)
  const verdict = (ratio: number) => (ratio <= TARGET ? "ok" : "MISSED")
  const lines = [
    `## Container registry: skopeo copy of a ${config.mib} MiB image (${config.rounds} rounds, ${config.database})`,
    "",
    "| copy | median time | MiB/s | ratio to disk (median) | target ≤ 1.3× | Hearth CPU (median) |",
    "|---|---|---|---|---|---|",
    `| OCI dir → OCI dir (disk) | ${fmt(median(rows.map((r) => r.disk)), 2)} s | ${mibps(median(rows.map((r) => r.disk)))} | 1.00 | | |`
  ]
  let missedThis = 0
  for (const { label } of servers) {
    const t = (r: (typeof rows)[number]) => r.trips[label]!
    const pushRatio = median(rows.map((r) => t(r).push / r.disk))
    const pullRatio = median(rows.map((r) => t(r).pull / r.disk))
    const tripRatio = median(rows.map((r) => (t(r).push + t(r).pull) / (2 * r.disk)))
    if (label === "this") missedThis = [pushRatio, pullRatio, tripRatio].filter((r) => r > TARGET).length
    lines.push(
      `| (${label}) OCI dir → Hearth (push) | ${fmt(median(rows.map((r) => t(r).push)), 2)} s | ${mibps(median(rows.map((r) => t(r).push)))} | ${fmt(pushRatio, 2)} | ${verdict(pushRatio)} | ${fmt(median(rows.map((r) => t(r).pushCpu)), 2)} s |`,
      `| (${label}) Hearth → OCI dir (pull) | ${fmt(median(rows.map((r) => t(r).pull)), 2)} s | ${mibps(median(rows.map((r) => t(r).pull)))} | ${fmt(pullRatio, 2)} | ${verdict(pullRatio)} | ${fmt(median(rows.map((r) => t(r).pullCpu)), 2)} s |`,
      `| (${label}) round trip vs two disk copies | | | ${fmt(tripRatio, 2)} | ${verdict(tripRatio)} | |`,
      `| (${label}) curl: the layer in one POST to Hearth | ${fmt(median(rows.map((r) => t(r).curl)), 2)} s | ${mibps(median(rows.map((r) => t(r).curl)))} | ${fmt(median(rows.map((r) => t(r).curl / r.disk)), 2)} | | ${fmt(median(rows.map((r) => t(r).curlCpu)), 2)} s |`
    )
  }
  lines.push(
    "",
    `Load average (1 min) at each round's start: ${rows.map((r) => fmt(r.load, 2)).join(", ")}`,
    machineLine(load0)
  )
  const report = lines.join("\n")
  process.stdout.write(`${report}\n`)
  if (config.output !== undefined) writeFileSync(config.output, `${report}\n`)
  return missedThis
}

await runMain(main)
