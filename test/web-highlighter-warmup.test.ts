// The syntax highlighter (≈ 20 MB once loaded) is warmed when the web interface is first used, a
// moment after that page, not when the server starts: a forge used through the API and git only
// never loads it (issue 16's RSS after 10,000 API requests), and a file view still finds it warm.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { highlighter } from "../src/web/code/Highlight.ts"
import { type Hearth, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
beforeAll(async () => {
  hearth = await startHearth()
}, 60_000)
afterAll(() => hearth?.close())

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("the syntax highlighter's warm-up", () => {
  it("waits for the first web page, then happens in the background", async () => {
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
