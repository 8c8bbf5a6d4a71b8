// Hearth's federation benchmark (`npm run bench:federation`; issue 8). Issue 8 names no targets;
// this measures what federation costs, each beside a local baseline in the same run:
// 1. the first federation request (Fedify loaded on first use) and the server's RSS before/after;
// 2. GET of a Person actor and of WebFinger, against GET /api/v1/users/{name} (same account);
// 3. signed activities into a repository's inbox (Like then Undo, RFC 9421, a new id each), one at
//    a time, against the local star/unstar (PUT/DELETE /api/v1/user/starred) with a token;
// 4. fan-out: a user with N remote followers pushes; time until every follower's inbox has the note.
// The remote side is this process: a plain node:http server serving N Person actors with RSA keys
// and inboxes that count what arrives; requests are signed with Fedify's signRequest.

import type { webcrypto } from "node:crypto"
import { readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import os from "node:os"
import { join } from "node:path"
import { exportSpki, generateCryptoKeyPair, signRequest } from "@fedify/fedify"
import {
  type Account,
  type Backend,
  createAccount,
  createToken,
  fmt,
  freePort,
  http,
  load,
  log,
  machineLine,
  median,
  pct,
  positive,
  preparePostgres,
  quantile,
  runMain,
  startHearth,
  tempDir
} from "./support.ts"

const config = {
  duration: positive("BENCH_DURATION", 10),
  rounds: Math.round(positive("BENCH_ROUNDS", 3)),
  connections: Math.round(positive("BENCH_CONNECTIONS", 4)),
  inbox: Math.round(positive("BENCH_INBOX_REQUESTS", 300)),
  followers: Math.round(positive("BENCH_FOLLOWERS", 50)),
  output: process.env.BENCH_OUTPUT
}

const PASSWORD = "bench-password-123"
const ACCOUNT: Account = { username: "bench", password: PASSWORD }

const rssMb = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024
}

interface Remote {
  readonly base: string
  readonly actor: (i: number) => string
  readonly key: webcrypto.CryptoKeyPair
  /** Notes received per actor inbox (and the shared inbox). */
  readonly received: () => number
  readonly close: () => void
}

/** Remote Person actors (any number) on one local server, with one RSA key they share, and counting inboxes. */
const startRemote = async (): Promise<Remote> => {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const key = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5")
  const pem = await exportSpki(key.publicKey)
  let received = 0
  const actor = (i: number) => `${base}/actors/a${i}`
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", base)
    if (req.method === "POST") {
      req.resume()
      req.on("end", () => {
        received++
        res.writeHead(202).end()
      })
      return
    }
    const m = /^\/actors\/a(\d+)$/.exec(url.pathname)
    if (m === null) return void res.writeHead(404).end()
    const id = actor(Number(m[1]))
    res.writeHead(200, { "content-type": "application/activity+json" }).end(
      JSON.stringify({
        "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
        id,
        type: "Person",
        preferredUsername: `a${m[1]}`,
        inbox: `${id}/inbox`,
        endpoints: { sharedInbox: `${base}/inbox` },
        publicKey: { id: `${id}#main-key`, owner: id, publicKeyPem: pem }
      })
    )
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  return { base, actor, key, received: () => received, close: () => server.close() }
}

/** Posts a signed activity to an inbox; the status. */
const deliver = async (remote: Remote, from: number, inbox: string, activity: Record<string, unknown>) => {
  const request = new Request(inbox, {
    method: "POST",
    headers: { "content-type": "application/activity+json", accept: "application/activity+json" },
    body: JSON.stringify(activity)
  })
  const signed = await signRequest(request, remote.key.privateKey, new URL(`${remote.actor(from)}#main-key`), {
    spec: "rfc9421"
  })
  const res = await fetch(signed)
  await res.arrayBuffer()
  return res.status
}

const timed = async (work: () => Promise<unknown>) => {
  const started = performance.now()
  await work()
  return performance.now() - started
}

