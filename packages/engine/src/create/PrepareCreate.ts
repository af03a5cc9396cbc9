import { type PullRequestLookup, type Sandbox, sameCommit } from "@prbox/domain"
import {
  type FetchError,
  type FetchedPullRequest,
  isHeadFromService,
  type PullRequestAtService,
  type PullRequestRef,
  PullRequests,
  type PullRequestTarget,
  Workspaces,
  withSourceBranch
} from "@prbox/git"
import { PrebuildRepo, SandboxRepo } from "@prbox/store"
import { Clock, Context, Effect, Fiber, Layer, Option, Result } from "effect"
import { ComposeCli } from "../ComposeCli.ts"
import type { PrboxConfig } from "../Config.ts"
import { GitFailed, safeReason } from "../Errors.ts"
import {
  baseBranchFiles,
  chooseEnvironment,
  type EnvironmentChoice,
  type RepositoryName
} from "../environment/ChooseEnvironment.ts"
import { admitCompose } from "../environment/PrepareCompose.ts"
import { Lifecycle } from "../Lifecycle.ts"
import { type PrebuildPlan, planPrebuild } from "../prebuild/FindPrebuild.ts"
import { SandboxTools } from "../SandboxTools.ts"
import { InvalidPullRequestInput, PullRequestMissing, PullRequestUnresolved } from "./Errors.ts"

/** What a new sandbox's worker starts from: the PR fetched and its environment chosen at admission. */
export interface PreparedCreate {
  /** What was fetched (a Bitbucket Cloud or CodeCommit PR's: its source branch, named by the service). */
  readonly ref: PullRequestRef
  readonly fetched: FetchedPullRequest
  readonly choice: EnvironmentChoice
  /** What the hosting service said of the PR. */
  readonly lookup: PullRequestLookup
  /** Whether it starts from a prebuild and what is made in the background (absent: today's path). */
  readonly prebuild?: PrebuildPlan
}

/** What of a prepared create decides whether it claims from the warm pool. */
export const poolOpen = (prepared: PreparedCreate) => ({
  open: prepared.prebuild?.decision.open,
  choice: prepared.choice
})

/** Where a workspace started from a prebuild is going: the PR's head, from the mirror. */
export const targetOf = ({ ref, fetched }: PreparedCreate, workspacePath: string) => ({
  workspacePath,
  branch: `pr-${ref.pullRequest}`,
  commit: fetched.commit,
  mirrorPath: fetched.mirrorPath,
  remoteUrl: ref.remoteUrl
})

/** What the row records of the PR's source: the workspace's branch is pr-N, the PR's own when the service named it. */
export const sourceOf = ({ ref, fetched, lookup }: PreparedCreate) => ({
  sourceCommit: fetched.commit,
  sourceBranch: lookup._tag === "Known" ? lookup.info.sourceBranch : `pr-${ref.pullRequest}`
})

/**
 * How long a create waits for the hosting service once git has fetched the
 * pull request: past it the metadata is unknown (gc's refresh fills it in).
 */
const LOOKUP_GRACE = "1 second"

/** A lookup is bounded by its own timeout; this bound only keeps a misbehaving one from holding an open. */
const LOOKUP_BOUND = "20 seconds"

const unanswered: PullRequestLookup = { _tag: "Unknown", reason: "the hosting service did not answer in time" }

const MISSING_WARNING = "warning: the hosting service says no such pull request; opened from the git ref"

const nameOf = (target: PullRequestTarget) => `${target.repository}#${target.pullRequest}`

/**
 * What a new sandbox needs before it is admitted: the PR fetched into its
 * mirror, what its hosting service says of it, and its environment chosen
 * from the fetched commit. A PR that cannot be fetched or whose
 * devcontainer.json is refused leaves no row and no container (a Compose
 * one too when Compose cannot run here: admitCompose).
 */
