import {
  formatPullRequestKey,
  isAmbiguousProfile,
  isLive,
  isSupersededBy,
  type PullRequestKey,
  restartRefusal,
  retirementState,
  type Sandbox,
  SandboxConflict,
  type SandboxId
} from "@prbox/domain"
import type { PullRequestTarget } from "@prbox/git"
import { SandboxRepo } from "@prbox/store"
import { Clock, Context, Effect, Layer, Option, Redacted } from "effect"
import { AccountIdentity } from "../AccountIdentity.ts"
import { Config, type PrboxConfig } from "../Config.ts"
import { pullRequestOf } from "../create/OpenRequest.ts"
import type { PreparedCreate } from "../create/PrepareCreate.ts"
import { PrepareCreate, sourceOf } from "../create/PrepareCreate.ts"
import { SETUP_INTERRUPTED } from "../create/Setup.ts"
import { WarmPool } from "../create/WarmPool.ts"
import { Workers } from "../create/Workers.ts"
import { Engines, otherEngineRefusal } from "../Engines.ts"
import { mapStoreErrors, safeReason } from "../Errors.ts"
import { Lifecycle } from "../Lifecycle.ts"
import { Reconciler } from "../reconcile/Reconciler.ts"
import { newPassword, newSandboxId } from "../SandboxIds.ts"
import type { OpenRequest } from "./SandboxService.ts"

const STILL_STOPPING = "it is still stopping; retry after it has stopped"

/**
 * The first admission pass's answer when a create is due and must first be
 * prepared outside admission, with the PR's rows as that pass left them.
 */
interface NeedsPrepare {
  readonly _tag: "NeedsPrepare"
  readonly seen: string
}

/** What the reconcile before a create decided from: unchanged rows need no second reconcile. */
const fingerprint = (rows: ReadonlyArray<Sandbox>): string =>
  rows.map((row) => `${row.id}:${row.status}:${row.containerId}:${row.destroyFenced}`).join(",")
const ACCOUNT_UNAVAILABLE = "account identity is unavailable; retry after account discovery"

/**
 * Admission: `open` (one live sandbox per PR, the account it is keyed by)
 * and `restart`, each under the admission permit.
 */
