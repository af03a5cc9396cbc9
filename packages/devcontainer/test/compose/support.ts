import { Effect } from "effect"
import {
  type CheckedCompose,
  type ComposeCheckInput,
  checkComposeProject,
  type DevcontainerError
} from "../../src/index.ts"

// The Compose check's tests: a rendered project as Compose prints it (paths
// absolute under the repository's copy), checked as an untrusted, a trusted
// or a refusing user's open would check it.

export const root = "/home/me/.local/state/prbox/sandboxes/s1/workspace"
export const file = ".devcontainer/devcontainer.json"
export const hint =
  'the repository is not trusted: adding "github.com/someone/fork" to trustedRepositories in your config.json honours it'

export type Mode = "untrusted" | "trusted" | "refuse"

export const inputFor = (mode: Mode, overrides: Partial<ComposeCheckInput> = {}): ComposeCheckInput => ({
  file,
  service: "app",
  runServices: undefined,
  repositoryRoot: root,
  trusted: mode === "trusted",
  untrustedWidening: mode === "refuse" ? "refuse" : "omit",
  withheld: mode === "trusted" ? null : hint,
  ...overrides
})

/** A project whose `app` service is `app` and whose `db` is a plain database. */
export const projectWith = (app: Record<string, unknown>, rest: Record<string, unknown> = {}) => ({
  services: { app: { image: "app:1", ...app }, db: { image: "postgres:16" } },
  ...rest
})

export const check = (
  rendered: unknown,
  mode: Mode,
  overrides: Partial<ComposeCheckInput> = {}
): Effect.Effect<
  | { readonly _tag: "Success"; readonly success: CheckedCompose }
  | { readonly _tag: "Failure"; readonly failure: DevcontainerError }
> =>
  Effect.map(Effect.result(checkComposeProject(rendered, inputFor(mode, overrides))), (result) =>
    result._tag === "Success"
      ? { _tag: "Success" as const, success: result.success }
      : { _tag: "Failure" as const, failure: result.failure }
  )
