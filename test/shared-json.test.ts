// SharedJson (src/http/Json.ts): an object an answer repeats is written once and copied in; the
// answer is byte for byte what JSON.stringify makes of the whole, whatever the strings around it.
import { describe, expect, it } from "vitest"
import { SharedJson } from "../src/http/Json.ts"

describe("SharedJson", () => {
  it("writes what JSON.stringify writes, each shared object once", () => {
    const repo = { id: 1, name: "app", owner: { login: "alice" }, description: 'quotes " and \\ and \u0000 and ü' }
    const other = { id: 2, name: "fork", empty: [], nothing: null }
    const page = Array.from({ length: 5 }, (_, i) => ({
      number: i,
      // Strings that look like a stand-in but are not one (no process nonce; NUL as data).
      title: i === 0 ? "\u00000:1\u0000" : i === 1 ? '"\\u0000' : `pull ${i} ✓ ü`,
      base: { ref: "main", repo },
      head: { ref: `b${i}`, repo: i % 2 === 0 ? repo : other }
    }))
    const shared = new SharedJson()
    let stringified = 0
    const counted = (value: object) => ({
      ...value,
      toJSON: () => {
        stringified++
        return { ...value }
      }
    })
    const repoOnce = counted(repo)
    const otherOnce = counted(other)
    const light = page.map((p) => ({
      ...p,
      base: { ...p.base, repo: shared.ref(repoOnce) },
      head: { ...p.head, repo: shared.ref(p.head.repo === repo ? repoOnce : otherOnce) }
    }))
    const text = shared.bytes(light).toString("utf8")
    expect(text).toBe(JSON.stringify(page))
    expect(JSON.parse(text)).toEqual(page)
    // Two distinct objects, each written once however often it appears.
    expect(stringified).toBe(2)
  })

  it("leaves an answer with nothing shared as JSON.stringify writes it", () => {
    const value = { a: [1, "two", { three: 3 }], b: "\u0000" }
    expect(new SharedJson().bytes(value).toString("utf8")).toBe(JSON.stringify(value))
  })
})
