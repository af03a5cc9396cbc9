import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { locateDevcontainer } from "../src/index.ts"
import { repoFiles } from "./support.ts"

const main = ".devcontainer/devcontainer.json"
const root = ".devcontainer.json"
const named = (name: string) => `.devcontainer/${name}/devcontainer.json`

// Each file's text is its own path, so a row's answer names the file that won.
const tree = (...paths: ReadonlyArray<string>) =>
  repoFiles(Object.fromEntries([...paths, "README.md", ".devcontainer/Dockerfile"].map((path) => [path, path])))

interface Row {
  readonly name: string
  readonly files: ReadonlyArray<string>
  readonly wanted?: string
  /** The path found, undefined for none, or the error message. */
  readonly expected: string | undefined | { readonly error: string }
}

const rows: ReadonlyArray<Row> = [
  { name: "none", files: [], expected: undefined },
  { name: ".devcontainer/devcontainer.json", files: [main], expected: main },
  { name: ".devcontainer.json", files: [root], expected: root },
  { name: "the folder's file wins over the root one", files: [root, main], expected: main },
  { name: "a single named one", files: [named("python")], expected: named("python") },
  { name: "the first two win over named ones", files: [root, named("a"), named("b")], expected: root },
  {
    name: "several named ones without a choice",
    files: [named("web"), named("api")],
    expected: {
      error:
        ".devcontainer/<name>/devcontainer.json: the repository has several (api, web): pass --devcontainer <name> to choose one"
    }
  },
  {
    name: "--devcontainer picks a named one",
    files: [main, named("web"), named("api")],
    wanted: "api",
    expected: named("api")
  },
  {
    name: "--devcontainer with a name that is not there",
    files: [main, named("web"), named("api")],
    wanted: "docs",
    expected: { error: ".devcontainer/docs/devcontainer.json: not found; the repository has: api, web" }
  },
  {
    name: "--devcontainer in a repository with no named ones",
    files: [main],
    wanted: "web",
    expected: {
      error:
        ".devcontainer/web/devcontainer.json: not found: the repository has no .devcontainer/<name>/devcontainer.json"
    }
  },
  {
    name: "a folder without devcontainer.json is not a config",
    files: [named("web"), ".devcontainer/scripts/setup.sh"],
    expected: named("web")
  },
  { name: "deeper folders are not looked at", files: [".devcontainer/a/b/devcontainer.json"], expected: undefined }
]

describe("locateDevcontainer", () => {
  for (const row of rows) {
    it.effect(row.name, () =>
      Effect.gen(function* () {
        const found = yield* Effect.result(locateDevcontainer(tree(...row.files), row.wanted))
        if (typeof row.expected === "object") {
          assert.strictEqual(found._tag, "Failure")
          if (found._tag === "Failure") assert.strictEqual(found.failure.message, row.expected.error)
          return
        }
        assert.strictEqual(found._tag, "Success")
        if (found._tag === "Success") {
          assert.deepStrictEqual(
            found.success,
            row.expected === undefined ? undefined : { path: row.expected, text: row.expected }
          )
        }
      })
    )
  }
})
