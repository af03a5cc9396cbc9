import { type Prebuild, SandboxId } from "@prbox/domain"
import { type PrebuildTarget, Workspaces } from "@prbox/git"
import { PrebuildRepo } from "@prbox/store"
import { Context, Effect, Layer, Semaphore } from "effect"
import { Config } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { GitFailed } from "../Errors.ts"
import { PrepareEnvironment } from "../environment/PrepareEnvironment.ts"
import { PrebuildFailed, PrebuildRefused } from "../prebuild/Errors.ts"
import { worthPrebuilding } from "../prebuild/FindPrebuild.ts"
import { MakePrebuild } from "../prebuild/MakePrebuild.ts"
import { decideMakeNow } from "../prebuild/PrebuildDecision.ts"
import { keyInputsOf, prebuildKey } from "../prebuild/PrebuildKey.ts"
import { PrebuildSpares } from "../prebuild/PrebuildSpares.ts"
import { SandboxTools } from "../SandboxTools.ts"
import { type OpenRequest, prebuildTargetOf } from "./OpenRequest.ts"
import { PrepareCreate } from "./PrepareCreate.ts"

/** How `prbox prebuild` ended: one made or refreshed now, one already at the base, or one another build is making. */
export interface PrebuildOutcome {
  readonly outcome: "made" | "refreshed" | "up to date" | "being made"
  readonly prebuild: Prebuild
}

/**
 * `prbox prebuild <input>`: the base branch of the input's repository
 * (fetched afresh) made into a prebuild now, as an open makes one in the
 * background, when no ready one of its environment's key is at its commit.
 * The input is an open's (its PR is fetched for the repository and its base
 * branch) or a repository's (its default branch fetched into the mirror its
 * PRs share); the key is the base's own, read from its files. One at a time:
 * a request waits for another request's build and then finds it up to date;
 * a build an open started is answered "being made".
 */
const make = Effect.gen(function* () {
  const config = yield* Config
  const runtime = yield* ContainerRuntime
  const prepareCreate = yield* PrepareCreate
  const prepareEnvironment = yield* PrepareEnvironment
  const maker = yield* MakePrebuild
  const spares = yield* PrebuildSpares
  const prebuilds = yield* PrebuildRepo
  const tools = yield* SandboxTools
  const workspaces = yield* Workspaces
  const one = yield* Semaphore.make(1)

  /** The mirror holding the base: a PR's repository fetched with the PR (its base named by the service), or a repository's default branch. */
  const fetchBase = (target: PrebuildTarget, onProgress: (line: string) => Effect.Effect<void>) =>
    Effect.gen(function* () {
      if (target._tag === "Repository") {
        const { repository } = target
        yield* onProgress(`fetching ${repository.repository}'s default branch`)
        const { mirrorPath } = yield* workspaces
          .fetchRepository(repository)
          .pipe(Effect.mapError((error) => new GitFailed({ operation: "fetch the repository", detail: error.message })))
        return { mirrorPath, name: { host: repository.host, repository: repository.repository }, baseRef: undefined }
      }
      const pr = target.target
      yield* onProgress(`fetching ${pr.repository}#${pr.pullRequest} and its base branch`)
      const got = yield* prepareCreate.fetch(pr)
      const baseRef = got.lookup._tag === "Known" ? got.lookup.info.baseRef : undefined
      return {
        mirrorPath: got.fetched.mirrorPath,
        name: { host: got.ref.host, repository: got.ref.repository },
        baseRef
      }
    })

  return Effect.fn("SandboxService.prebuild")(function* (
    request: OpenRequest,
    onProgress: (line: string) => Effect.Effect<void>
  ) {
    const cfg = yield* config.load
    if (cfg.prebuilds === false)
      return yield* new PrebuildRefused({ reason: 'prebuilds are off ("prebuilds": false in config.json)' })
    if ((yield* runtime.filesAt) !== "host") {
      return yield* new PrebuildRefused({
        reason: "the engine is remote: prebuilds are made on this machine's engine only"
      })
    }
    const target = yield* prebuildTargetOf(request, cfg)
    const { mirrorPath, name, baseRef } = yield* fetchBase(target, onProgress)
    const base = yield* prepareCreate
      .baseEnvironment(mirrorPath, baseRef, name, cfg, request.devcontainer, true)
      .pipe(Effect.mapError((error) => new GitFailed({ operation: "fetch the base branch", detail: error.message })))
    const todays = (why: string) => new PrebuildRefused({ reason: `${base.branch} starts with today's path: ${why}` })
    if (!worthPrebuilding(base.choice, cfg))
      return yield* todays("its environment has no onCreateCommand or updateContentCommand, and the warm pool is off")
    const inputs = yield* keyInputsOf(base.choice, base.files, name, cfg, tools.defaultImage)
    if ("_tag" in inputs) return yield* todays(inputs.reason)
    if (base.choice._tag === "Devcontainer" && base.choice.spec.source._tag !== "Image") {
      return yield* todays("a Dockerfile's environment is prebuilt after an open of one of its PRs (prbox open)")
    }
    const key = yield* prebuildKey(inputs)
    const { host, repository } = name
    return yield* one.withPermit(
      Effect.gen(function* () {
        const rows = (yield* prebuilds.list).filter((row) => row.host === host && row.repository === repository)
        const decided = decideMakeNow(rows, key, base.commit)
        if (decided._tag === "BeingMade") return { outcome: "being made", prebuild: decided.prebuild } as const
        if (decided._tag === "UpToDate") return { outcome: "up to date", prebuild: decided.prebuild } as const
        yield* onProgress(
          `${decided._tag === "Refresh" ? "refreshing" : "making"} the prebuild of ${base.branch} at ${base.commit.slice(0, 7)}`
        )
        // The environment as a sandbox of it would have it; its devcontainerId is the key's.
        const owner = { id: SandboxId.make(key.slice(0, 12)), host, repository }
        const { plan } = yield* prepareEnvironment(owner, base.choice, "", cfg, { _tag: "Host" }, onProgress)
        const made = yield* maker.make(
          {
            key,
            host,
            repository,
            baseBranch: base.branch,
            baseCommit: base.commit,
            mirrorPath,
            plan
          },
          onProgress
        )
        if (made?.state !== "ready") {
          return yield* new PrebuildFailed({ operation: "make", detail: made?.error ?? "its row is gone" })
        }
        // Its spare, in the background: the first open from it takes no copy.
        yield* spares.refill(made)
        return { outcome: decided._tag === "Refresh" ? "refreshed" : "made", prebuild: made } as const
      })
    )
  })
})

export class PrebuildNow extends Context.Service<PrebuildNow, Effect.Success<typeof make>>()(
  "prbox/engine/PrebuildNow"
) {
  static readonly layer = Layer.effect(PrebuildNow, make)
}
