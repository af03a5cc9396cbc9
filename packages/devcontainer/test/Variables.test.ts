import { createHash } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { devcontainerIdFromDigest, devcontainerIdInput } from "../src/index.ts"
import { substitute, type VariableContext } from "../src/Variables.ts"

// The spec's `${…}` variables, each as prbox resolves it. PR content never
// reads the host: `${localEnv:…}` is its default even when the host has the variable.

const devcontainerId = `${"0".repeat(20)}abcdefghijklmnopqrstuv0123456789`

const known: VariableContext = {
  containerWorkspaceFolder: "/workspaces/api",
  workspaceBasename: "api",
  containerEnv: { PATH: "/usr/bin", EMPTY: "" },
  devcontainerId
}
const early: VariableContext = { containerWorkspaceFolder: "/srv/app/", workspaceBasename: "api" }

const rows: ReadonlyArray<{
  readonly value: string
  readonly context: VariableContext
  readonly expected: string
  readonly warned: boolean
}> = [
  { value: `\${localWorkspaceFolderBasename}`, context: known, expected: "api", warned: false },
  { value: `\${containerWorkspaceFolder}/src`, context: known, expected: "/workspaces/api/src", warned: false },
  { value: `\${containerWorkspaceFolderBasename}`, context: known, expected: "api", warned: false },
  { value: `\${containerWorkspaceFolderBasename}`, context: early, expected: "app", warned: false },
  { value: `cache-\${devcontainerId}`, context: known, expected: `cache-${devcontainerId}`, warned: false },
  // Before the sandbox exists it stays for the later pass, as the CLI leaves it before its id labels.
  { value: `cache-\${devcontainerId}`, context: early, expected: `cache-\${devcontainerId}`, warned: false },
  { value: `\${containerEnv:PATH}:/opt`, context: known, expected: "/usr/bin:/opt", warned: false },
  { value: `\${containerEnv:MISSING:fallback}`, context: known, expected: "fallback", warned: false },
  { value: `\${containerEnv:EMPTY:fallback}`, context: known, expected: "", warned: false },
  { value: `\${containerEnv:PATH}`, context: early, expected: `\${containerEnv:PATH}`, warned: false },
  { value: `\${localEnv:PRBOX_TEST_SECRET}`, context: known, expected: "", warned: true },
  { value: `\${localEnv:PRBOX_TEST_SECRET:safe}`, context: known, expected: "safe", warned: true },
  { value: `\${env:PRBOX_TEST_SECRET:a:b}`, context: known, expected: "a:b", warned: true },
  { value: `\${localWorkspaceFolder}`, context: known, expected: `\${localWorkspaceFolder}`, warned: true },
  { value: `\${nonsense}`, context: known, expected: `\${nonsense}`, warned: true },
  {
    value: `a \${localWorkspaceFolderBasename} b \${devcontainerId}`,
    context: known,
    expected: `a api b ${devcontainerId}`,
    warned: false
  }
]

describe("variables", () => {
  it("each as prbox resolves it; the host's environment is never read", () => {
    process.env.PRBOX_TEST_SECRET = "from-the-host"
    try {
      for (const row of rows) {
        const warnings: Array<string> = []
        const got = substitute(row.value, row.context, "containerEnv.X", (warning) => warnings.push(warning))
        assert.strictEqual(got, row.expected, row.value)
        assert.strictEqual(warnings.length > 0, row.warned, `${row.value}: ${warnings.join("; ")}`)
        for (const warning of warnings) assert.notInclude(warning, "from-the-host")
      }
    } finally {
      delete process.env.PRBOX_TEST_SECRET
    }
  })

  it(`\${devcontainerId} is the CLI's: SHA-256 of the sorted id labels, base 32, 52 characters`, () => {
    const labels = { "dev.prbox.sandbox": "sbx_0123", "a.first": "x" }
    // The CLI's devcontainerIdForLabels, written out.
    const cli = BigInt(
      `0x${createHash("sha256")
        .update(Buffer.from(JSON.stringify(labels, Object.keys(labels).sort()), "utf-8"))
        .digest("hex")}`
    )
      .toString(32)
      .padStart(52, "0")
    const input = devcontainerIdInput(labels)
    assert.strictEqual(input, '{"a.first":"x","dev.prbox.sandbox":"sbx_0123"}')
    const id = devcontainerIdFromDigest(createHash("sha256").update(input).digest())
    assert.strictEqual(id, cli)
    assert.match(id, /^[0-9a-v]{52}$/)
    // A digest with leading zero bytes keeps its length.
    assert.strictEqual(devcontainerIdFromDigest(new Uint8Array(32)), "0".repeat(52))
  })
})
