// Validates response bodies against the definitions of Forgejo's API description,
// `../shared/reference/swagger.v1.json` beside the project (never copied into it). When that file
// is absent, validation is skipped with one console note, so the suite still runs.
//
//   expectSwagger(body, "User")          one object against definitions.User
//   expectSwagger(list, "User[]")        an array whose items are Users
//
// Swagger 2.0 definitions are JSON Schema (draft 4 flavoured). They are checked with ajv as they
// are, with these adjustments:
// - `x-*` vendor keys and `example` are dropped; `#/definitions/X` references resolve inside the file.
// - Properties are not required unless the definition lists them in `required`, and extra
//   properties are allowed (Forgejo's own responses carry some, e.g. User.username).
// - `null` is accepted where Go may encode a nil slice, map or pointer: array, object,
//   `$ref` and date-time properties. Other strings, numbers and booleans must have their type.
// - Formats: int64/int32/uint64 (integers), date-time (RFC 3339), email (something@something).

import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv"
import { expect } from "vitest"

const SWAGGER_URL = new URL("../../../shared/reference/swagger.v1.json", import.meta.url)
export const swaggerPath = fileURLToPath(SWAGGER_URL)

type Json = null | boolean | number | string | Array<Json> | { [key: string]: Json }
type SchemaNode = { [key: string]: Json }

const isObject = (v: Json | undefined): v is SchemaNode => typeof v === "object" && v !== null && !Array.isArray(v)

/** A Swagger schema node as JSON Schema (see the rules at the top). */
const convert = (node: SchemaNode): SchemaNode => {
  const out: SchemaNode = {}
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith("x-") || key === "example" || key === "discriminator" || key === "readOnly") continue
    if (key === "properties" && isObject(value)) {
      const properties: SchemaNode = {}
      for (const [name, property] of Object.entries(value)) {
        properties[name] = isObject(property) ? nullableIfGoReference(convert(property)) : property
      }
      out[key] = properties
    } else if ((key === "items" || key === "additionalProperties") && isObject(value)) {
      out[key] = convert(value)
    } else if (key === "allOf" && Array.isArray(value)) {
      out[key] = value.map((v) => (isObject(v) ? convert(v) : v))
    } else {
      out[key] = value
    }
  }
  return out
}

const nullableIfGoReference = (schema: SchemaNode): SchemaNode => {
  if (typeof schema.$ref === "string") return { anyOf: [{ type: "null" }, schema] }
  if (schema.type === "array" || schema.type === "object") return { ...schema, type: [schema.type, "null"] }
  // A Go `*time.Time` (an issue's `closed_at`, `due_date`) encodes nil as null.
  if (schema.type === "string" && schema.format === "date-time") return { ...schema, type: ["string", "null"] }
  return schema
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

let validator: Ajv | null | undefined
let noted = false

const load = (): Ajv | null => {
  if (validator !== undefined) return validator
  if (!existsSync(swaggerPath)) {
    validator = null
    return null
  }
  const swagger = JSON.parse(readFileSync(swaggerPath, "utf8")) as { definitions: Record<string, SchemaNode> }
  const definitions: SchemaNode = {}
  for (const [name, definition] of Object.entries(swagger.definitions)) definitions[name] = convert(definition)
  const ajv = new Ajv({ strict: false, allErrors: true, allowUnionTypes: true })
  ajv.addFormat("int64", { type: "number", validate: (n: number) => Number.isInteger(n) })
  ajv.addFormat("int32", { type: "number", validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31 })
  ajv.addFormat("uint64", { type: "number", validate: (n: number) => Number.isInteger(n) && n >= 0 })
  ajv.addFormat("date-time", {
    type: "string",
    validate: (s: string) => RFC3339.test(s) && !Number.isNaN(Date.parse(s))
  })
  ajv.addFormat("email", { type: "string", validate: (s: string) => /^[^\s@]+@[^\s@]+$/.test(s) })
  ajv.addSchema({ $id: "swagger", definitions })
  validator = ajv
  return ajv
}

const compiled = new Map<string, ValidateFunction>()

const validatorFor = (ajv: Ajv, name: string): ValidateFunction => {
  let validate = compiled.get(name)
  if (validate === undefined) {
    const list = name.endsWith("[]")
    const definition = list ? name.slice(0, -2) : name
    if (ajv.getSchema(`swagger#/definitions/${definition}`) === undefined) {
      throw new Error(`swagger.v1.json has no definition named ${definition}`)
    }
    const ref = { $ref: `swagger#/definitions/${definition}` }
    validate = ajv.compile(list ? { type: "array", items: ref } : ref)
    compiled.set(name, validate)
  }
  return validate
}

const describe = (errors: ReadonlyArray<ErrorObject>, body: unknown): Array<string> =>
  errors
    // anyOf branches for nullable references repeat the real error; keep the informative ones.
    .filter((e) => !(e.keyword === "type" && (e.params as { type?: unknown }).type === "null"))
    .filter((e) => e.keyword !== "anyOf")
    .map((e) => {
      const path = e.instancePath === "" ? "(body)" : e.instancePath
      let actual: unknown = body
      for (const part of e.instancePath.split("/").slice(1)) {
        actual = (actual as any)?.[part.replace(/~1/g, "/").replace(/~0/g, "~")]
      }
      return `${path} ${e.message ?? e.keyword} (got ${JSON.stringify(actual)})`
    })

/**
 * The problems of `body` against Forgejo's definition `name` ("User", "AccessToken", "User[]", …):
 * an empty list when it conforms, `undefined` when swagger.v1.json is not available.
 */
export const swaggerProblems = (body: unknown, name: string): Array<string> | undefined => {
  const ajv = load()
  if (ajv === null) return undefined
  const validate = validatorFor(ajv, name)
  return validate(body) ? [] : describe(validate.errors ?? [], body)
}

/** Fails the test when `body` does not conform to Forgejo's definition `name` (see the top). */
export const expectSwagger = (body: unknown, name: string): void => {
  const problems = swaggerProblems(body, name)
  if (problems === undefined) {
    if (!noted) console.info(`swagger validation skipped: ${swaggerPath} is not present`)
    noted = true
    return
  }
  expect(problems, `response body against swagger definition ${name}`).toEqual([])
}
