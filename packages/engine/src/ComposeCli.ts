/**
 * The user's own Docker Compose, as prbox runs it for a Compose
 * devcontainer: `docker compose` where the plugin is, else
 * `docker-compose` (as the devcontainers CLI picks), always with a
 * scrubbed environment (the program's PATH and the engine's address, no
 * other host variable: nothing of the host is interpolated into a
 * container) and on the local engine only.
 */
import { Context, type Effect, Schema } from "effect"

/** Compose could not run, or failed; `detail` is the end of its output (no secret goes into its arguments). */
export class ComposeFailed extends Schema.TaggedError<ComposeFailed>()("ComposeFailed", {
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.operation}: ${this.detail}`
  }
}

/** One Compose project of a sandbox: `prbox-<id>` and the folder it is read in. */
export interface ComposeProjectRef {
  /** Compose's `-p`. */
  readonly name: string
  /** Compose's `--project-directory`: relative paths and `.env` are read there. */
  readonly directory: string
}

export interface ComposeCliShape {
  /** Which Compose runs here (`docker compose` or `docker-compose`), for messages; fails naming both when neither. */
  readonly version: Effect.Effect<string, ComposeFailed>
  /** `config`: the files rendered into one configuration (YAML), variables substituted from the project's `.env` only. */
  readonly render: (project: ComposeProjectRef, files: ReadonlyArray<string>) => Effect.Effect<string, ComposeFailed>
  /**
   * `up --no-build --no-start`: the project's networks, volumes and the
   * containers of `services` (with what they depend on) made, none started.
   * Lines of Compose's output go to `onProgress`.
   */
  readonly create: (
    project: ComposeProjectRef,
    file: string,
    services: ReadonlyArray<string>,
    onProgress: (line: string) => Effect.Effect<void>
  ) => Effect.Effect<void, ComposeFailed>
}

export class ComposeCli extends Context.Service<ComposeCli, ComposeCliShape>()("prbox/engine/ComposeCli") {}
