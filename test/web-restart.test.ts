// Issue 17: web sessions live in the database, so a session survives the server being killed
// (SIGKILL) and started again on the same data, and ends at sign-out all the same.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createAliceWithCli, killAll, onTestDatabase, restartableHearth } from "./support/spawn.ts"
import { csrfOf, WebClient } from "./support/web.ts"

const scope = Effect.runSync(Scope.make())
const dataDir = mkdtempSync(join(tmpdir(), "hearth-web-restart-"))
let env: Record<string, string> = {}
const hearth = restartableHearth(() => env, `Basic ${Buffer.from("alice:password123").toString("base64")}`)

const signedInAs = (html: string) => /data-testid="signed-in-as">[\s\S]*?<\/svg> ([^<]+)<\/a>/.exec(html)?.[1]

beforeAll(async () => {
  env = await onTestDatabase({ HEARTH__server__APP_DATA_PATH: dataDir, HEARTH__log__LEVEL: "Error" }, scope)
  await createAliceWithCli(env)
  await hearth.start()
}, 120_000)

afterAll(async () => {
  killAll()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  rmSync(dataDir, { recursive: true, force: true })
})

describe("a web session and a restart", () => {
  it("survives SIGKILL and a new start, then ends at sign-out", async () => {
    const client = new WebClient(hearth.base)
    expect((await client.signIn("alice")).status).toBe(303)
    expect(signedInAs((await client.get("/")).text)).toBe("alice")

    expect((await hearth.kill()).signal).toBe("SIGKILL")
    await hearth.start()
    // A new port; the same cookies.
    client.base = hearth.base
    const home = await client.get("/")
    expect(signedInAs(home.text)).toBe("alice")

    // The form token is the session's, so it still holds after the restart.
    const out = await client.post("/user/logout", {}, csrfOf(home.text))
    expect(out.status).toBe(303)
    expect(signedInAs((await client.get("/")).text)).toBeUndefined()
  }, 120_000)
})
