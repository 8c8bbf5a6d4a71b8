// Where a cheap request's CPU goes (`node infra/bench/request-profile.ts`): for each server
// (`BENCH_SERVERS`, as bench:memory's: `label=dir[:flags]`, default this checkout), database
// (`BENCH_BACKENDS`) and request (`GET /api/v1/version`, the token `GET /api/v1/users/bench`), a
// fresh `serve` from the checkout's sources (so that frames name their modules; the bundle runs the
// same code) with `--cpu-prof`, `BENCH_WARMUP` s of warm-up, then `BENCH_DURATION` s of load at
// `BENCH_CONNECTIONS`; the server's CPU per request (from /proc) and the profile's top frames over
// the measured window (self time, and inclusive time of Hearth's and effect's frames), as a share
// of the process's busy samples. Profiles are kept in `BENCH_PROFILE_DIR` (default: a temp dir).
import { spawn } from "node:child_process"
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync } from "node:fs"
import os from "node:os"
import { join, relative } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import {
  type Backend,
  type BackendName,
  children,
  cpuSeconds,
  createAccount,
  createToken,
  fmt,
  freePort,
  hearthEnv,
  http,
  load,
  log,
  logTail,
  machineLine,
  nodeBin,
  parseServers,
  positive,
  preparePostgres,
  runMain,
  stopChild,
  tempDir
} from "./support.ts"

const config = {
  duration: positive("BENCH_DURATION", 10),
  warmup: positive("BENCH_WARMUP", 5),
  connections: positive("BENCH_CONNECTIONS", 4),
  top: positive("BENCH_TOP", 25),
  backends: (process.env.BENCH_BACKENDS ?? "postgres,embedded").split(",") as Array<BackendName>,
  servers: parseServers(process.env.BENCH_SERVERS ?? "this=."),
  dir: process.env.BENCH_PROFILE_DIR
}
const ACCOUNT = { username: "bench", password: "bench-password-123" }
const pinned = process.env.BENCH_PIN === "1" && os.cpus().length >= 2

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}
interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly children?: ReadonlyArray<number>
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly startTime: number
  readonly endTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

