/**
 * The engine in a process of its own, with prebuilds and a warm pool of
 * one, driven to one of the pool's crash phases (pool-phases.ts). When the
 * phase is reached it prints `PHASE <name>` synchronously and blocks; the
 * parent test kills it with SIGKILL there. Nothing here sleeps.
 *
 * Usage: node pool-child.ts <phase>, with PRBOX_HOME, PRBOX_CRASH_REMOTE,
 * PRBOX_CRASH_RUN_ID, PRBOX_CRASH_IMAGE and PRBOX_CRASH_PR in the environment.
 */
import { writeSync } from "node:fs"
import { POOL_LABEL } from "@prbox/domain"
import { Effect } from "effect"
import { type RuntimeExecOptions, SandboxService } from "../../src/index.ts"
import { engineLayer } from "../engine-layer.ts"
import { poolConfig } from "../pool-support.ts"
import { CHILD_ENV, phaseLine, runChild } from "./phases.ts"
import { execPhase, isPoolPhase, PR_ENV } from "./pool-phases.ts"

const phase = process.argv[2]
if (!isPoolPhase(phase)) throw new Error(`usage: pool-child.ts <phase> (got ${String(phase)})`)
const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`${name} is not set`)
  return value
}
const remote = env(CHILD_ENV.remote)
const pr = Number(env(PR_ENV))

/** Announces the phase, then never returns: the process is killed right here. */
const halt = Effect.suspend(() => {
  writeSync(1, `${phaseLine(phase)}\n`)
  return Effect.never
})

/** The pool container the fill made (pool-mid-make halts once it started). */
let poolContainer: string | undefined

const drive = Effect.gen(function* () {
  const sandboxes = yield* SandboxService
  if (phase === "prebuild-mid-make") {
    // The base moved: `prbox prebuild` refreshes its prebuild; the wrapped commit halts it.
    yield* sandboxes.prebuild({ input: remote, pr }, () => Effect.void)
    return yield* Effect.die(new Error("the prebuild returned; the wrapped commit should have halted it"))
  }
  // A claim (the pool holds a ready container), or, the pool empty, an open from the prebuild that refills it.
  yield* sandboxes.open({ input: remote, pr })
  return yield* Effect.never
})

const layer = engineLayer({
  home: env(CHILD_ENV.home),
  runId: env(CHILD_ENV.runId),
  config: { image: env(CHILD_ENV.image), ...poolConfig(1) },
  lifecycle: (real) => ({
    ...real,
    // Right after PoolRepo.claim's transaction: the open's first line is never written.
    emit: (id, status, line) =>
      phase === "claim-after-transaction" && line.includes("from the warm pool") ? halt : real.emit(id, status, line),
    // The setup done, the row's `running` never written.
    advance: (id, to, fields) =>
      phase === "claim-before-running" && to === "running" ? halt : real.advance(id, to, fields)
  }),
  workspaces: (real) => ({
    ...real,
    // The PR's bundle made on this machine, the container not yet given it.
    bundleCommit: (mirrorPath, commit, have) =>
      phase === "claim-mid-bring-in"
        ? Effect.andThen(real.bundleCommit(mirrorPath, commit, have), halt)
        : real.bundleCommit(mirrorPath, commit, have)
  }),
  runtime: (real) => ({
    ...real,
    provision: (spec, onProgress) =>
      phase === "pool-mid-make" && spec.labels[POOL_LABEL] !== undefined
        ? Effect.tap(real.provision(spec, onProgress), (id) =>
            Effect.sync(() => {
              poolContainer = id
            })
          )
        : real.provision(spec, onProgress),
    // The pool container started, its entry still `making`.
    start: (containerId) =>
      phase === "pool-mid-make" && containerId === poolContainer
        ? Effect.andThen(real.start(containerId), halt)
        : real.start(containerId),
    exec: <O extends RuntimeExecOptions>(containerId: string, argv: ReadonlyArray<string>, options: O) =>
      execPhase(argv) === phase
        ? Effect.andThen(real.exec(containerId, argv, options), halt)
        : real.exec(containerId, argv, options),
    // The prebuild's image committed, its volumes made, its row still `making`, its container there.
    commit: (containerId, request) =>
      phase === "prebuild-mid-make"
        ? Effect.andThen(real.commit(containerId, request), halt)
        : real.commit(containerId, request)
  })
})

runChild(phase, drive.pipe(Effect.provide(layer)))
