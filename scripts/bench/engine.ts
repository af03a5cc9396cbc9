import { AccountIdentity, CodeServerHealth, ContainerRuntime, Reconciler, SandboxService } from "@prbox/engine"
import { NodeEngine } from "@prbox/engine/node"
import { Git, PullRequests, Workspaces } from "@prbox/git"
import { SandboxRepo } from "@prbox/store"
import { Effect, ManagedRuntime } from "effect"

/** Every container a benchmark creates carries this label (and the engine's `dev.prbox.home`). */
export const BENCH_LABEL = "dev.prbox.bench"

/** One call into a service, timed (performance.now() milliseconds). */
export interface Span {
  readonly op: string
  readonly start: number
  readonly end: number
  readonly ok: boolean
}

export type Recorder = Array<Span>

const timed = <A, E, R>(recorder: Recorder, op: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const start = performance.now()
    return Effect.onExit(effect, (exit) =>
      Effect.sync(() => {
        recorder.push({ op, start, end: performance.now(), ok: exit._tag === "Success" })
      })
    )
  })

/** The same service with every method's effect timed as `<prefix>.<method>`. */
const instrument = <T extends object>(recorder: Recorder, prefix: string, service: T): T => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(service)) {
    out[key] =
      typeof value === "function"
        ? (...args: Array<unknown>) => {
            const result: unknown = value(...args)
            return Effect.isEffect(result) ? timed(recorder, `${prefix}.${key}`, result) : result
          }
        : value
  }
  return out as T
}

/** `git fetch`, `git clone`, ...: the subcommand past `--git-dir=` and `-c` options. */
const gitOp = (args: ReadonlyArray<string>): string => {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? ""
    if (arg === "-c" || arg === "-C") i++
    else if (!arg.startsWith("-")) return `git.${arg}`
  }
  return "git"
}

export interface EngineOptions {
  readonly home: string
  readonly image: string
  readonly recorder: Recorder
  readonly healthTimeoutSeconds?: number
  /** A folder of prebuilt code-server distributions (the tests'), so a run never builds one. */
  readonly codeServerDir?: string
  /** Registries on this machine a PR's features may come from (config.json's localRegistries). */
  readonly localRegistries?: ReadonlyArray<string>
}

/**
 * The real stack as the daemon builds it (NodeEngine: SQLite in `home`, the
 * Docker engine, git; static config, no account discovery nor hosting service), with the
 * runtime, health, git, workspaces and store calls timed into `recorder`.
 */
export const engineLayer = (options: EngineOptions) => {
  const { home, recorder } = options
  return NodeEngine.layer({
    home,
    labels: { [BENCH_LABEL]: "1" },
    config: {
      image: options.image,
      healthTimeoutSeconds: options.healthTimeoutSeconds ?? 120,
      localRegistries: options.localRegistries ?? []
    },
    identity: AccountIdentity.unavailable,
    pullRequests: PullRequests.unavailable,
    ...(options.codeServerDir === undefined ? {} : { codeServerDir: options.codeServerDir }),
    wrap: {
      git: (real) => Git.of({ run: (args, runOptions) => timed(recorder, gitOp(args), real.run(args, runOptions)) }),
      workspaces: (real) => Workspaces.of(instrument(recorder, "workspaces", real)),
      runtime: (real) => ContainerRuntime.of(instrument(recorder, "runtime", real)),
      health: (real) => CodeServerHealth.of(instrument(recorder, "health", real)),
      repo: (real) => SandboxRepo.of(instrument(recorder, "store", real))
    }
  })
}

export interface Engine {
  readonly sandboxes: SandboxService["Service"]
  readonly repo: SandboxRepo["Service"]
  readonly reconciler: Reconciler["Service"]
  readonly runtime: ContainerRuntime["Service"]
  /** Runs one of the services' effects. */
  readonly run: <A, E>(effect: Effect.Effect<A, E>) => Promise<A>
  readonly dispose: () => Promise<void>
}

/** Builds the engine for `home` (opens its database); `dispose` interrupts its workers. */
export const makeEngine = async (options: EngineOptions): Promise<Engine> => {
  const managed = ManagedRuntime.make(engineLayer(options))
  const services = await managed.runPromise(
    Effect.gen(function* () {
      return {
        sandboxes: yield* SandboxService,
        repo: yield* SandboxRepo,
        reconciler: yield* Reconciler,
        runtime: yield* ContainerRuntime
      }
    })
  )
  return {
    ...services,
    run: (effect) => managed.runPromise(effect),
    dispose: () => managed.dispose()
  }
}
