import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { VERSION } from "../src/version.ts"
import { type Hearth, startHearth } from "./support/hearth.ts"

let hearth: Hearth
beforeAll(async () => {
  hearth = await startHearth()
})
afterAll(() => hearth?.close())

describe("GET /api/v1/version", () => {
  it("answers the package version under `version` and `Version`", async () => {
    const res = await fetch(hearth.api("/version"))
    expect(res.status).toBe(200)
    expect(res.headers.get("x-content-type-options")).toBe("nosniff")
    expect(await res.json()).toEqual({ version: VERSION, Version: VERSION })
  })

  it("answers an unknown API route with 404 and an empty body", async () => {
    const res = await fetch(hearth.api("/no/such/route"))
    expect(res.status).toBe(404)
    expect(await res.text()).toBe("")
  })
})
