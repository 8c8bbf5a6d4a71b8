// The error framework shared by every route (issue item 6, Forgejo's services/context/api.go): `{message, url}`
// bodies, 422 naming the field, 413 over the body limit, 500 for defects (logged), nosniff on
// every response, and nothing written by a refused request.
import { createServer } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Context, Effect, Exit, Layer, Logger, Schema, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiError, HttpApiGroup } from "effect/http-api"
import { SqlClient } from "effect/sql/SqlClient"
import { ConnectionError, SqlError } from "effect/sql/SqlError"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { layerValue, resolveSettings } from "../src/config/Settings.ts"
import { dieOnSqlError } from "../src/db/Boundary.ts"
import { OutageLogsLayer, RETRY_AFTER_SECONDS, reportUnavailable } from "../src/health/Database.ts"
import { describeSchemaError, ErrorResponses, ErrorResponsesLive } from "../src/http/Middleware.ts"
import { basic, createUser, type Hearth, json, startHearth } from "./support/hearth.ts"

const LIMIT = 2048
let hearth: Hearth
let errorUrl: string
beforeAll(async () => {
  hearth = await startHearth({ server: { MAX_REQUEST_BODY: String(LIMIT) } })
  errorUrl = `${hearth.base}/api/swagger`
  await createUser(hearth, { username: "alice" })
})
afterAll(() => hearth?.close())

const jsonContent = { "content-type": "application/json" }
const createToken = (body: string | Blob, headers: Record<string, string> = jsonContent) =>
  fetch(hearth.api("/users/alice/tokens"), {
    method: "POST",
    headers: { authorization: basic("alice"), ...headers },
    body
  })

const tokenCount = () =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const [row] = yield* sql`SELECT count(*) AS n FROM access_tokens`
      return Number(row!.n)
    })
  )

/** Runs `body` and checks that no access token was written meanwhile. */
const writesNothing = async (body: () => Promise<void>) => {
  const before = await tokenCount()
  await body()
  expect(await tokenCount()).toBe(before)
}

describe("request decoding failures", () => {
  it("answers malformed JSON with 422 and a message", async () => {
    await writesNothing(async () => {
      for (const body of ["{", '{"name": "x",}', "name=x"]) {
        const res = await createToken(body)
        expect(res.status, body).toBe(422)
        expect(await json(res)).toEqual({ message: "request body is not valid JSON", url: errorUrl })
      }
    })
  })

  it("answers a body that is not the expected object with 422 naming the expected type", async () => {
    await writesNothing(async () => {
      for (const body of ["[]", '"name"', "null", "42"]) {
        const res = await createToken(body)
        expect(res.status, body).toBe(422)
        expect((await json(res)).message).toBe("request body: Expected CreateAccessTokenOption")
      }
    })
  })

  it("names the field of a missing key or a wrong type", async () => {
    await writesNothing(async () => {
      const cases: Array<[unknown, string]> = [
        [{ scopes: ["all"] }, "[name]: Missing key"],
        [{ name: ["x"], scopes: ["all"] }, "[name]: Expected string"],
        [{ name: "x", scopes: { all: true } }, "[scopes]: Expected array"],
        [{ name: "x", scopes: ["all", 7] }, "[scopes.1]: Expected string"]
      ]
      for (const [body, message] of cases) {
        const res = await createToken(JSON.stringify(body))
        expect(res.status, JSON.stringify(body)).toBe(422)
        expect(await json(res)).toEqual({ message, url: errorUrl })
      }
    })
  })

  it("words schema failures of each request part in one line", () => {
    const failure = (kind: HttpApiError.HttpApiSchemaError["kind"], schema: Schema.Top, input: unknown) => {
      const error = Effect.runSync(Effect.flip(Schema.decodeUnknownEffect(schema as Schema.Codec<unknown>)(input)))
      return describeSchemaError(new HttpApiError.HttpApiSchemaError({ kind, cause: error }))
    }
    const Option = Schema.Struct({
      name: Schema.String,
      nested: Schema.optionalKey(Schema.Struct({ flags: Schema.Array(Schema.Boolean) })),
      visibility: Schema.optionalKey(Schema.Literals(["public", "private"]))
    })
    expect(failure("Payload", Option, { name: "x", nested: { flags: [true, 1] } })).toBe(
      "[nested.flags.1]: Expected boolean"
    )
    expect(failure("Payload", Option, { name: "x", visibility: "secret" })).toBe(
      '[visibility]: Expected "public" | "private"'
    )
    const digits = Schema.String.check(Schema.isPattern(/^\d+$/))
    expect(failure("Query", Schema.Struct({ page: digits }), { page: "x" })).toMatch(/^query \[page\]: Expected /)
    expect(failure("Params", Schema.Struct({ id: digits }), { id: "x" })).toMatch(/^path \[id\]: Expected /)
  })

  it("answers an unsupported Content-Type with 415 and the error body", async () => {
    await writesNothing(async () => {
      const res = await createToken("name=x&scopes=all", { "content-type": "application/x-www-form-urlencoded" })
      expect(res.status).toBe(415)
      expect(res.headers.get("x-content-type-options")).toBe("nosniff")
      expect(await json(res)).toEqual({
        message: "unsupported Content-Type: application/x-www-form-urlencoded",
        url: errorUrl
      })
    })
  })

  it("reads a body without Content-Type as JSON", async () => {
    const res = await fetch(hearth.api("/users/alice/tokens"), {
      method: "POST",
      headers: { authorization: basic("alice") },
      body: new Blob([JSON.stringify({ name: "typeless", scopes: ["read:user"] })])
    })
    expect(res.status).toBe(201)
  })
})

