// The shared helpers of src/lib, each on its own: no server, no database.
import { describe, expect, it } from "vitest"
import { formatGoDuration, parseGoDuration } from "../src/lib/Duration.ts"

describe("Go durations", () => {
  it("parses and formats as Go does", () => {
    expect(parseGoDuration("8h0m0s")).toBe(28800)
    expect(parseGoDuration("1h30m")).toBe(5400)
    expect(parseGoDuration("1.5h")).toBe(5400)
    expect(parseGoDuration("90s")).toBe(90)
    expect(parseGoDuration("0")).toBe(0)
    expect(parseGoDuration("10")).toBeUndefined()
    expect(parseGoDuration("1d")).toBeUndefined()
    expect(formatGoDuration(28800)).toBe("8h0m0s")
    expect(formatGoDuration(600)).toBe("10m0s")
    expect(formatGoDuration(5430.5)).toBe("1h30m30.5s")
  })
})
