import { execFile } from "node:child_process"
import { Context, Effect, Layer, Schema } from "effect"

export type HookName = "onSandboxReady" | "onSandboxDestroy"

/** What a hook learns about its sandbox, as `PRBOX_*` environment variables. */
export interface HookContext {
  readonly sandboxId: string
  readonly pullRequest: string
  readonly url: string
  readonly port: string
  readonly workspace: string
}

export class HookFailed extends Schema.TaggedError<HookFailed>()("HookFailed", {
  hook: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.hook} hook failed: ${this.detail}`
  }
}

export interface HooksShape {
  readonly run: (hook: HookName, argv: ReadonlyArray<string>, context: HookContext) => Effect.Effect<void, HookFailed>
}

/** Host commands the user configured around a sandbox's life. */
export class Hooks extends Context.Service<Hooks, HooksShape>()("prbox/engine/Hooks") {
  static readonly layer = Layer.succeed(
    Hooks,
    Hooks.of({
      run: Effect.fn("Hooks.run")(function* (hook, argv, context) {
        const [command, ...args] = argv
        if (command === undefined) return
        yield* Effect.callback<void, HookFailed>((resume) => {
          const child = execFile(
            command,
            args,
            {
              timeout: 60_000,
              env: {
                ...process.env,
                PRBOX_SANDBOX_ID: context.sandboxId,
                PRBOX_PR: context.pullRequest,
                PRBOX_URL: context.url,
                PRBOX_PORT: context.port,
                PRBOX_WORKSPACE: context.workspace
              }
            },
            (error) =>
              resume(
                error === null
                  ? Effect.void
                  : Effect.fail(new HookFailed({ hook, detail: error.killed ? "timed out" : `exit ${error.code}` }))
              )
          )
          return Effect.sync(() => child.kill())
        })
      })
    })
  )
}
