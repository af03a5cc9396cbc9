import {
  GitCommandFailed,
  type GitOutput,
  type GitRun,
  GitTimeout,
  REPOSITORY_ENV,
  stderrTail,
  type WorkspaceError,
  type Workspaces,
  workspaceSteps
} from "@prbox/git"
import { Data, Effect } from "effect"
import type { ContainerRuntimeShape, ExecOutcome } from "../ContainerRuntime.ts"
import type { ExecTarget } from "../exec/ExecTarget.ts"
import { EXIT } from "../exec/FileScripts.ts"
import { type FirstOutcome, firstOutcome, firstThen } from "../RunFirst.ts"
import type { WorkspaceGit } from "./WorkspaceGit.ts"

/** Bound on one git command in the sandbox, as on the host (Workspaces' local timeout). */
const GIT_TIMEOUT_MS = 5 * 60_000
/** Git's answers here are heads, ref lists and `status` of the workspace; past this an answer is refused, never cut. */
const GIT_OUTPUT_BYTES = 16 * 1024 * 1024

/** The sandbox's image has no `git`. */
export class GitMissing extends Data.TaggedError("GitMissing") {
  override get message(): string {
    return "the sandbox's image has no git; `prbox update` runs git inside the sandbox"
  }
}

/** git where the image has it, with nothing in the container's environment pointing it at another repository. */
const GIT_SH = `command -v git >/dev/null 2>&1 || exit ${EXIT.noGit}
unset ${REPOSITORY_ENV.join(" ")}
exec git "$@"
`

/**
 * A prebuilt workspace moved to the PR in one exec: the
 * bundle on stdin unbundled (when there is one), `origin` set to the remote
 * the row records (the prebuild's `.git/config` is the base branch's steps'
 * to have written), the PR's commit checked out as the branch over what the
 * create-time steps changed. Arguments: workspace, "bundle" or "none",
 * remote URL, branch, commit.
 * The workspace is a `cp -a` copy of the prebuild's: its files keep their
 * sizes and mtimes, not their inodes or ctimes, so git compares only the
 * first two (`core.checkStat=minimal`) rather than read every tracked file
 * again beside code-server's start.
 */
/** The environment git runs with in the sandbox: its messages untranslated (parsed), never a prompt. */
export const SANDBOX_GIT_ENV: Readonly<Record<string, string>> = { LC_ALL: "C", GIT_TERMINAL_PROMPT: "0" }

const PREBUILT_CHECKOUT_SH = `command -v git >/dev/null 2>&1 || exit ${EXIT.noGit}
unset ${REPOSITORY_ENV.join(" ")}
w=$1
g() { git -c core.checkStat=minimal -c core.trustctime=false -c "safe.directory=$w" --git-dir="$w/.git" --work-tree="$w" "$@"; }
if [ "$2" = bundle ]; then g bundle unbundle /dev/stdin >/dev/null || exit; fi
g config --local --replace-all remote.origin.url "$3" || exit
g checkout --quiet --force -B "$4" "$5" --
`

type ContainerGitError = GitCommandFailed | GitTimeout | GitMissing

/**
 * git inside the sandbox's container, as its user (what git writes is the
 * sandbox's already), with `stdin` fed to it when given. Its answers are
 * the ones host git gives, so the same steps (packages/git) parse them.
 */
const inContainer =
  (
    runtime: ContainerRuntimeShape,
    target: ExecTarget,
    stdin?: Uint8Array,
    script = GIT_SH,
    first?: ReadonlyArray<string>
  ): GitRun<ContainerGitError> =>
  (args, options) =>
    Effect.gen(function* () {
      const operation = "git in the sandbox"
      const run = firstThen(script, first)
      const outcome = yield* runtime
        .exec(target.containerId, ["sh", "-c", run.script, "prbox-git", ...run.args, ...args], {
          user: target.user,
          cwd: options.cwd,
          env: SANDBOX_GIT_ENV,
          timeoutMs: options.timeoutMs,
          maxOutputBytes: GIT_OUTPUT_BYTES,
          ...(stdin === undefined ? {} : { stdin })
        })
        .pipe(Effect.mapError((error) => new GitCommandFailed({ operation, detail: error.message, exitCode: null })))
      if (outcome.truncated) {
        return yield* new GitCommandFailed({ operation, detail: "git answered more than prbox reads", exitCode: null })
      }
      return yield* gitAnswer(outcome, operation, options.timeoutMs)
    })

/** An exec of git in the sandbox as host git's answer: a deadline, or no git in the image, is an error. */
const gitAnswer = (outcome: ExecOutcome, operation: string, timeoutMs: number) =>
  Effect.gen(function* () {
    if (outcome.timedOut || outcome.exitCode === null) {
      return yield* new GitTimeout({ operation, timeoutMs, detail: "stopped in the sandbox" })
    }
    if (outcome.exitCode === EXIT.noGit) return yield* new GitMissing()
    const output: GitOutput = { stdout: outcome.stdout, stderr: outcome.stderr, exitCode: outcome.exitCode }
    return output
  })

/**
 * The workspace inside the sandbox's container, on every engine: git runs
 * there, as the sandbox user, so nothing the sandbox wrote into the
 * workspace's config or hooks can make the host act. A new commit comes from the mirror on this machine as
 * a git bundle of just what the workspace lacks, over the exec's stdin; the
 * container needs no network and sees no credential.
 */
