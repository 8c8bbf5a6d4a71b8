// `GET /api/healthz`: Forgejo's health check (routers/web/healthcheck `Check`), for load
// balancers and orchestrators. No authentication, no session; it only pings the database (within
// a short deadline), so it keeps answering while the database is down — with "fail".
//
// As Forgejo: `{"status": "pass"|"fail", "description", "checks": {"cache:ping": [...],
// "database:ping": [...]}}`, each check `{status, time}` (RFC 3339, UTC, seconds), 200 on pass
// and 424 Failed Dependency on fail (Forgejo's `ToHTTPStatus`), as indented `application/json` (what
// Forgejo sends, rather than the draft-inadarei-api-health-check media type its format comes from).
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql/SqlClient"
import { pingDatabase } from "./Database.ts"

type Status = "pass" | "fail"

// Go's time.RFC3339 of a UTC time: no fractional seconds.
const checkTime = () => new Date().toISOString().replace(/\.\d+Z$/, "Z")

const healthz = (sql: SqlClient) =>
  Effect.gen(function* () {
    const database: Status = (yield* Effect.provideService(pingDatabase, SqlClient, sql)) ? "pass" : "fail"
    // Hearth's caches are in-process memory: they cannot be unreachable.
    const cache: Status = "pass"
    const status: Status = database === "pass" && cache === "pass" ? "pass" : "fail"
    const body = {
      status,
      description: "Hearth",
      checks: {
        "cache:ping": [{ status: cache, time: checkTime() }],
        "database:ping": [{ status: database, time: checkTime() }]
      }
    }
    return HttpServerResponse.text(JSON.stringify(body, null, 2), {
      status: status === "pass" ? 200 : 424,
      contentType: "application/json",
      headers: { "cache-control": "no-store" }
    })
  })

export const HealthRoutes = Layer.unwrap(
  Effect.gen(function* () {
    const sql = yield* SqlClient
    return HttpRouter.add("GET", "/api/healthz", healthz(sql))
  })
)
