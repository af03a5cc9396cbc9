/** What a create refuses before any container: the PR reference and what git and the hosting service say of it. */
import { Schema } from "effect"

/** The PR reference could not be understood; the reason is safe to show. */
export class InvalidPullRequestInput extends Schema.TaggedError<InvalidPullRequestInput>()("InvalidPullRequestInput", {
  reason: Schema.String
}) {
  override get message(): string {
    return this.reason
  }
}

/**
 * The hosting service answered that the pull request does not exist (and git
 * found no ref of it either): `detail` is the service's answer.
 */
export class PullRequestMissing extends Schema.TaggedError<PullRequestMissing>()("PullRequestMissing", {
  /** `o/r#12`. */
  pullRequest: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.pullRequest} was not found: the hosting service says ${JSON.stringify(this.detail)}; check the number`
  }
}

/**
 * The hosting service could not name a pull request's source branch (no
 * credentials, unreachable, refused): Bitbucket Cloud and CodeCommit publish
 * no pull request refs over git, so the open needs it or `--ref`.
 */
export class PullRequestUnresolved extends Schema.TaggedError<PullRequestUnresolved>()("PullRequestUnresolved", {
  pullRequest: Schema.String,
  reason: Schema.String,
  /** What the user can set so that the service answers. */
  configure: Schema.optionalKey(Schema.String)
}) {
  override get message(): string {
    const configure = this.configure === undefined ? "" : `; ${this.configure}`
    return `cannot ask the hosting service for ${this.pullRequest}'s source branch (${this.reason})${configure}; or pass --ref <source branch>`
  }
}
