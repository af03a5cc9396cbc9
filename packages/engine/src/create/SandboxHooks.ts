import type { Sandbox } from "@prbox/domain"
import { Context, Effect, Layer } from "effect"
import { sandboxUrl } from "../CodeServerSpec.ts"
import type { PrboxConfig } from "../Config.ts"
import { type HookContext, type HookName, Hooks } from "../Hooks.ts"
import { Lifecycle } from "../Lifecycle.ts"

const hookContext = (row: Sandbox): HookContext => ({
  sandboxId: row.id,
  pullRequest: `${row.host ?? ""}/${row.repository}#${row.pullRequest}`,
  url: sandboxUrl(row.hostPort),
  port: row.hostPort === null ? "" : String(row.hostPort),
  workspace: row.workspacePath ?? ""
})

/** Runs the user's hook for a sandbox, if configured; a failing hook is reported in the log, never fatal. */
const make = Effect.gen(function* () {
  const hooks = yield* Hooks
  const { progress } = yield* Lifecycle
  return (row: Sandbox, hook: HookName, config: PrboxConfig): Effect.Effect<void> => {
    const argv = config.hooks[hook]
    if (argv === undefined) return Effect.void
    return hooks
      .run(hook, argv, hookContext(row))
      .pipe(Effect.catch((error) => progress(row, error.message).pipe(Effect.ignore)))
  }
})

export class SandboxHooks extends Context.Service<SandboxHooks, Effect.Success<typeof make>>()(
  "prbox/engine/SandboxHooks"
) {
  static readonly layer = Layer.effect(SandboxHooks, make)
}
