// A bare node:http file server for the benchmarks' side-by-side runs: every GET is answered with
// the file named by its argument, streamed from disk with its length. Prints its port, then serves.
import { createReadStream, statSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

const file = process.argv[2]!
const size = statSync(file).size
const server = createServer((_req, res) => {
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(size) })
  createReadStream(file).pipe(res)
})
server.listen(0, "127.0.0.1", () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`))
