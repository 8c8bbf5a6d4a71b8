// src/lib/Batcher.ts: callers' items made into one flush — those added in the same turn, those
// added while a flush runs, and with `gatherMs` those added a little apart.
import { describe, expect, it } from "vitest"
import { batcher } from "../src/lib/Batcher.ts"

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const recording = (gatherMs?: number) => {
  const flushes: Array<ReadonlyArray<number>> = []
  const add = batcher(
    async (items: ReadonlyArray<number>) => {
      flushes.push(items)
      return items.map((i) => i * 10)
    },
    500,
    gatherMs
  )
  return { flushes, add }
}

describe("batcher", () => {
  it("answers each caller its own result, items of one turn in one flush", async () => {
    const { flushes, add } = recording()
    expect(await Promise.all([add(1), add(2), add(3)])).toEqual([10, 20, 30])
    expect(flushes).toEqual([[1, 2, 3]])
  })

  it("with gatherMs, items added a few milliseconds apart share a flush (without: one each)", async () => {
    const apart = async (add: (i: number) => Promise<number>) => {
      const answers: Array<Promise<number>> = []
      for (const i of [1, 2, 3]) {
        answers.push(add(i))
        await sleep(10)
      }
      return Promise.all(answers)
    }
    const gathered = recording(200)
    expect(await apart(gathered.add)).toEqual([10, 20, 30])
    expect(gathered.flushes).toEqual([[1, 2, 3]])
    const plain = recording()
    expect(await apart(plain.add)).toEqual([10, 20, 30])
    expect(plain.flushes).toEqual([[1], [2], [3]])
  })
})