const main = async () => {
  const load0 = os.loadavg()
  const pg = await preparePostgres()
  const backend: Backend = {
    name: "postgres",
    dataDir: tempDir("hearth-bench-fed-"),
    databaseUrl: pg.url,
    logFile: join(tempDir("hearth-bench-log-"), "hearth.log"),
    // The remote actors are on this machine, over plain http.
    env: { HEARTH__federation__USE_INSECURE_HTTP: "true", HEARTH__federation__ALLOW_LOCALNETWORKS: "true" }
  }
  log("creating the account")
  await createAccount(backend, ACCOUNT)
  const running = await startHearth(backend)
  const base = running.base
  const token = await createToken(base, ACCOUNT, ["all"])
  const auth = { authorization: `token ${token}` }
  const remote = await startRemote()

  // 1. The first federation request: Fedify's import and the account's keys.
  const idleRss = rssMb(running.child.pid!)
  const firstMs = await timed(() =>
    http(`${base}/api/v1/activitypub/user/bench`, {
      headers: { accept: "application/activity+json" },
      timeoutMs: 30_000
    })
  )
  const secondMs = await timed(() =>
    http(`${base}/api/v1/activitypub/user/bench`, { headers: { accept: "application/activity+json" } })
  )
  const loadedRss = rssMb(running.child.pid!)
  log(`first Person GET ${fmt(firstMs)} ms (then ${fmt(secondMs, 1)} ms); RSS ${fmt(idleRss)} → ${fmt(loadedRss)} MB`)

  // 2. Reads, each beside the account's API GET.
  const cases = [
    {
      name: "GET Person actor",
      url: `${base}/api/v1/activitypub/user/bench`,
      headers: { accept: "application/activity+json" }
    },
    {
      name: "GET WebFinger",
      url: `${base}/.well-known/webfinger?resource=acct:bench@${new URL(base).host}`,
      headers: {}
    }
  ]
  const baseline = { url: `${base}/api/v1/users/bench`, headers: {} }
  const reads: Array<{ name: string; rps: number; baseRps: number; ratio: number; p50: number; baseP50: number }> = []
  for (const c of cases) {
    const ratios: Array<number> = []
    const ours: Array<number> = []
    const theirs: Array<number> = []
    const p50s: Array<number> = []
    const baseP50s: Array<number> = []
    for (let round = 0; round < config.rounds; round++) {
      const first = round % 2 === 0
      const run = async (target: { url: string; headers: Record<string, string> }) =>
        load(target.url, target.headers, config.duration, config.connections)
      const [a, b] = first
        ? [await run(c), await run(baseline)]
        : (([x, y]) => [y, x])([await run(baseline), await run(c)])
      if (a!.bad > 0 || b!.bad > 0) throw new Error(`${c.name}: non-2xx answers`)
      ours.push(a!.rps)
      theirs.push(b!.rps)
      p50s.push(a!.p50)
      baseP50s.push(b!.p50)
      ratios.push(a!.rps / b!.rps)
      log(`round ${round + 1} ${c.name}: ${fmt(a!.rps)} req/s vs users GET ${fmt(b!.rps)} req/s`)
    }
    reads.push({
      name: c.name,
      rps: median(ours),
      baseRps: median(theirs),
      ratio: median(ratios),
      p50: median(p50s),
      baseP50: median(baseP50s)
    })
  }

  // 3. Signed activities into a repository inbox vs the local star and unstar.
  const created = await http(`${base}/api/v1/user/repos`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ name: "starry" })
  })
  const repoId = JSON.parse(created.body.toString()).id as number
  const repoActor = `${base}/api/v1/activitypub/repository-id/${repoId}`
  const inbox = `${repoActor}/inbox`
  const federated: Array<number> = []
  const local: Array<number> = []
  for (let i = 0; i < config.inbox; i++) {
    const actor = remote.actor(i % config.followers)
    const like = {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${actor}#like-${i}`,
      type: "Like",
      actor,
      object: repoActor
    }
    federated.push(
      await timed(async () => {
        const status = await deliver(remote, i % config.followers, inbox, like)
        if (status !== 202) throw new Error(`Like refused: ${status}`)
      })
    )
    federated.push(
      await timed(async () => {
        const undo = {
          "@context": "https://www.w3.org/ns/activitystreams",
          id: `${actor}#undo-${i}`,
          type: "Undo",
          actor,
          object: like
        }
        if ((await deliver(remote, i % config.followers, inbox, undo)) !== 202) throw new Error("Undo refused")
      })
    )
    for (const method of ["PUT", "DELETE"]) {
      local.push(
        await timed(async () => {
          const res = await http(`${base}/api/v1/user/starred/bench/starry`, { method, headers: auth })
          if (res.status !== 204) throw new Error(`local ${method} star: ${res.status}`)
        })
      )
    }
  }
  const sorted = (values: Array<number>) => Float64Array.from(values).sort()
  const inboxRow = {
    federatedP50: quantile(sorted(federated), 0.5),
    federatedP99: quantile(sorted(federated), 0.99),
    localP50: quantile(sorted(local), 0.5),
    localP99: quantile(sorted(local), 0.99)
  }
  log(`inbox: p50 ${fmt(inboxRow.federatedP50, 2)} ms vs local star ${fmt(inboxRow.localP50, 2)} ms`)

  // 4. Fan-out: N remote followers, one push of a note to all of them.
  for (let i = 0; i < config.followers; i++) {
    const actor = remote.actor(i)
    const status = await deliver(remote, i, `${base}/api/v1/activitypub/user/bench/inbox`, {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${actor}#follow-${i}`,
      type: "Follow",
      actor,
      object: `${base}/api/v1/activitypub/user/bench`
    })
    if (status !== 202) throw new Error(`Follow refused: ${status}`)
  }
  // The Accepts go out through the queue too: wait for them first.
  const acceptsDeadline = Date.now() + 120_000
  while (remote.received() < config.followers && Date.now() < acceptsDeadline)
    await new Promise((r) => setTimeout(r, 20))
  const before = remote.received()
  const fanoutMs = await timed(async () => {
    const res = await http(`${base}/api/v1/user/repos`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "announced" })
    })
    if (res.status !== 201) throw new Error(`repository creation: ${res.status}`)
    const deadline = Date.now() + 120_000
    // One note per server with a shared inbox: the remote here is one server.
    while (remote.received() < before + 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
  })
  const endRss = rssMb(running.child.pid!)
  remote.close()

  const lines = [
    machineLine(load0),
    `Date: ${new Date().toISOString()}; PostgreSQL; ${config.followers} remote actors on one local server`,
    "",
    "| measure | federation | local baseline | ratio |",
    "|---|---:|---:|---:|",
    `| first federation request (Fedify loaded, keys made) | ${fmt(firstMs)} ms | next one: ${fmt(secondMs, 1)} ms | |`,
    ...reads.map(
      (r) =>
        `| ${r.name} vs GET /api/v1/users/bench, req/s (p50 ms) | ${fmt(r.rps)} (${fmt(r.p50, 2)}) | ${fmt(r.baseRps)} (${fmt(r.baseP50, 2)}) | ${pct(r.ratio)} |`
    ),
    `| signed Like/Undo into a repository inbox vs local PUT/DELETE star, p50 / p99 ms | ${fmt(inboxRow.federatedP50, 2)} / ${fmt(inboxRow.federatedP99, 2)} | ${fmt(inboxRow.localP50, 2)} / ${fmt(inboxRow.localP99, 2)} | ${fmt(inboxRow.federatedP50 / inboxRow.localP50, 1)}× |`,
    `| repository created → note in the followers' shared inbox (${config.followers} followers) | ${fmt(fanoutMs)} ms | | |`,
    `| server RSS: idle → Fedify loaded → end | ${fmt(idleRss)} → ${fmt(loadedRss)} → ${fmt(endRss)} MB | | |`
  ]
  process.stdout.write(`${lines.join("\n")}\n`)
  if (config.output !== undefined)
    writeFileSync(
      config.output,
      JSON.stringify({ firstMs, secondMs, reads, inbox: inboxRow, fanoutMs, idleRss, loadedRss, endRss }, null, 2)
    )
  return 0
}

void runMain(main)