const make = Effect.gen(function* () {
  const workers = yield* Workers
  const repo = yield* SandboxRepo
  const engines = yield* Engines
  const config = yield* Config
  const identity = yield* AccountIdentity
  const reconciler = yield* Reconciler
  const lifecycle = yield* Lifecycle
  const prepareCreate = yield* PrepareCreate
  const warmPool = yield* WarmPool

  /** The state of a row's container, asked of the engine it lives on. */
  const containerState = (row: Sandbox, containerId: string) =>
    Effect.flatMap(engines.runtimeFor(row.engine), (runtime) => runtime.state(containerId))

  /** Restarts a row of the configured engine; another engine's row is refused. */
  const admitRestart = (row: Sandbox, cfg: PrboxConfig) => {
    const refusal = otherEngineRefusal(engines, row)
    return refusal === undefined ? workers.admitRestart(row, cfg) : Effect.fail(refusal)
  }

  /**
   * A live row of the PR answers the open: a running one after one inspect
   * (a dead container is recorded and the sandbox restarted), a starting one
   * as it is, a stopping one with a conflict.
   */
  const answerLive = (live: Sandbox, cfg: PrboxConfig) =>
    Effect.gen(function* () {
      if (live.status === "stopping") {
        return yield* new SandboxConflict({ id: live.id, reason: STILL_STOPPING })
      }
      if (live.status !== "running" || live.containerId === null) return live
      const state = yield* containerState(live, live.containerId)
      if (state._tag === "Running") {
        yield* repo.touch(live.id, yield* Clock.currentTimeMillis)
        return live
      }
      const stopped = yield* lifecycle.serialized(
        lifecycle.writeStatus(live.id, "stopped", {
          stoppedAt: yield* Clock.currentTimeMillis,
          detail: "the container was no longer running"
        })
      )
      return yield* admitRestart(stopped, cfg)
    })

  /** Retires a fallback row on behalf of a create: its stop is owned here, so no worker of it races. */
  const retireOwned = (row: Sandbox) =>
    Effect.gen(function* () {
      yield* lifecycle.requestStop(row.id)
      yield* lifecycle.interruptWorkers(row.id)
      yield* reconciler.retire(row)
    }).pipe(
      Effect.ensuring(lifecycle.clearStop(row.id)),
      Effect.mapError(
        (error) =>
          new SandboxConflict({
            id: row.id,
            reason: `could not retire it for the discovered account (${safeReason(error)}); run \`prbox rm ${row.id}\``
          })
      )
    )

  /**
   * The account a new sandbox of this PR is keyed by. Discovered: the PR's
   * rows keyed by the profile (or by no account) are retired first.
   * Unavailable: the profile name, unless another live row of the PR would
   * make this a second sandbox, or the profile reads as an account id.
   */
  const chooseAccount = (
    ref: PullRequestTarget,
    profile: string | undefined,
    discovered: Option.Option<string>,
    prRows: ReadonlyArray<Sandbox>
  ) =>
    Effect.gen(function* () {
      if (Option.isSome(discovered)) {
        const account = discovered.value
        const fallbacks = prRows.filter(
          (row) =>
            row.host === ref.host && row.legacyRetiredAt === null && isSupersededBy(row.account, account, profile ?? "")
        )
        yield* Effect.forEach(fallbacks, retireOwned, { discard: true })
        return account
      }
      const legacy = prRows.find((row) => row.host === null && row.account === profile)
      if (profile !== undefined && legacy !== undefined && isAmbiguousProfile(ref.provider, profile)) {
        return yield* new SandboxConflict({
          id: legacy.id,
          reason: `profile "${profile}" reads as an account id and matches a legacy sandbox; rename the profile`
        })
      }
      const account = profile ?? ""
      const others = prRows.filter((row) => row.host === ref.host && row.account !== account)
      const other = others.find(isLive)
      if (other !== undefined) return yield* new SandboxConflict({ id: other.id, reason: ACCOUNT_UNAVAILABLE })
      const unconfirmed = yield* Effect.findFirst(others, containerMayRun)
      if (Option.isSome(unconfirmed)) {
        return yield* new SandboxConflict({ id: unconfirmed.value.id, reason: ACCOUNT_UNAVAILABLE })
      }
      return account
    })

  /**
   * Whether an ended row's container may still run: only Docker confirming
   * it stopped (exited, dead) or absent says no; a failed inspect says yes.
   */
  const containerMayRun = (row: Sandbox) =>
    row.containerId === null
      ? Effect.succeed(false)
      : containerState(row, row.containerId).pipe(
          Effect.map((state) => state._tag === "Running"),
          Effect.orElseSucceed(() => true)
        )

  /**
   * A stop in flight on a row of the PR refuses the open before the per-PR
   * reconcile could "finish" that stop and a create or restart race its last
   * write. (A row left `stopping` with no stop in flight is an interrupted
   * stop: the reconcile finishes it.)
   */
  const refuseWhileStopping = (prRows: ReadonlyArray<Sandbox>) =>
    Effect.gen(function* () {
      const stopping = yield* Effect.findFirst(prRows, (row) => Effect.isFailure(lifecycle.failIfStopRequested(row.id)))
      if (Option.isSome(stopping)) return yield* new SandboxConflict({ id: stopping.value.id, reason: STILL_STOPPING })
    })

  /**
   * An unauthenticated legacy row of the PR (stopped and marked by the
   * legacy pass) blocks a new sandbox until the user removes it.
   */
  const refuseUnauthenticatedLegacy = (prRows: ReadonlyArray<Sandbox>) => {
    const legacy = prRows.find((row) => retirementState(row) === "unauthenticated")
    return legacy === undefined
      ? Effect.void
      : Effect.fail(
          new SandboxConflict({
            id: legacy.id,
            reason: `a legacy sandbox without a password requires explicit cleanup before recreation: delete it with \`prbox rm ${legacy.id}\` and open the PR again`
          })
        )
  }

  const open = Effect.fn("SandboxService.open")(function* (request: OpenRequest) {
    const cfg = yield* config.load
    const ref = yield* pullRequestOf(request, cfg)
    const discovered = yield* identity.discover({ provider: ref.provider, host: ref.host, profile: cfg.profile })
    const selector = { provider: ref.provider, repository: ref.repository, pullRequest: ref.pullRequest }
    // A create is prepared (fetch, environment) outside admission, which it would hold for as long as a
    // fetch takes: the first pass says a create is due, the second one (with everything the PR's rows
    // say re-checked) makes it.
    const attempt = (prepared?: { readonly create: PreparedCreate; readonly seen: string }) =>
      lifecycle.admit(
        Effect.gen(function* () {
          const samePr = (rows: ReadonlyArray<Sandbox>) => rows.filter((row) => row.host === ref.host)
          const all = yield* repo.findByPr(selector)
          const prRows = all.filter((row) => row.host === null || row.host === ref.host)
          yield* refuseWhileStopping(prRows)
          const account = yield* chooseAccount(ref, cfg.profile, discovered, prRows)
          const key: PullRequestKey = { ...selector, host: ref.host, account }
          const fast = samePr(prRows).find((row) => row.account === account && isLive(row))
          if (fast?.status === "running") return yield* answerLive(fast, cfg)
          // Before anything is created, the PR's rows and containers are made to agree (once, unless
          // the rows changed while the create was prepared).
          if (prepared?.seen !== fingerprint(all)) {
            yield* reconciler.reconcilePullRequest({ _tag: "PullRequest", ...selector })
          }
          const reconciled = yield* repo.findByPr(selector)
          const rows = samePr(reconciled).filter((row) => row.account === account)
          const live = rows.find(isLive)
          if (live !== undefined) return yield* answerLive(live, cfg)
          yield* refuseUnauthenticatedLegacy(reconciled)
          const fenced = rows.find((row) => row.destroyFenced)
          if (fenced !== undefined) {
            return yield* new SandboxConflict({
              id: fenced.id,
              reason: `an earlier sandbox of ${formatPullRequestKey(key)} was not confirmed destroyed; run \`prbox rm ${fenced.id}\` first`
            })
          }
          // Reopening a stopped sandbox keeps its workspace (and the user's work in it).
          const restartable = rows.find((row) => restartRefusal(row) === undefined)
          if (restartable !== undefined) return yield* admitRestart(restartable, cfg)
          if (prepared === undefined)
            return { _tag: "NeedsPrepare", seen: fingerprint(reconciled) } satisfies NeedsPrepare
          const now = yield* Clock.currentTimeMillis
          const pr = { ...key, createdAt: now, lastActivityAt: now, engine: engines.current }
          const fields = { ...pr, remoteUrl: prepared.create.ref.remoteUrl }
          // A pool container of the PR's environment key becomes its sandbox in one store transaction:
          // `starting`, with its source and its setup "did not finish" until the claim's worker says.
          const poolKey = workers.poolKeyFor(cfg, prepared.create)
          const claim = { ...fields, ...sourceOf(prepared.create), setupError: SETUP_INTERRUPTED }
          const claimed = poolKey === undefined ? undefined : yield* warmPool.claim(poolKey, claim)
          const inserted =
            claimed?.row ??
            (yield* repo.insert({ ...fields, id: newSandboxId(), accessPassword: Redacted.make(newPassword()) }))
          const from = claimed === undefined ? "" : " from the warm pool"
          yield* lifecycle.emit(inserted.id, inserted.status, `opening ${formatPullRequestKey(key)}${from}`)
          const row = yield* prepareCreate.record(inserted, prepared.create.lookup)
          yield* claimed === undefined
            ? workers.spawnCreate(row, cfg, prepared.create)
            : workers.spawnClaim(row, cfg, prepared.create, claimed)
          return row
        })
      )
    const first = yield* attempt()
    if (!("_tag" in first)) return first
    // A create's PR is fetched and looked up only here: a re-open of a running sandbox asks no service.
    const create = yield* prepareCreate.prepare(ref, cfg, request.devcontainer)
    const second = yield* attempt({ create, seen: first.seen })
    return "_tag" in second ? yield* Effect.die(new Error("a prepared create was not made")) : second
  }, mapStoreErrors("sandbox.open"))

  const restart = Effect.fn("SandboxService.restart")(function* (id: SandboxId) {
    const cfg = yield* config.load.pipe(Effect.mapError((error) => new SandboxConflict({ id, reason: error.message })))
    return yield* lifecycle.admit(Effect.flatMap(lifecycle.getRow(id), (row) => admitRestart(row, cfg)))
  }, mapStoreErrors("sandbox.restart"))

  return { open, restart }
})

export class Admission extends Context.Service<Admission, Effect.Success<typeof make>>()("prbox/engine/Admission") {
  static readonly layer = Layer.effect(Admission, make)
}
