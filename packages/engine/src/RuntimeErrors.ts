/** What the runtime port (ContainerRuntime.ts) fails with besides RuntimeError. */
import { Schema } from "effect"

/**
 * The host port a container was created with is held by something else, so
 * it cannot start there. Never leaves the engine: the start moves the sandbox
 * to a new container on a new port.
 */
export class PortTaken extends Schema.TaggedError<PortTaken>()("PortTaken", { detail: Schema.String }) {
  override get message(): string {
    return this.detail
  }
}

/** The container stopped as soon as it started (its command exited): nothing will answer. */
export class ContainerExited extends Schema.TaggedError<ContainerExited>()("ContainerExited", {
  exitCode: Schema.Number
}) {
  override get message(): string {
    return `the container exited at start (exit code ${this.exitCode})`
  }
}

/**
 * An image build failed: the Dockerfile's step and the engine's message
 * ("Step 3/5 : RUN npm ci: The command ... returned a non-zero code: 1"), or
 * a Dockerfile or context that cannot be built. Never leaves the engine: the
 * worker records it on the row.
 */
export class ImageBuildFailed extends Schema.TaggedError<ImageBuildFailed>()("ImageBuildFailed", {
  detail: Schema.String
}) {
  override get message(): string {
    return this.detail
  }
}

/** Nothing listens on that port inside the sandbox (a preview answers 404). */
export class PortClosed extends Schema.TaggedError<PortClosed>()("PortClosed", {
  id: Schema.String,
  port: Schema.Number
}) {
  override get message(): string {
    return `nothing listens on port ${this.port} in sandbox ${this.id}`
  }
}

/**
 * The sandbox's ports cannot be reached: its container was made before
 * previews (no relay port), or the in-container relay could not start. The
 * reason says what to do.
 */
export class PreviewUnavailable extends Schema.TaggedError<PreviewUnavailable>()("PreviewUnavailable", {
  id: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `previews of sandbox ${this.id} are unavailable: ${this.reason}`
  }
}

/**
 * A command's working folder did not resolve inside the folder it must stay
 * in (`CommandOptions.within`), so the command never started; `exitCode` is
 * `prbox_resolve`'s, or CWD_NOT_FOLDER. Never leaves the engine: the caller
 * turns it into InvalidPath.
 */
export class CwdRefused extends Schema.TaggedError<CwdRefused>()("CwdRefused", { exitCode: Schema.Number }) {}
