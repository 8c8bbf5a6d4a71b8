// The set-up the web page benchmarks share (infra/bench/web/*.ts): a fresh data directory (and
// PostgreSQL database) per backend, the bench account made with the CLI before the server starts,
// the server, and a JSON API call that must succeed.
import type { Agent } from "node:http"
import { join } from "node:path"
import {
  type Account,
  type Backend,
  type BackendName,
  basic,
  createAccount,
  http,
  preparePostgres,
  type Running,
  startHearth,
  tempDir
} from "../support.ts"

/** A JSON API call (`path` under /api/v1) as `auth` that must succeed: its parsed body. */
export const apiCaller =
  (base: string, auth: string, agent?: Agent) =>
  async (method: string, path: string, body?: unknown, as = auth): Promise<any> => {
    const res = await http(`${base}/api/v1${path}`, {
      method,
      ...(agent === undefined ? {} : { agent }),
      headers: { authorization: as, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      timeoutMs: 60_000
    })
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body.toString().slice(0, 200)}`)
    return JSON.parse(res.body.toString() || "null")
  }

export interface BenchServer {
  readonly backend: Backend
  readonly hearth: Running
  /** The bench account's Authorization header. */
  readonly auth: string
}

/** A fresh backend (`prefix` names its temp directory), `account` made, the server started. */
export const startBenchServer = async (
  name: BackendName,
  prefix: string,
  account: Account,
  extra: Partial<Pick<Backend, "env" | "nodeArgs">> = {}
): Promise<BenchServer> => {
  const dataDir = tempDir(`hearth-bench-${prefix}-${name}-`)
  const backend: Backend = {
    name,
    dataDir,
    logFile: join(dataDir, "hearth.log"),
    ...(name === "postgres" ? { databaseUrl: (await preparePostgres()).url } : {}),
    ...extra
  }
  await createAccount(backend, account)
  const hearth = await startHearth(backend)
  return { backend, hearth, auth: basic(account.username, account.password) }
}
