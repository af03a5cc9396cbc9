import { Effect, Schema, type SchemaAST, type SchemaIssue } from "effect"
import { type ParseError, parse, printParseErrorCode } from "jsonc-parser"
import { DevcontainerConfig } from "./Config.ts"
import { DevcontainerError } from "./Errors.ts"

/** `line:column` (both from 1) of an offset in the text. */
const position = (text: string, offset: number): string => {
  const before = text.slice(0, offset)
  const line = before.split("\n").length
  return `${line}:${offset - before.lastIndexOf("\n")}`
}

// "CloseBraceExpected" → "close brace expected"
const words = (code: string) => code.replace(/(?<=[a-z])(?=[A-Z])/g, " ").toLowerCase()

/** Strict JSONC (comments and trailing commas allowed): the first syntax error, with its line:column, fails. */
export const parseJsonc = (file: string, text: string): Effect.Effect<unknown, DevcontainerError> => {
  const errors: Array<ParseError> = []
  const value: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false })
  const first = errors[0]
  return first === undefined
    ? Effect.succeed(value)
    : Effect.fail(
        new DevcontainerError({
          file,
          detail: `invalid JSON at ${position(text, first.offset)}: ${words(printParseErrorCode(first.error))}`
        })
      )
}

const article = (noun: string) => (/^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`)

// What a schema node expects, in words: its `expected` annotation, else its kind.
const expected = (ast: SchemaAST.AST): string => {
  const annotated = ast.annotations?.expected
  if (typeof annotated === "string") return annotated
  switch (ast._tag) {
    case "String":
      return "a string"
    case "Number":
      return "a number"
    case "Boolean":
      return "a boolean"
    case "Arrays":
      return "an array"
    case "Objects":
      return "an object"
    case "Null":
      return "null"
    case "Literal":
      return JSON.stringify(ast.literal)
    case "Union":
      return ast.types.map(expected).join(" or ")
    default:
      return article(ast._tag.toLowerCase())
  }
}

interface Found {
  readonly path: ReadonlyArray<PropertyKey>
  readonly detail: string
}

// The first problem in an issue tree, with its property path. Never the input:
// messages must not echo PR content.
const firstProblem = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>): Found => {
  switch (issue._tag) {
    case "Pointer":
      return firstProblem(issue.issue, [...path, ...issue.path])
    case "Encoding":
      return firstProblem(issue.issue, path)
    case "Composite":
      return firstProblem(issue.issues[0], path)
    case "AnyOf": {
      // One member got as far as the value's own shape: its problem is the precise one.
      const [only, ...rest] = issue.issues
      return only !== undefined && rest.length === 0
        ? firstProblem(only, path)
        : { path, detail: `expected ${expected(issue.ast)}` }
    }
    case "Filter": {
      const annotated = issue.filter.annotations?.expected
      return typeof annotated === "string" ? { path, detail: `expected ${annotated}` } : firstProblem(issue.issue, path)
    }
    case "InvalidType":
      return { path, detail: `expected ${expected(issue.ast)}` }
    case "UnexpectedKey":
      return { path, detail: "unknown property" }
    case "MissingKey":
      return { path, detail: "missing" }
    case "InvalidValue":
    case "Forbidden":
    case "OneOf":
      return { path, detail: "invalid value" }
  }
}

const propertyPath = (path: ReadonlyArray<PropertyKey>): string =>
  path
    .map((key) => (typeof key === "number" ? `[${key}]` : String(key)))
    .join(".")
    .replaceAll(".[", "[")

/**
 * Decodes a parsed JSON value with `schema`; `strict` makes a property the
 * schema does not know an error (the repository's own file), else it is
 * ignored (an image label's entries and features carry other tools' keys).
 * A problem names the property, never the value.
 */
export const decodeWith =
  <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S) =>
  (file: string, value: unknown, strict: boolean): Effect.Effect<S["Type"], DevcontainerError> =>
    Schema.decodeUnknownEffect(schema)(value, { onExcessProperty: strict ? "error" : "ignore" }).pipe(
      Effect.mapError((error) => {
        const found = firstProblem(error.issue, [])
        return found.path.length === 0
          ? new DevcontainerError({
              file,
              detail: found.detail === "expected an object" ? "expected a JSON object" : found.detail
            })
          : new DevcontainerError({ file, property: propertyPath(found.path), detail: found.detail })
      })
    )

/** Decodes a parsed devcontainer.json (or, not strict, an image label's entry). */
export const decodeConfig: (
  file: string,
  value: unknown,
  strict: boolean
) => Effect.Effect<DevcontainerConfig, DevcontainerError> = decodeWith(DevcontainerConfig)

/** At most this many recovered syntax errors are named; the rest are counted. */
const MAX_NAMED_ERRORS = 5

/** A syntax error jsonc-parser recovered from: `line:column: ErrorName`. */
const recovered = (text: string, errors: ReadonlyArray<ParseError>): ReadonlyArray<string> => {
  const first: Array<ParseError> = []
  for (const error of errors) if (!first.some((kept) => kept.offset === error.offset)) first.push(error)
  return first.map((error) => `${position(text, error.offset)}: ${printParseErrorCode(error.error)}`)
}

/**
 * JSONC read as VS Code reads devcontainer.json: the devcontainers CLI's
 * `readDevContainerConfigFile` (src/spec-node/configContainer.ts) calls
 * jsonc-parser's `parse(content)` with its default options (comments
 * allowed, trailing commas reported) and keeps whatever value it recovers,
 * errors and all: a missing closing brace, a trailing comma, a second value
 * after the first (`EndOfFileExpected`). Each error it recovered from is a
 * warning naming its line:column (the first at each position); nothing fails here.
 */
export const parseJsoncAsVsCode = (
  file: string,
  text: string
): { readonly value: unknown; readonly warnings: ReadonlyArray<string>; readonly errors: ReadonlyArray<string> } => {
  const found: Array<ParseError> = []
  const value: unknown = parse(text, found)
  const errors = recovered(text, found)
  const warnings = errors.slice(0, MAX_NAMED_ERRORS).map((error) => `${file}:${error} (recovered as VS Code does)`)
  const more = errors.length - MAX_NAMED_ERRORS
  return {
    value,
    errors,
    warnings:
      more > 0
        ? [...warnings, `${file}: ${more} more syntax error${more === 1 ? "" : "s"} recovered as VS Code does`]
        : warnings
  }
}

/** The devcontainer.json as read: its properties, and what its reading recovered from. */
export interface ReadConfig {
  readonly config: DevcontainerConfig
  readonly warnings: ReadonlyArray<string>
}

/** At most this many unknown properties are set aside; more is refused (a file of nothing else). */
const MAX_UNKNOWN = 50

/** `value` without the property at `path` (a copy; the rest shared). */
const without = (value: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
  const [key, ...rest] = path
  if (key === undefined || typeof value !== "object" || value === null) return value
  if (Array.isArray(value)) {
    return value.map((item, index) => (index === key ? without(item, rest) : item))
  }
  const copy: Record<PropertyKey, unknown> = { ...(value as Record<PropertyKey, unknown>) }
  if (rest.length === 0) delete copy[key]
  else copy[key] = without(copy[key], rest)
  return copy
}

/**
 * Decodes devcontainer.json as VS Code reads it: a property the spec does not
 * know (top level or nested) is ignored with a warning naming it, as VS Code
 * ignores it; every other problem (a wrong type, a missing value) fails. Each
 * unknown property found is taken out and the rest decoded again.
 */
const decodeLenient = (
  file: string,
  value: unknown
): Effect.Effect<{ readonly config: DevcontainerConfig; readonly unknown: ReadonlyArray<string> }, DevcontainerError> =>
  Effect.gen(function* () {
    const unknown: Array<string> = []
    let current = value
    for (;;) {
      const decoded = yield* Effect.result(
        Schema.decodeUnknownEffect(DevcontainerConfig)(current, { onExcessProperty: "error" })
      )
      if (decoded._tag === "Success") return { config: decoded.success, unknown }
      const found = firstProblem(decoded.failure.issue, [])
      if (found.detail !== "unknown property" || found.path.length === 0 || unknown.length >= MAX_UNKNOWN) {
        // The named error (a wrong type, a missing value, too many unknown properties).
        return { config: yield* decodeConfig(file, current, true), unknown }
      }
      unknown.push(propertyPath(found.path))
      current = without(current, found.path)
    }
  })

/**
 * The repository's devcontainer.json: JSONC as VS Code recovers it, then
 * every property checked against the spec (an unknown one is a warning and
 * ignored, as VS Code ignores it). What it recovers must be an object, as the
 * CLI requires ("must contain a JSON object literal").
 */
export const readDevcontainerText = (file: string, text: string): Effect.Effect<ReadConfig, DevcontainerError> => {
  const { value, warnings, errors } = parseJsoncAsVsCode(file, text)
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const why = errors[0] === undefined ? "" : `; invalid JSON at ${errors[0]}`
    return Effect.fail(new DevcontainerError({ file, detail: `expected a JSON object${why}` }))
  }
  return Effect.map(decodeLenient(file, value), ({ config, unknown }) => ({
    config,
    warnings: [
      ...warnings,
      ...unknown.map((property) => `${file}: ${property}: unknown property, ignored (as VS Code ignores it)`)
    ]
  }))
}

/** `readDevcontainerText`'s properties alone. */
export const parseDevcontainer = (file: string, text: string): Effect.Effect<DevcontainerConfig, DevcontainerError> =>
  Effect.map(readDevcontainerText(file, text), (read) => read.config)
