// Password hashing with argon2id (the hash string carries its own parameters and salt).
import { hash, verify } from "@node-rs/argon2"
import { Effect } from "effect"

// `Algorithm.Argon2id` of @node-rs/argon2 (an ambient const enum, not importable as a value here).
const ARGON2ID = 2 as import("@node-rs/argon2").Algorithm.Argon2id

export const hashPassword = (password: string): Effect.Effect<string> =>
  Effect.promise(() => hash(password, { algorithm: ARGON2ID }))

/** False for an empty stored hash (an account without a password cannot sign in with one). */
export const verifyPassword = (stored: string, password: string): Effect.Effect<boolean> =>
  stored === "" ? Effect.succeed(false) : Effect.promise(() => verify(stored, password).catch(() => false))

/** Forgejo's default minimum length. */
export const MIN_PASSWORD_LENGTH = 8
