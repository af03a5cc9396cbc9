import { Context, type Effect, Schema } from "effect"

export type HookName = "onSandboxReady" | "onSandboxDestroy"

/** What a hook learns about its sandbox, as `PRBOX_*` environment variables. */
export interface HookContext {
  readonly sandboxId: string
  readonly pullRequest: string
  readonly url: string
  readonly port: string
  readonly workspace: string
}

export interface HooksShape {
  readonly run: (hook: HookName, argv: ReadonlyArray<string>, context: HookContext) => Effect.Effect<void, HookFailed>
}

/** Host commands the user configured around a sandbox's life (node/NodeHooks.ts runs them). */
export class Hooks extends Context.Service<Hooks, HooksShape>()("prbox/engine/Hooks") {}

/** A user hook failed; it is logged, never fatal. */
export class HookFailed extends Schema.TaggedError<HookFailed>()("HookFailed", {
  hook: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.hook} hook failed: ${this.detail}`
  }
}
