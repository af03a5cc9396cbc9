import { PushRejected } from "./Errors.ts"
import type { GitOutput } from "./Git.ts"
import { stderrTail } from "./Redact.ts"
import type { PushCommit } from "./Workspaces.ts"

/** Files listed per commit; past it the list says how many more. */
export const FILES_PER_COMMIT = 100

/**
 * `git log --name-only --format=%x1e%H%x1f%an <%ae>%x1f%s`: each commit with
 * its author, subject and files. The text is the sandbox's: the caller
 * strips control sequences before printing it.
 */
export const parsePushLog = (stdout: string): Array<PushCommit> =>
  stdout
    .split("\x1e")
    .filter((chunk) => chunk.trim() !== "")
    .map((chunk) => {
      const [first = "", ...rest] = chunk.split("\n")
      const [commit = "", author = "", subject = ""] = first.split("\x1f")
      const all = rest.filter((line) => line !== "")
      const files =
        all.length > FILES_PER_COMMIT
          ? [...all.slice(0, FILES_PER_COMMIT), `… and ${all.length - FILES_PER_COMMIT} more`]
          : all
      return { commit, author, subject, files }
    })

/**
 * What `git push --porcelain --force-with-lease` said: pushed, the lease
 * failed (the branch is not where the PR's head was), or another failure
 * (its stderr redacted).
 */
export const pushOutcome = (output: GitOutput): "pushed" | PushRejected => {
  if (output.exitCode === 0) return "pushed"
  const rejected = output.stdout.split("\n").find((line) => line.startsWith("!\t"))
  if (rejected?.includes("stale info") === true) {
    return new PushRejected({
      kind: "lease-failed",
      detail:
        "the PR's branch is no longer at the head the sandbox started from (someone pushed meanwhile); nothing was pushed: run `prbox update`, then push again"
    })
  }
  const reason = rejected?.split("\t").at(-1) ?? stderrTail(output.stderr, 3, 300)
  return new PushRejected({ kind: "push-failed", detail: `the push was refused: ${reason || "git gave no reason"}` })
}