describe("request body size", () => {
  it("answers a body over [server] MAX_REQUEST_BODY with 413 and writes nothing", async () => {
    await writesNothing(async () => {
      const res = await createToken(JSON.stringify({ name: "big", scopes: ["all"], pad: "x".repeat(LIMIT) }))
      expect(res.status).toBe(413)
      expect(res.headers.get("x-content-type-options")).toBe("nosniff")
      expect(await json(res)).toEqual({ message: `request body is larger than ${LIMIT} bytes`, url: errorUrl })
    })
  })

  it("applies the limit to a streamed body without Content-Length too", async () => {
    await writesNothing(async () => {
      const chunk = new TextEncoder().encode(" ".repeat(512))
      let sent = 0
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent === 0) controller.enqueue(new TextEncoder().encode('{"name":"streamed","scopes":["all"]'))
          if (sent++ < 8) controller.enqueue(chunk)
          else {
            controller.enqueue(new TextEncoder().encode("}"))
            controller.close()
          }
        }
      })
      const res = await fetch(hearth.api("/users/alice/tokens"), {
        method: "POST",
        headers: { authorization: basic("alice"), "content-type": "application/json" },
        body: stream,
        duplex: "half"
      } as RequestInit)
      expect(res.status).toBe(413)
      expect((await json(res)).message).toBe(`request body is larger than ${LIMIT} bytes`)
    })
  })

  it("accepts a body just under the limit", async () => {
    const base = JSON.stringify({ name: "small", scopes: ["read:user"], pad: "" })
    const pad = "x".repeat(LIMIT - base.length - 1)
    const res = await createToken(JSON.stringify({ name: "small", scopes: ["read:user"], pad }))
    expect(res.status).toBe(201)
  })
})

describe("defects", () => {
  it("logs a defect and answers 500 {message: 'internal server error', url}", async () => {
    const logged: Array<string> = []
    const capture = (...args: Array<unknown>) => void logged.push(args.map(String).join(" "))
    const spies = [
      vi.spyOn(console, "log").mockImplementation(capture),
      vi.spyOn(console, "error").mockImplementation(capture)
    ]
    const rename = (from: string, to: string) =>
      hearth.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          yield* sql.unsafe(`ALTER TABLE ${from} RENAME TO ${to}`)
        })
      )
    // A real failure below the handler: the table it reads is gone.
    await rename("access_tokens", "access_tokens_away")
    try {
      const res = await fetch(hearth.api("/users/alice/tokens"), { headers: { authorization: basic("alice") } })
      expect(res.status).toBe(500)
      expect(res.headers.get("x-content-type-options")).toBe("nosniff")
      expect(await json(res)).toEqual({ message: "internal server error", url: errorUrl })
    } finally {
      await rename("access_tokens_away", "access_tokens")
      for (const spy of spies) spy.mockRestore()
    }
    const entry = logged.find((line) => line.includes("unhandled error while answering a request"))
    expect(entry).toBeDefined()
    expect(entry).toMatch(/ERROR/)
    expect(entry).toMatch(/access_tokens/)
    // And the server goes on answering.
    expect(
      (await fetch(hearth.api("/users/alice/tokens"), { headers: { authorization: basic("alice") } })).status
    ).toBe(200)
  })
})

