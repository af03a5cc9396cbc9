import { PullRequestNumber } from "@prbox/domain"
import { Schema } from "effect"

// Every `detail` is redacted (see Redact.ts) before an error is built, so these
// errors can be shown, logged and stored as they are.

export class InvalidPullRequestRef extends Schema.TaggedError<InvalidPullRequestRef>()("InvalidPullRequestRef", {
  /** The input with any credential in it masked. */
  input: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `cannot open ${JSON.stringify(this.input)}: ${this.reason}`
  }
}

export class PullRequestNotFound extends Schema.TaggedError<PullRequestNotFound>()("PullRequestNotFound", {
  operation: Schema.String,
  detail: Schema.String,
  repository: Schema.String,
  pullRequest: PullRequestNumber,
  headRef: Schema.String
}) {
  override get message(): string {
    return `pull request #${this.pullRequest} was not found in ${this.repository} (the remote has no ${this.headRef}); check the number and that the pull request still exists`
  }
}

export class RepositoryNotFound extends Schema.TaggedError<RepositoryNotFound>()("RepositoryNotFound", {
  operation: Schema.String,
  detail: Schema.String,
  remoteUrl: Schema.String
}) {
  override get message(): string {
    return `repository ${this.remoteUrl} was not found or access was denied; check the URL and that your git credential helper or ssh-agent can read it (${this.detail})`
  }
}

export class NetworkUnreachable extends Schema.TaggedError<NetworkUnreachable>()("NetworkUnreachable", {
  operation: Schema.String,
  detail: Schema.String,
  remoteUrl: Schema.String
}) {
  override get message(): string {
    return `cannot reach ${this.remoteUrl}; check your network, VPN or proxy and retry (${this.detail})`
  }
}

export class MirrorCorrupt extends Schema.TaggedError<MirrorCorrupt>()("MirrorCorrupt", {
  operation: Schema.String,
  detail: Schema.String,
  mirrorPath: Schema.String
}) {
  override get message(): string {
    return `the mirror at ${this.mirrorPath} is corrupt; delete it and retry (${this.detail})`
  }
}

/** An argument was refused before any git command ran (credentials in a URL, an unsafe name). */
export class UnsafeArgument extends Schema.TaggedError<UnsafeArgument>()("UnsafeArgument", {
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.operation}: ${this.detail}`
  }
}

export class GitCommandFailed extends Schema.TaggedError<GitCommandFailed>()("GitCommandFailed", {
  operation: Schema.String,
  detail: Schema.String,
  /** Null when git could not be started at all. */
  exitCode: Schema.NullOr(Schema.Int)
}) {
  override get message(): string {
    const status = this.exitCode === null ? "could not run" : `exited with ${this.exitCode}`
    return `${this.operation} ${status}: ${this.detail}`
  }
}

export class GitTimeout extends Schema.TaggedError<GitTimeout>()("GitTimeout", {
  operation: Schema.String,
  detail: Schema.String,
  timeoutMs: Schema.Int
}) {
  override get message(): string {
    return `${this.operation} did not finish within ${this.timeoutMs} ms and was stopped (${this.detail})`
  }
}

export class FileSystemFailed extends Schema.TaggedError<FileSystemFailed>()("FileSystemFailed", {
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.operation}: ${this.detail}`
  }
}

/**
 * `prbox push` refused a sandbox's commits, nothing pushed: the bundle is
 * not one ref of commits on top of the PR's head (`kind` says how), or the
 * branch moved under the lease.
 */
export class PushRejected extends Schema.TaggedError<PushRejected>()("PushRejected", {
  kind: Schema.Literals(["bundle", "malformed", "no-new-commits", "not-fast-forward", "lease-failed", "push-failed"]),
  detail: Schema.String
}) {
  override get message(): string {
    return this.detail
  }
}

/** What fetching a pull request can fail with. */
export type FetchError =
  | UnsafeArgument
  | PullRequestNotFound
  | RepositoryNotFound
  | NetworkUnreachable
  | MirrorCorrupt
  | GitCommandFailed
  | GitTimeout
  | FileSystemFailed

/** What building a workspace from a mirror can fail with. */
export type WorkspaceError = UnsafeArgument | MirrorCorrupt | GitCommandFailed | GitTimeout | FileSystemFailed
