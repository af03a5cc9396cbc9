import {
  GitCommandFailed,
  MirrorCorrupt,
  NetworkUnreachable,
  PullRequestNotFound,
  RepositoryNotFound
} from "./Errors.ts"
import type { GitOutput } from "./Git.ts"
import type { PullRequestRef } from "./PullRequestRef.ts"
import { redactCredentials, stderrTail } from "./Redact.ts"

// Matched against git's stderr under LC_ALL=C (see NodeGit.ts), in this
// order: an unreachable host also prints "Could not read from remote
// repository", and a corrupt mirror must not pass for a missing remote.

const network = [
  /could not resolve host/i,
  /could not resolve hostname/i,
  /temporary failure in name resolution/i,
  /name or service not known/i,
  /failed to connect to/i,
  /couldn't connect to server/i,
  /connection refused/i,
  /connection timed out/i,
  /operation timed out/i,
  /connection reset by peer/i,
  /network is unreachable/i,
  /no route to host/i
]

const pullRequestMissing = [/couldn't find remote ref/i]

const corrupt = [
  /not a git repository/i,
  /bad object/i,
  /did not send all necessary objects/i,
  /corrupt/i,
  /unable to unpack/i,
  /inflate: data stream error/i,
  /packfile .* cannot be accessed/i,
  /object file .* is empty/i,
  /bad config/i,
  /invalid sha1 pointer/i
]

const repositoryMissing = [
  /does not appear to be a git repository/i,
  // `git clone` of a local path that is not there
  /repository '.*' does not exist/i,
  /repository .*not found/i,
  /could not read from remote repository/i,
  /authentication failed/i,
  /permission denied/i,
  /access denied/i,
  /could not read (username|password)/i,
  /terminal prompts disabled/i,
  /returned error: 40[134]/i,
  /http 40[134]/i
]

const matches = (patterns: ReadonlyArray<RegExp>, text: string): boolean =>
  patterns.some((pattern) => pattern.test(text))

/** Why `git fetch` of a pull request into a mirror (or the clone that makes it) failed, for the user to act on. */
export const classifyFetchFailure = (
  operation: string,
  output: GitOutput,
  ref: PullRequestRef,
  mirrorPath: string
): NetworkUnreachable | PullRequestNotFound | MirrorCorrupt | RepositoryNotFound | GitCommandFailed => {
  const detail = stderrTail(output.stderr)
  const remoteUrl = redactCredentials(ref.remoteUrl)
  // "remote: ..." lines describe the server's repository, not our mirror.
  const local = output.stderr
    .split("\n")
    .filter((line) => !line.startsWith("remote:"))
    .join("\n")
  if (matches(network, output.stderr)) return new NetworkUnreachable({ operation, detail, remoteUrl })
  if (matches(pullRequestMissing, output.stderr)) {
    return new PullRequestNotFound({
      operation,
      detail,
      repository: ref.repository,
      pullRequest: ref.pullRequest,
      headRef: ref.headRef
    })
  }
  if (matches(corrupt, local)) return new MirrorCorrupt({ operation, detail, mirrorPath })
  if (matches(repositoryMissing, output.stderr)) return new RepositoryNotFound({ operation, detail, remoteUrl })
  return new GitCommandFailed({ operation, detail, exitCode: output.exitCode })
}

/** Why a local git command on a mirror failed: a mirror git cannot read is corrupt. */
export const classifyMirrorFailure = (
  operation: string,
  output: GitOutput,
  mirrorPath: string
): MirrorCorrupt | GitCommandFailed => {
  const detail = stderrTail(output.stderr)
  return matches(corrupt, output.stderr) || matches(repositoryMissing, output.stderr)
    ? new MirrorCorrupt({ operation, detail, mirrorPath })
    : new GitCommandFailed({ operation, detail, exitCode: output.exitCode })
}