/** Where a frame comes from, shortly: `src/…`, `effect/…`, `node:…`, or a special frame. */
const place = (frame: CallFrame, tree: string) => {
  const url = frame.url.replace(/^file:\/\//, "")
  if (url === "") return `(${frame.functionName || "native"})`
  const m = /node_modules\/(@[^/]+\/[^/]+|[^/]+)\/(?:dist\/)?(.*)$/.exec(url)
  if (m !== null) return `${m[1]}/${m[2]}`
  if (url.startsWith("node:")) return url
  return relative(tree, url)
}

/**
 * Self and inclusive shares of the busy samples between `fromUs` and `toUs` (the monotonic clock
 * that V8's profiler and `process.hrtime` share, in µs).
 */
const analyse = (profile: Profile, tree: string, fromUs: number, toUs: number) => {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  // Sample times: startTime + cumulative deltas.
  const times: Array<number> = []
  let t = profile.startTime
  for (const d of profile.timeDeltas) times.push((t += d))
  const self = new Map<string, number>()
  const inclusive = new Map<string, number>()
  const bucket = new Map<string, number>()
  const selfBucket = new Map<string, number>()
  let busy = 0
  let idle = 0
  profile.samples.forEach((id, i) => {
    if (times[i]! < fromUs || times[i]! > toUs) return
    const node = byId.get(id)!
    if (node.callFrame.functionName === "(idle)") {
      idle++
      return
    }
    busy++
    const key = (f: CallFrame) => `${f.functionName || "(anonymous)"} ${place(f, tree)}:${f.lineNumber + 1}`
    const selfKey = key(node.callFrame)
    self.set(selfKey, (self.get(selfKey) ?? 0) + 1)
    const where = place(node.callFrame, tree)
    const group = where.startsWith("(")
      ? where
      : where.startsWith("node:")
        ? "node:*"
        : where.startsWith("src/")
          ? where
          : where
              .split("/")
              .slice(0, where.startsWith("@") ? 2 : 1)
              .join("/")
    selfBucket.set(group, (selfBucket.get(group) ?? 0) + 1)
    // Inclusive: every distinct frame and module on the stack, once per sample.
    const seen = new Set<string>()
    const seenBucket = new Set<string>()
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const f = byId.get(n)!.callFrame
      const k = key(f)
      if (!seen.has(k)) {
        seen.add(k)
        inclusive.set(k, (inclusive.get(k) ?? 0) + 1)
      }
      const p = place(f, tree)
      const b = p.startsWith("src/") ? p : p.startsWith("effect/") ? p.split("/").slice(0, 3).join("/") : ""
      if (b !== "" && !seenBucket.has(b)) {
        seenBucket.add(b)
        bucket.set(b, (bucket.get(b) ?? 0) + 1)
      }
    }
  })
  const top = (m: Map<string, number>, n: number, filter: (k: string) => boolean = () => true) =>
    [...m]
      .filter(([k]) => filter(k))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${fmt((100 * v) / busy, 1).padStart(5)} %  ${k}`)
  return {
    busy,
    idle,
    self: top(self, config.top),
    inclusive: top(inclusive, config.top * 2),
    modules: top(bucket, 30),
    selfModules: top(selfBucket, 30)
  }
}

const runCase = async (
  label: string,
  tree: string,
  nodeArgs: ReadonlyArray<string>,
  env: Readonly<Record<string, string>>,
  backend: Backend,
  profileDir: string,
  request: { name: string; path: string; headers: Record<string, string> }
) => {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const name = `${label}-${backend.name}-${request.name}.cpuprofile`
  const node = existsSync(join(tree, "node_modules/.bin/node")) ? join(tree, "node_modules/.bin/node") : nodeBin
  const args = [
    ...nodeArgs,
    "--cpu-prof",
    `--cpu-prof-dir=${profileDir}`,
    `--cpu-prof-name=${name}`,
    "src/cli.ts",
    "serve"
  ]
  const out = openSync(backend.logFile, "a")
  const child = spawn(pinned ? "taskset" : node, pinned ? ["-c", "0", node, ...args] : args, {
    cwd: tree,
    env: { ...hearthEnv(backend, port), ...env },
    stdio: ["ignore", out, out]
  })
  closeSync(out)
  children.add(child)
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`serve exited:\n${logTail(backend.logFile)}`)
    if (
      await http(`${base}/api/v1/version`).then(
        (r) => r.status === 200,
        () => false
      )
    )
      break
    if (i > 12_000) throw new Error("serve did not start")
    await sleep(5)
  }
  const headers = { ...request.headers }
  if (headers.authorization === "token ?")
    headers.authorization = `token ${await createToken(base, ACCOUNT, ["read:user"])}`
  await load(`${base}${request.path}`, headers, config.warmup, config.connections)
  const before = cpuSeconds(child.pid!).self
  const fromUs = Number(process.hrtime.bigint() / 1000n)
  const sample = await load(`${base}${request.path}`, headers, config.duration, config.connections)
  const toUs = Number(process.hrtime.bigint() / 1000n)
  const cpu = cpuSeconds(child.pid!).self - before
  await stopChild(child)
  const profile = JSON.parse(readFileSync(join(profileDir, name), "utf8")) as Profile
  const window = analyse(profile, tree, fromUs, toUs)
  return { name, sample, cpuUsPerRequest: (cpu * 1e6) / sample.requests, window }
}

const main = async () => {
  const load0 = os.loadavg()
  const profileDir = config.dir ?? tempDir("hearth-request-profile-")
  mkdirSync(profileDir, { recursive: true })
  const tmp = tempDir("hearth-request-profile-data-")
  const requests = [
    { name: "version", path: "/api/v1/version", headers: {} },
    { name: "user", path: `/api/v1/users/${ACCOUNT.username}`, headers: { authorization: "token ?" } }
  ]
  for (const backendName of config.backends) {
    for (const server of config.servers) {
      const dataDir = join(tmp, `${server.label}-${backendName}`)
      const backend: Backend = {
        name: backendName,
        dataDir,
        logFile: join(tmp, `${server.label}-${backendName}.log`),
        tree: server.tree,
        ...(backendName === "postgres" ? { databaseUrl: (await preparePostgres()).url } : {})
      }
      await createAccount(backend, ACCOUNT)
      for (const request of requests) {
        log(`${server.label} ${backendName} ${request.name}`)
        const r = await runCase(server.label, server.tree, server.nodeArgs, server.env, backend, profileDir, request)
        process.stdout.write(
          `\n## ${server.label}, ${backendName}, GET ${request.path}: ${fmt(r.sample.rps)} req/s, ` +
            `${fmt(r.cpuUsPerRequest, 1)} µs CPU per request, ${r.window.busy} busy / ${r.window.idle} idle samples` +
            ` (${r.name})\n\nself:\n${r.window.self.join("\n")}\n\ninclusive:\n${r.window.inclusive.join("\n")}` +
            `\n\nby module (inclusive):\n${r.window.modules.join("\n")}` +
            `\n\nby module (self):\n${r.window.selfModules.join("\n")}\n`
        )
      }
    }
  }
  process.stdout.write(`\n${machineLine(load0)}\nprofiles in ${profileDir}: ${readdirSync(profileDir).join(", ")}\n`)
  return 0
}

await runMain(main)
