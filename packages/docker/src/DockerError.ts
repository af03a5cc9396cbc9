import { Schema } from "effect"

/**
 * Every error names the operation that failed (e.g. "container.stop") and a
 * detail taken from the engine's answer. Details never carry environment
 * values: container and exec environments may hold passwords.
 */
const fields = {
  operation: Schema.String,
  detail: Schema.String
}

export type ErrorFields = { readonly operation: string; readonly detail: string }

/** The container does not exist (404). */
export class ContainerNotFound extends Schema.TaggedError<ContainerNotFound>()("ContainerNotFound", fields) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/** Start of a container that already runs (304). */
export class ContainerAlreadyStarted extends Schema.TaggedError<ContainerAlreadyStarted>()(
  "ContainerAlreadyStarted",
  fields
) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/** Stop of a container that is not running (304). */
export class ContainerAlreadyStopped extends Schema.TaggedError<ContainerAlreadyStopped>()(
  "ContainerAlreadyStopped",
  fields
) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/** A container with the requested name already exists (409 on create). */
export class NameConflict extends Schema.TaggedError<NameConflict>()("NameConflict", fields) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/**
 * A bind mount's source folder does not exist where the engine runs (the
 * engine answers 400 "bind source path does not exist"): on an engine that
 * cannot see this machine's files, a folder of this machine.
 */
export class BindSourceMissing extends Schema.TaggedError<BindSourceMissing>()("BindSourceMissing", fields) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/**
 * A start found the container's host port held by another container or
 * process (the engine answers 500 "port is already allocated" or "address
 * already in use"). The binding is fixed at create: only a new container can
 * publish elsewhere.
 */
export class PortInUse extends Schema.TaggedError<PortInUse>()("PortInUse", fields) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/**
 * Nothing listens on the port a dial through the engine's loopback named
 * (the engine host refused the connection): the engine itself answered.
 */
export class ConnectionRefused extends Schema.TaggedError<ConnectionRefused>()("ConnectionRefused", fields) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/** The engine cannot be reached: socket missing or refused, permission denied, or no answer in time. */
export class EngineUnavailable extends Schema.TaggedError<EngineUnavailable>()("EngineUnavailable", fields) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/**
 * The engine's SSH server accepted none of the keys offered (a wrong user, or
 * no authorized key). Not retried: only the user can fix it.
 */
export class EngineAuthFailed extends Schema.TaggedError<EngineAuthFailed>()("EngineAuthFailed", fields) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/**
 * The engine host's SSH key is not in known_hosts, or is not the key recorded
 * there: the connection is refused before anything is sent. The detail says
 * how to add the key, or that it changed.
 */
export class EngineHostUntrusted extends Schema.TaggedError<EngineHostUntrusted>()("EngineHostUntrusted", fields) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/** Listing containers failed; callers must treat the answer as unknown, never as empty. */
export class EnumerationError extends Schema.TaggedError<EnumerationError>()("EnumerationError", fields) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

export class ImagePullFailed extends Schema.TaggedError<ImagePullFailed>()("ImagePullFailed", fields) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/**
 * A build failed: a step of the Dockerfile (`step`, "Step 3/5 : RUN npm ci"),
 * a Dockerfile the engine refused, or a context that cannot be sent.
 */
export class ImageBuildFailed extends Schema.TaggedError<ImageBuildFailed>()("ImageBuildFailed", {
  ...fields,
  step: Schema.optional(Schema.String)
}) {
  override get message() {
    return `${this.operation}: ${this.step === undefined ? "" : `${this.step}: `}${this.detail}`
  }
}

/** The image a container was created from does not exist locally (404 on create). */
export class ImageNotFound extends Schema.TaggedError<ImageNotFound>()("ImageNotFound", fields) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/** An image a container (running or not) is made from: it stays until that container is gone. */
export class ImageInUse extends Schema.TaggedError<ImageInUse>()("ImageInUse", fields) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/** The exec'd command outlived its deadline. Docker cannot kill an exec, so it may still be running. */
export class ExecTimeout extends Schema.TaggedError<ExecTimeout>()("ExecTimeout", {
  ...fields,
  timeoutMs: Schema.Number
}) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/** A folder of this machine to send to the engine could not be read (`detail` names the file and the reason). */
export class FolderUnreadable extends Schema.TaggedError<FolderUnreadable>()("FolderUnreadable", fields) {
  override get message() {
    return `${this.operation}: ${this.detail}`
  }
}

/** Any other answer of the engine; `statusCode` is absent when the failure was not an HTTP answer. */
export class DockerEngineError extends Schema.TaggedError<DockerEngineError>()("DockerEngineError", {
  ...fields,
  statusCode: Schema.optional(Schema.Number)
}) {
  override get message() {
    return `${this.operation}: ${this.statusCode === undefined ? "" : `(${this.statusCode}) `}${this.detail}`
  }
}

export type DockerError =
  | ContainerNotFound
  | ContainerAlreadyStarted
  | ContainerAlreadyStopped
  | NameConflict
  | BindSourceMissing
  | PortInUse
  | ConnectionRefused
  | EngineUnavailable
  | EngineAuthFailed
  | EngineHostUntrusted
  | EnumerationError
  | ImagePullFailed
  | ImageBuildFailed
  | ImageNotFound
  | ExecTimeout
  | FolderUnreadable
  | DockerEngineError
