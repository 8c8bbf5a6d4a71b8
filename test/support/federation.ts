// Federation tests: Hearth instances that federate over loopback (plain http, local addresses,
// quick retries), and a way to wait for what arrives in the background.
import type * as Settings from "../../src/config/Settings.ts"
import { type Hearth, startHearth } from "./hearth.ts"

export const federatedSettings = (overrides: Settings.RawSettings = {}): Settings.RawSettings => ({
  ...overrides,
  federation: {
    ENABLED: "true",
    USE_INSECURE_HTTP: "true",
    ALLOW_LOCALNETWORKS: "true",
    DELIVERY_RETRY_DELAY: "1s",
    DELIVERY_ATTEMPTS: "5",
    ...overrides.federation
  }
})

export const startFederated = (overrides: Settings.RawSettings = {}): Promise<Hearth> =>
  startHearth(federatedSettings(overrides))

/** `host:port` of an instance, as handles name it. */
export const hostOf = (hearth: Hearth) => new URL(hearth.base).host

/** Polls `probe` until it returns something other than undefined (or throws after `timeoutMs`). */
export const eventually = async <A>(
  probe: () => Promise<A | undefined>,
  timeoutMs = 15_000,
  what = "the condition"
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const value = await probe()
      if (value !== undefined) return value
    } catch (error) {
      last = error
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last === undefined ? "" : `: ${String(last)}`}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