const make = Effect.gen(function* () {
  const workspaces = yield* Workspaces
  const pullRequests = yield* PullRequests
  const repo = yield* SandboxRepo
  const lifecycle = yield* Lifecycle
  const compose = yield* ComposeCli
  const prebuilds = yield* PrebuildRepo
  const tools = yield* SandboxTools

  const lookup = (target: PullRequestTarget) =>
    pullRequests.lookup(target).pipe(
      Effect.timeoutOption(LOOKUP_BOUND),
      Effect.map((answer) => Option.getOrElse(answer, () => unanswered))
    )

  const fetchFailed = (error: FetchError) => new GitFailed({ operation: "fetch", detail: safeReason(error) })

  /**
   * A ref git can fetch: the service is asked meanwhile, never adding to the
   * fetch's time beyond a short grace. A ref git lacks is the service's 404
   * when it says so.
   */
  const viaGit = Effect.fnUntraced(function* (ref: PullRequestRef) {
    const asking = yield* Effect.forkChild(lookup(ref), { startImmediately: true })
    const fetched = yield* Effect.result(workspaces.fetchPullRequest(ref))
    if (Result.isFailure(fetched)) {
      const answer = yield* Fiber.join(asking)
      if (fetched.failure._tag === "PullRequestNotFound" && answer._tag === "Missing") {
        return yield* new PullRequestMissing({ pullRequest: nameOf(ref), detail: answer.detail })
      }
      return yield* fetchFailed(fetched.failure)
    }
    const answer = yield* Fiber.join(asking).pipe(Effect.timeoutOption(LOOKUP_GRACE))
    return { ref, fetched: fetched.success, lookup: Option.getOrElse(answer, () => unanswered) }
  })

  /**
   * A head only the service names (Bitbucket Cloud, CodeCommit): its source
   * branch is fetched and must be the commit the service reports.
   */
  const viaService = Effect.fnUntraced(function* (target: PullRequestAtService) {
    const answer = yield* lookup(target)
    if (answer._tag === "Missing") {
      return yield* new PullRequestMissing({ pullRequest: nameOf(target), detail: answer.detail })
    }
    if (answer._tag === "Unknown") {
      return yield* new PullRequestUnresolved({
        pullRequest: nameOf(target),
        reason: answer.reason,
        ...(answer.configure === undefined ? {} : { configure: answer.configure })
      })
    }
    const { info } = answer
    const located = withSourceBranch(target, info.sourceBranch, info.sourceCloneUrl)
    if (Result.isFailure(located)) return yield* new InvalidPullRequestInput({ reason: located.failure.message })
    const ref = located.success
    const fetched = yield* workspaces.fetchPullRequest(ref).pipe(Effect.mapError(fetchFailed))
    if (!sameCommit(info.headSha, fetched.commit)) {
      return yield* new GitFailed({
        operation: "open",
        detail: `the source branch moved: the service reports ${info.headSha.slice(0, 12)} but ${info.sourceBranch} is at ${fetched.commit.slice(0, 12)}; open again`
      })
    }
    return { ref, fetched, lookup: answer }
  })

  /**
   * The base branch's tip in the mirror (fetched only when the mirror lacks
   * it, or always when `fresh`) and its environment.
   */
  const baseEnvironment = (
    mirrorPath: string,
    baseRef: string | undefined,
    ref: RepositoryName,
    cfg: PrboxConfig,
    devcontainer: string | undefined,
    fresh = false
  ) =>
    Effect.gen(function* () {
      const { branch, tip } = yield* workspaces
        .baseCommit(mirrorPath, baseRef, fresh ? { refresh: true } : {})
        .pipe(Effect.catch(() => workspaces.baseCommit(mirrorPath, baseRef, { refresh: true })))
      const files = workspaces.commitFiles(mirrorPath, tip)
      const choice = yield* chooseEnvironment(files, ref, cfg, devcontainer, Effect.succeed(files))
      return { branch, commit: tip, choice, files }
    }).pipe(Effect.mapError((error) => ({ message: safeReason(error) })))

  /** Whether the repository has a prebuild row (a store that cannot be read: no, the base is read when needed). */
  const hasPrebuilds = (cfg: PrboxConfig, repository: RepositoryName) =>
    cfg.prebuilds === false
      ? Effect.succeed(false)
      : prebuilds.list.pipe(
          Effect.map((rows) =>
            rows.some((row) => row.host === repository.host && row.repository === repository.repository)
          ),
          Effect.orElseSucceed(() => false)
        )

  /** The PR fetched into its mirror, with what its hosting service says of it. */
  const fetch = (target: PullRequestTarget) => (isHeadFromService(target) ? viaService(target) : viaGit(target))

  const prepare = Effect.fn("SandboxService.prepareCreate")(function* (
    target: PullRequestTarget,
    cfg: PrboxConfig,
    devcontainer: string | undefined
  ) {
    // A repository with prebuilds has its base read beside the PR's fetch (which writes only the PR's ref),
    // as its default branch: an open from a prebuild waits on both.
    const earlyMirror =
      isHeadFromService(target) || !(yield* hasPrebuilds(cfg, target)) ? undefined : workspaces.mirrorPath(target)
    const early =
      earlyMirror === undefined
        ? undefined
        : {
            mirrorPath: earlyMirror,
            // Not started at once: the fetch's git goes first, the read once the fetch waits on its files.
            reading: yield* Effect.forkChild(baseEnvironment(earlyMirror, undefined, target, cfg, devcontainer))
          }
    const got = yield* fetch(target)
    const { mirrorPath, commit } = got.fetched
    const files = workspaces.commitFiles(mirrorPath, commit)
    const baseRef = got.lookup._tag === "Known" ? got.lookup.info.baseRef : undefined
    const base = baseBranchFiles(workspaces, mirrorPath, baseRef)
    const baseRead = baseEnvironment(mirrorPath, baseRef, got.ref, cfg, devcontainer)
    // The service's base is read again when it is not the default branch read beside the fetch.
    const reading =
      early === undefined || early.mirrorPath !== mirrorPath
        ? undefined
        : Fiber.join(early.reading).pipe(
            Effect.flatMap((read) =>
              baseRef === undefined || read.branch === baseRef ? Effect.succeed(read) : baseRead
            ),
            Effect.catch(() => baseRead)
          )
    const choice = yield* chooseEnvironment(files, got.ref, cfg, devcontainer, base)
    yield* admitCompose(compose, choice)
    const prebuild = yield* planPrebuild(prebuilds, {
      choice,
      files,
      base: reading ?? baseRead,
      repository: got.ref,
      config: cfg,
      defaultImage: tools.defaultImage
    })
    return { ...got, choice, prebuild } satisfies PreparedCreate
  })

  /** What the service said, on the new row: its metadata, or a line in its log saying why there is none. */
  const record = (row: Sandbox, answer: PullRequestLookup) =>
    Effect.gen(function* () {
      switch (answer._tag) {
        case "Known":
          return yield* repo.recordPullRequest(row.id, answer.info, yield* Clock.currentTimeMillis)
        case "Missing":
          yield* lifecycle.emit(row.id, row.status, MISSING_WARNING)
          return row
        case "Unknown": {
          // A plain git remote has no hosting service: nothing to say.
          if (row.provider === "git") return row
          const configure = answer.configure === undefined ? "" : `; ${answer.configure}`
          yield* lifecycle.emit(row.id, row.status, `pull request details unknown (${answer.reason}${configure})`)
          return row
        }
      }
    })

  return { prepare, record, fetch, baseEnvironment }
})

export class PrepareCreate extends Context.Service<PrepareCreate, Effect.Success<typeof make>>()(
  "prbox/engine/PrepareCreate"
) {
  static readonly layer = Layer.effect(PrepareCreate, make)
}
