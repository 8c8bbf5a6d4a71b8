// The baseline for the git benchmarks: `git http-backend` (git's own CGI program for smart HTTP)
// behind a minimal node:http server, one CGI process per request, request and response streamed.
// Serves every bare repository under BACKEND_ROOT at /{path}.git, with no authentication.
// Prints the port it listens on (127.0.0.1) as its first line.
import { spawn } from "node:child_process"
import { createServer } from "node:http"

const projectRoot = process.env.BACKEND_ROOT
if (projectRoot === undefined || projectRoot === "") {
  console.error("BACKEND_ROOT must name the directory holding the bare repositories")
  process.exit(2)
}

// The same minimal environment Hearth gives git (src/git/Git.ts gitEnv): no user or system config.
const baseEnv: NodeJS.ProcessEnv = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: "/nonexistent",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  LANG: "C",
  GIT_PROJECT_ROOT: projectRoot,
  GIT_HTTP_EXPORT_ALL: "1",
  GATEWAY_INTERFACE: "CGI/1.1",
  SERVER_SOFTWARE: "hearth-bench",
  SERVER_NAME: "127.0.0.1"
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://127.0.0.1")
  let pathInfo: string
  try {
    pathInfo = decodeURIComponent(url.pathname)
  } catch {
    res.writeHead(400, { "content-type": "text/plain" }).end("malformed path\n")
    return
  }
  const env: NodeJS.ProcessEnv = {
    ...baseEnv,
    REQUEST_METHOD: req.method ?? "GET",
    PATH_INFO: pathInfo,
    QUERY_STRING: url.search.slice(1),
    SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
    SERVER_PORT: String(req.socket.localPort ?? ""),
    REMOTE_ADDR: req.socket.remoteAddress ?? "127.0.0.1"
  }
  if (req.headers["content-type"] !== undefined) env.CONTENT_TYPE = req.headers["content-type"]
  // Without CONTENT_LENGTH http-backend reads the (chunked) body until end of input.
  if (req.headers["content-length"] !== undefined) env.CONTENT_LENGTH = req.headers["content-length"]
  // Every other request header as HTTP_* (Git-Protocol, Content-Encoding, Accept-Encoding…).
  for (const [name, value] of Object.entries(req.headers)) {
    if (name === "content-type" || name === "content-length" || value === undefined) continue
    env[`HTTP_${name.toUpperCase().replace(/-/g, "_")}`] = Array.isArray(value) ? value.join(", ") : value
  }

  const child = spawn("git", ["http-backend"], { env, stdio: ["pipe", "pipe", "pipe"] })
  const stderr: Array<Buffer> = []
  child.stderr.on("data", (chunk: Buffer) => stderr.length < 64 && stderr.push(chunk))
  child.stdin.on("error", () => {})
  req.pipe(child.stdin)

  // CGI output: header lines up to an empty line (`Status: 200 OK` sets the status), then the body.
  let head = Buffer.alloc(0)
  let headersDone = false
  const onData = (chunk: Buffer) => {
    if (headersDone) return
    head = Buffer.concat([head, chunk])
    const crlf = head.indexOf("\r\n\r\n")
    const lf = head.indexOf("\n\n")
    const end = crlf !== -1 && (lf === -1 || crlf < lf) ? crlf : lf
    if (end === -1) return
    headersDone = true
    child.stdout.off("data", onData)
    const rest = head.subarray(end + (end === crlf ? 4 : 2))
    let status = 200
    for (const line of head.subarray(0, end).toString("latin1").split(/\r?\n/)) {
      const colon = line.indexOf(":")
      if (colon === -1) continue
      const name = line.slice(0, colon).trim()
      const value = line.slice(colon + 1).trim()
      if (name.toLowerCase() === "status") status = Number.parseInt(value, 10) || 200
      else res.appendHeader(name, value)
    }
    res.writeHead(status)
    if (rest.length > 0) res.write(rest)
    child.stdout.pipe(res)
  }
  child.stdout.on("data", onData)
  child.on("close", (code) => {
    if (code !== 0)
      process.stderr.write(
        `[http-backend] git http-backend exited ${code}: ${Buffer.concat(stderr).toString().trim()}\n`
      )
    if (!headersDone) {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" })
      res.end("git http-backend failed\n")
    }
  })
  // The client went away before the response was complete: stop git.
  res.on("close", () => {
    if (!res.writableFinished && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  })
})

server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  process.stdout.write(`${typeof address === "object" && address !== null ? address.port : 0}\n`)
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
