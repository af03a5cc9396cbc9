import { Effect, Layer } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import { hostErrorCode } from "../Errors.ts"
import { HookFailed, Hooks } from "../Hooks.ts"
import * as NodePlatform from "./NodePlatform.ts"

const HOOK_TIMEOUT = "60 seconds"

/** Runs hooks as host processes, with the sandbox in `PRBOX_*` variables on top of the daemon's environment. */
export const layer = Layer.effect(
  Hooks,
  Effect.gen(function* () {
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    return Hooks.of({
      run: Effect.fn("Hooks.run")(function* (hook, argv, context) {
        const [command, ...args] = argv
        if (command === undefined) return
        const child = ChildProcess.make(command, args, {
          env: {
            PRBOX_SANDBOX_ID: context.sandboxId,
            PRBOX_PR: context.pullRequest,
            PRBOX_URL: context.url,
            PRBOX_PORT: context.port,
            PRBOX_WORKSPACE: context.workspace
          },
          extendEnv: true,
          stdin: "ignore"
        })
        const exitCode = yield* spawner.exitCode(child).pipe(
          Effect.mapError((error) => new HookFailed({ hook, detail: `could not run (${hostErrorCode(error)})` })),
          Effect.timeoutOrElse({
            duration: HOOK_TIMEOUT,
            orElse: () => Effect.fail(new HookFailed({ hook, detail: "timed out" }))
          })
        )
        if (exitCode !== 0) return yield* new HookFailed({ hook, detail: `exit ${exitCode}` })
      })
    })
  })
).pipe(Layer.provide(NodePlatform.layer))