describe("response headers and shapes", () => {
  it("sends X-Content-Type-Options: nosniff on every response, errors and 404 included", async () => {
    const responses: Array<[string, Response]> = [
      ["200", await fetch(hearth.api("/version"))],
      ["401", await fetch(hearth.api("/user"))],
      [
        "403",
        await fetch(hearth.api("/users/alice/tokens"), { headers: { authorization: basic("alice") } }).then(
          async () => {
            await createUser(hearth, { username: "mallory" })
            return fetch(hearth.api("/users/alice/tokens"), { headers: { authorization: basic("mallory") } })
          }
        )
      ],
      ["404 api", await fetch(hearth.api("/no/such/route"))],
      ["404 resource", await fetch(hearth.api("/users/nobody-at-all"))],
      ["404 outside api", await fetch(`${hearth.base}/no/such/page`)],
      ["422", await createToken("{")],
      ["openapi", await fetch(`${hearth.base}/api/swagger.v1.json`)]
    ]
    for (const [label, res] of responses) {
      expect(res.headers.get("x-content-type-options"), label).toBe("nosniff")
      await res.arrayBuffer()
    }
    expect(responses.map(([label, res]) => `${label}:${res.status}`)).toEqual([
      "200:200",
      "401:401",
      "403:403",
      "404 api:404",
      "404 resource:404",
      "404 outside api:404",
      "422:422",
      "openapi:200"
    ])
  })

  it("answers 404 with an empty body, and other errors with {message, url} as JSON", async () => {
    const missing = await fetch(hearth.api("/users/nobody-at-all"))
    expect(missing.status).toBe(404)
    expect(await missing.text()).toBe("")
    const unauthorized = await fetch(hearth.api("/user"))
    expect(unauthorized.headers.get("content-type")).toMatch(/^application\/json/)
    expect(await json(unauthorized)).toEqual({ message: "token is required", url: errorUrl })
  })
})

// The renderer's rule, on an API of its own served with the real `ErrorResponses` (issue 16 item 4):
// a slice declares an error class with its status (`httpApiStatus`) and the renderer answers it,
// with no table of classes to keep; anything else is a defect, and a database outage among the
// defects (what a repository's boundary turns an unreachable database into) is 503.
class Teapot extends Schema.TaggedError<Teapot>()(
  "Teapot",
  { message: Schema.String, brew: Schema.String },
  { httpApiStatus: 418 }
) {}
class NoSuchBrew extends Schema.TaggedError<NoSuchBrew>()("NoSuchBrew", {}, { httpApiStatus: 404 }) {}

const RuleApi = HttpApi.make("rule")
  .add(
    HttpApiGroup.make("rule").add(
      HttpApiEndpoint.get("teapot", "/teapot", { success: Schema.String, error: Teapot }),
      HttpApiEndpoint.get("missing", "/missing", { success: Schema.String, error: NoSuchBrew }),
      HttpApiEndpoint.get("defect", "/defect", { success: Schema.String }),
      HttpApiEndpoint.get("outage", "/outage", { success: Schema.String })
    )
  )
  .middleware(ErrorResponses)

