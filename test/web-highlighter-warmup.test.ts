// The syntax highlighter (≈ 20 MB once loaded) is warmed when the web interface is first used, a
// moment after that page, not when the server starts: a forge used through the API and git only
// never loads it (issue 16's RSS after 10,000 API requests), and a file view still finds it warm.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import type { Hearth } from "./support/hearth.ts"

// The highlighter is one per process, and test files share their worker's modules
// (vitest.config.ts `isolate: false`): another file's server may have warmed it already. A fresh
// copy of the modules gives this file a process's cold highlighter and a server that uses it.
vi.resetModules()
const { highlighter } = await import("../src/web/code/Highlight.ts")
const { request, startHearth } = await import("./support/hearth.ts")

let hearth: Hearth
beforeAll(async () => {
  hearth = await startHearth()
}, 60_000)
afterAll(() => hearth?.close())

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("the syntax highlighter's warm-up", () => {
  it("waits for the first web page, then happens in the background", async () => {
    expect(highlighter.warm).toBe(false)
    for (let i = 0; i < 5; i++) expect((await request(hearth, "GET", "/version")).status).toBe(200)
    await sleep(2_500)
    expect(highlighter.warm).toBe(false)
    const page = await fetch(`${hearth.base}/explore/repos`)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toContain("text/html")
    await page.text()
    for (let i = 0; i < 100 && !highlighter.warm; i++) await sleep(100)
    expect(highlighter.warm).toBe(true)
  }, 30_000)
})