export const containerWorkspaceGit = (
  runtime: ContainerRuntimeShape,
  workspaces: Workspaces["Service"],
  target: ExecTarget
): WorkspaceGit<WorkspaceError | GitMissing> => {
  const path = target.workspaceFolder
  const steps = workspaceSteps(inContainer(runtime, target), GIT_TIMEOUT_MS)
  return {
    state: steps.workspaceState(path),
    bringCommit: (mirrorPath, commit, have) =>
      Effect.gen(function* () {
        if (yield* steps.hasCommit(path, commit)) return
        const bundle = yield* workspaces.bundleCommit(mirrorPath, commit, have)
        if (bundle.length === 0) return
        const feeding = workspaceSteps(inContainer(runtime, target, bundle), GIT_TIMEOUT_MS)
        yield* feeding.succeed(path, ["bundle", "unbundle", "/dev/stdin"])
      }),
    hasCommit: (commit) => steps.hasCommit(path, commit),
    isAncestor: (ancestor, descendant) => steps.isAncestor(path, ancestor, descendant),
    fastForward: (commit) => steps.fastForward(path, commit),
    nextKeepBranch: steps.nextKeepBranch(path),
    keepAndReset: (commit) => steps.keepAndReset(path, commit)
  }
}

/**
 * A new workspace's checkout, by the sandbox's own git as its user: the
 * open's clone (its `.git`) is made on the host before the container runs,
 * the files are written here, so no host program reads what the container
 * writes meanwhile (its hooks, its config, links swapped into the tree).
 * `first`: a command of the same user run before it in its exec
 * (RunFirst.ts); how it went.
 */
export const checkoutInContainer = (
  runtime: ContainerRuntimeShape,
  target: ExecTarget,
  branch: string,
  commit: string,
  first?: ReadonlyArray<string>
): Effect.Effect<FirstOutcome, WorkspaceError | GitMissing> =>
  workspaceSteps(inContainer(runtime, target, undefined, GIT_SH, first), GIT_TIMEOUT_MS)
    .succeed(target.workspaceFolder, ["checkout", "--quiet", "-b", branch, commit, "--"])
    .pipe(Effect.map((output) => firstOutcome(output.stderr, first)))

/**
 * What a prebuilt workspace holding `baseCommit` lacks of the PR's head: a
 * bundle from the mirror on this machine, empty when it lacks nothing. Made
 * on the host, so an open makes it while its container starts.
 */
export const prebuiltBundle = (
  workspaces: Workspaces["Service"],
  pr: { readonly mirrorPath: string; readonly commit: string },
  baseCommit: string
): Effect.Effect<Uint8Array, WorkspaceError> =>
  pr.commit === baseCommit
    ? Effect.succeed(new Uint8Array())
    : workspaces.bundleCommit(pr.mirrorPath, pr.commit, [baseCommit])

/**
 * A prebuilt workspace (a prebuild's copy, or a claimed pool container's)
 * moved to the PR's head, by the sandbox's own git as its user, in one exec
 * (PREBUILT_CHECKOUT_SH), `bundle` (prebuiltBundle's) fed to it.
 */
export const checkoutPrebuiltInContainer = (
  runtime: ContainerRuntimeShape,
  target: ExecTarget,
  pr: PrebuiltHead,
  bundle: Uint8Array
) =>
  Effect.gen(function* () {
    const carried = bundle.length > 0
    const run = inContainer(runtime, target, carried ? bundle : undefined, PREBUILT_CHECKOUT_SH)
    yield* checkedOut(
      yield* run(prebuiltArgs(target, pr, bundle), { cwd: target.workspaceFolder, timeoutMs: GIT_TIMEOUT_MS })
    )
  })

/** Where a prebuilt workspace is going: the PR's head, as its branch, with the remote the row records. */
export interface PrebuiltHead {
  readonly remoteUrl: string
  readonly branch: string
  readonly commit: string
}

const PREBUILT_CHECKOUT = "git checkout of the PR in the sandbox"

/** PREBUILT_CHECKOUT_SH's arguments. */
const prebuiltArgs = (target: ExecTarget, pr: PrebuiltHead, bundle: Uint8Array) => [
  target.workspaceFolder,
  bundle.length > 0 ? "bundle" : "none",
  pr.remoteUrl,
  pr.branch,
  pr.commit
]

const checkedOut = (output: GitOutput) =>
  output.exitCode === 0
    ? Effect.void
    : Effect.fail(
        new GitCommandFailed({
          operation: PREBUILT_CHECKOUT,
          detail: stderrTail(output.stderr),
          exitCode: output.exitCode
        })
      )

/**
 * checkoutPrebuiltInContainer as a command another exec of the sandbox
 * user runs (the probe's: create/UserEnv.ts's BesideCommand), the bundle on
 * its stdin; `prebuiltCheckoutOutcome` judges that exec's outcome.
 */
export const prebuiltCheckoutCommand = (target: ExecTarget, pr: PrebuiltHead, bundle: Uint8Array) => ({
  script: [
    ...Object.entries(SANDBOX_GIT_ENV).map(([name, value]) => `export ${name}=${value}`),
    PREBUILT_CHECKOUT_SH
  ].join("\n"),
  args: prebuiltArgs(target, pr, bundle),
  stdin: bundle,
  timeoutMs: GIT_TIMEOUT_MS
})

export const prebuiltCheckoutOutcome = (outcome: ExecOutcome) =>
  Effect.flatMap(gitAnswer(outcome, PREBUILT_CHECKOUT, GIT_TIMEOUT_MS), checkedOut)
