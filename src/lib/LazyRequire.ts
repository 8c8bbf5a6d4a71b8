// Heavy dependencies loaded on first use instead of at start-up: each costs 10–25 MB and 20–60 ms
// that a server which never uses it should not pay. Synchronous (`require` also loads ES modules
// on Node ≥ 22.12), so the code using them keeps its shape.
import { packageRequire as require } from "./PackageRoot.ts"

/** A getter that loads `specifier` on its first call and returns the same module afterwards. */
export const lazyRequire = <T>(specifier: string): (() => T) => {
  let loaded: T | undefined
  return () => (loaded ??= require(specifier) as T)
}
