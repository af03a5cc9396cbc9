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

/** JSON with comments and trailing commas, as devcontainer.json is written; the first syntax error with its line:column. */
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

/** The repository's devcontainer.json: JSONC, then every property checked against the spec. */
export const parseDevcontainer = (file: string, text: string): Effect.Effect<DevcontainerConfig, DevcontainerError> =>
  Effect.flatMap(parseJsonc(file, text), (value) => decodeConfig(file, value, true))
