// The ceiling for the benchmark: a bare node:http server answering, for each path, the exact
// status, headers and body Hearth sent for it (recorded by run.ts and passed in CEILING_RESPONSES).
// Whatever Hearth does beyond writing those bytes is what the ratio measures.
import { createServer } from "node:http"

interface Recorded {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string // base64
}

const recorded = JSON.parse(process.env.CEILING_RESPONSES ?? "{}") as Record<string, Recorded>
const responses = new Map(
  Object.entries(recorded).map(([path, r]) => [path, { ...r, body: Buffer.from(r.body, "base64") }])
)

const server = createServer((req, res) => {
  const response = responses.get(req.url ?? "")
  if (response === undefined) {
    res.writeHead(404).end()
    return
  }
  res.writeHead(response.status, { ...response.headers, "content-length": response.body.length })
  res.end(response.body)
})
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  process.stdout.write(`${typeof address === "object" && address !== null ? address.port : 0}\n`)
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
