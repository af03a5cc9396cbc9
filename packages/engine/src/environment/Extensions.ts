import { Context, Effect, Layer } from "effect"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import type { RuntimeError } from "../Errors.ts"

const INSTALL_TIMEOUT_MS = 3 * 60_000
const INSTALL_OUTPUT_BYTES = 64 * 1024
const REASON_CHARS = 200

/** One extension of a devcontainer's `customizations.vscode.extensions`, as it ended. */
export interface ExtensionInstall {
  readonly id: string
  readonly ok: boolean
  /** Why it failed: short and safe to show (one line of code-server's answer, never its log). */
  readonly detail: string | null
}

export interface InstallExtensionsInput {
  readonly containerId: string
  /** The argv prefix that runs code-server in the container (e.g. `["code-server"]`). */
  readonly codeServer: ReadonlyArray<string>
  /** `uid:gid` of the sandbox user. */
  readonly user: string
  readonly cwd: string
  /** HOME/XDG_* of the running code-server, so the extensions land where it looks. */
  readonly env: Readonly<Record<string, string>>
  readonly ids: ReadonlyArray<string>
  readonly progress: (line: string) => Effect.Effect<void>
}

/**
 * `publisher.name` as VS Code spells an extension id (its own pattern), with
 * an optional `@version`. The id is PR content: this is also what keeps it
 * from being read as an option (it cannot start with `-`).
 */
const EXTENSION_ID = /^[a-z0-9][a-z0-9-]*\.[a-z0-9][a-z0-9-]*(@\d+\.\d+\.\d+(-[0-9a-z.-]+)?)?$/i

export const isExtensionId = (id: string): boolean => EXTENSION_ID.test(id)

/** An id as it may appear in a message: one line, bounded, quoted when it is not a plain id. */
const shown = (id: string): string => (isExtensionId(id) ? id : JSON.stringify(id.slice(0, 80)))

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escapes are what is removed
const ESCAPES = /\u001b\[[0-9;]*[A-Za-z]|[\u0000-\u0008\u000b-\u001f\u007f]/g

/**
 * The line of code-server's output that says why an install failed (e.g.
 * "Extension 'x.y' not found."), cut short; never the whole output.
 */
export const failureReason = (output: string): string => {
  const lines = output
    .replace(ESCAPES, "")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && line !== "Installing extensions...")
  const line =
    lines.find(
      (l) => /not found|not compatible|cannot|can't|unable|error/i.test(l) && !/^Failed Installing/i.test(l)
    ) ??
    lines.find((l) => /^Failed Installing/i.test(l)) ??
    lines.at(-1) ??
    "no output"
  return line.length > REASON_CHARS ? `${line.slice(0, REASON_CHARS - 1)}…` : line
}

/** How an install ended, as a line of the sandbox's log. */
export const outcomeLine = (outcome: ExtensionInstall): string =>
  outcome.ok
    ? `extension ${outcome.id} installed`
    : `extension ${shown(outcome.id)} could not be installed: ${outcome.detail ?? "unknown reason"}`

/** code-server says so on stdout for a fresh install and for one already there. */
const INSTALLED = /was successfully installed|is already installed/

/**
 * Installs each extension with code-server's own `--install-extension`, run
 * in the container as the sandbox user, one exec per id (so a failure names
 * its id), one after another. A failed extension is reported and the next one
 * still installs; only the runtime itself failing fails the whole. Each
 * outcome is a progress line.
 */
export const makeInstallExtensions = Effect.gen(function* () {
  const runtime = yield* ContainerRuntime

  const installOne = (input: InstallExtensionsInput, id: string): Effect.Effect<ExtensionInstall, RuntimeError> =>
    Effect.gen(function* () {
      if (!isExtensionId(id)) return { id, ok: false, detail: "not an extension id (publisher.name)" }
      const result = yield* runtime.exec(input.containerId, [...input.codeServer, "--install-extension", id], {
        user: input.user,
        cwd: input.cwd,
        env: input.env,
        timeoutMs: INSTALL_TIMEOUT_MS,
        maxOutputBytes: INSTALL_OUTPUT_BYTES
      })
      if (result.timedOut) return { id, ok: false, detail: `no answer within ${INSTALL_TIMEOUT_MS / 1000} s` }
      const output = result.stdout + result.stderr
      if (result.exitCode === 0 && INSTALLED.test(output)) return { id, ok: true, detail: null }
      return { id, ok: false, detail: failureReason(output) }
    })

  return Effect.fn("Extensions.install")(function* (input: InstallExtensionsInput) {
    return yield* Effect.forEach(input.ids, (id) =>
      Effect.tap(installOne(input, id), (outcome) => input.progress(outcomeLine(outcome)))
    )
  })
})

export class InstallExtensions extends Context.Service<
  InstallExtensions,
  Effect.Success<typeof makeInstallExtensions>
>()("prbox/engine/InstallExtensions") {
  static readonly layer = Layer.effect(InstallExtensions, makeInstallExtensions)
}