describe("the renderer's rule", () => {
  const ruleSettings = resolveSettings({ server: { ROOT_URL: "http://forge.invalid/" } })
  let base: string
  let scope: Scope.Closeable
  beforeAll(async () => {
    const handlers = HttpApiBuilder.group(RuleApi, "rule", (h) =>
      h
        .handle("teapot", () => Effect.fail(new Teapot({ message: "I'm a teapot", brew: "earl grey" })))
        .handle("missing", () => Effect.fail(new NoSuchBrew()))
        .handle("defect", () => Effect.die(new Error("a bug in a handler")))
        // What `sqlBoundary` makes of a query on a database that cannot be reached.
        .handle("outage", () =>
          dieOnSqlError(
            Effect.fail(
              new SqlError({
                reason: new ConnectionError({ cause: new Error("connect ECONNREFUSED"), message: "cannot connect" })
              })
            )
          )
        )
    )
    const app = HttpRouter.serve(
      HttpApiBuilder.layer(RuleApi).pipe(
        Layer.provide(handlers),
        Layer.provide(ErrorResponsesLive),
        Layer.provide(layerValue(ruleSettings))
      ),
      { disableLogger: true, disableListenLog: true }
    ).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })))
    scope = Effect.runSync(Scope.make())
    const context = await Effect.runPromise(Layer.buildWithScope(app, scope))
    const address = Context.get(context, HttpServer.HttpServer).address
    if (!("port" in address)) throw new Error("expected a TCP address")
    base = `http://127.0.0.1:${address.port}`
  })
  afterAll(() => scope && Effect.runPromise(Scope.close(scope, Exit.void)))

  it("answers a slice's own error with its annotated status and {message, url}, its fields joining the body", async () => {
    const res = await fetch(`${base}/teapot`)
    expect(res.status).toBe(418)
    expect(await res.json()).toEqual({
      message: "I'm a teapot",
      url: "http://forge.invalid/api/swagger",
      brew: "earl grey"
    })
  })

  it("answers a slice's own 404 with an empty body", async () => {
    const res = await fetch(`${base}/missing`)
    expect(res.status).toBe(404)
    expect(await res.text()).toBe("")
  })

  it("answers a defect with 500 and logs it", async () => {
    const logged: Array<string> = []
    const capture = (...args: Array<unknown>) => void logged.push(args.map(String).join(" "))
    const spies = [
      vi.spyOn(console, "log").mockImplementation(capture),
      vi.spyOn(console, "error").mockImplementation(capture)
    ]
    try {
      const res = await fetch(`${base}/defect`)
      expect(res.status).toBe(500)
      expect(await res.json()).toEqual({ message: "internal server error", url: "http://forge.invalid/api/swagger" })
    } finally {
      for (const spy of spies) spy.mockRestore()
    }
    expect(logged.find((line) => line.includes("unhandled error while answering a request"))).toMatch(
      /a bug in a handler/
    )
  })

  it("answers an unreachable database (a defect from the SQL boundary) with 503 and Retry-After", async () => {
    const spies = [
      vi.spyOn(console, "log").mockImplementation(() => {}),
      vi.spyOn(console, "error").mockImplementation(() => {})
    ]
    try {
      const res = await fetch(`${base}/outage`)
      expect(res.status).toBe(503)
      expect(res.headers.get("retry-after")).toBe(String(RETRY_AFTER_SECONDS))
      expect(await res.json()).toMatchObject({ url: "http://forge.invalid/api/swagger" })
    } finally {
      for (const spy of spies) spy.mockRestore()
    }
  })
})

// One line per outage (src/health/Database.ts): the count is each server's own, so that a process
// running several (the tests' workers do) logs each one's outage.
describe("the outage's log line (OutageLogsLayer)", () => {
  it("is written once when an outage starts, whoever reports it, counted per server; other entries pass", async () => {
    const lines: Array<string> = []
    const capture = Logger.make((options: Logger.Options<unknown>) => {
      const parts = Array.isArray(options.message) ? options.message : [options.message]
      lines.push(parts.map(String).join(" "))
    })
    const refused = new SqlError({
      reason: new ConnectionError({ cause: new Error("connect ECONNREFUSED"), message: "cannot connect" })
    })
    // Each `Effect.provide` builds the layer anew: a server of its own.
    const onServer = <A>(effect: Effect.Effect<A>) =>
      Effect.runPromise(Effect.provide(effect, OutageLogsLayer.pipe(Layer.provide(Logger.layer([capture])))))
    await onServer(
      Effect.gen(function* () {
        yield* reportUnavailable("no answer to a ping within 2 seconds")
        yield* reportUnavailable(refused)
        yield* Effect.logError("the cluster's poll failed", refused)
        yield* Effect.logWarning("something else")
      })
    )
    expect(lines).toEqual([
      "the database is unavailable (no answer to a ping within 2 seconds): requests that need it are answered 503 until it is back",
      "something else"
    ])
    await onServer(reportUnavailable(refused))
    expect(lines).toHaveLength(3)
    expect(lines[2]).toMatch(/^the database is unavailable \(cannot connect/)
  })
})
