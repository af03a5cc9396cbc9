import type { Sandbox } from "@prbox/domain"
import type { Workspaces } from "@prbox/git"
import type { SandboxRepo } from "@prbox/store"
import { Deferred, Effect, Latch, Redacted } from "effect"
import {
  type CodeServerHealthShape,
  type ContainerRuntime,
  type ContainerRuntimeShape,
  type HooksShape,
  RuntimeError,
  type SandboxService
} from "../src/index.ts"
import type { LifecycleShape } from "../src/Lifecycle.ts"
import { type EngineFixture, type EngineOptions, withEngine } from "./harness.ts"

/** The await points of a create or restart worker where a test can hold it. */
export type Point =
  | "clone"
  | "pull"
  | "beforeCreate"
  | "afterCreate"
  | "beforeStart"
  | "afterStart"
  | "health"
  | "hook"
  | "setup"

/** Runtime calls a test can make fail with a RuntimeError. */
export type Fault = "stop" | "destroy"

/** A worker held at a point: `reached` resolves when it got there, `release` lets it go on. */
export interface Gate {
  readonly reached: Deferred.Deferred<void>
  readonly release: Effect.Effect<void>
  /** Resolves once a stop of any sandbox has published its intent (after the gate was armed). */
  readonly stopRequested: Deferred.Deferred<void>
}

interface Armed {
  readonly point: Point
  readonly pullRequest: number | undefined
  readonly reached: Deferred.Deferred<void>
  readonly latch: Latch.Latch
}

/**
 * Wraps the real runtime, workspaces, hooks and lifecycle: it journals the
 * calls that matter (provision, start, stop requests, ...), holds a worker at
 * an armed point on a latch, and injects faults. Every latch is opened when
 * the body ends, so a failing test never leaves an uninterruptible worker
 * blocking the engine's shutdown.
 */
/** The PR a workspace's branch (`pr-<n>`) was made for. */
const pullRequestOfBranch = (branch: string): number | undefined => {
  const match = /^pr-(\d+)$/.exec(branch)
  return match?.[1] === undefined ? undefined : Number(match[1])
}

export class Probe {
  /** Calls in the order they were entered; `stopRequested` once a stop's intent is public. */
  readonly journal: Array<string> = []
  private readonly armed: Array<Armed> = []
  private readonly latches: Array<Latch.Latch> = []
  private readonly faults = new Set<Fault>()
  private stopRequested = Deferred.makeUnsafe<void>()

  /** Holds the next worker that reaches `point` (of `pullRequest`, when given). */
  arm(point: Point, pullRequest?: number): Gate {
    const latch = Latch.makeUnsafe(false)
    const reached = Deferred.makeUnsafe<void>()
    this.latches.push(latch)
    this.armed.push({ point, pullRequest, reached, latch })
    this.stopRequested = Deferred.makeUnsafe<void>()
    return { reached, release: Effect.asVoid(latch.open), stopRequested: this.stopRequested }
  }

  fault(call: Fault, on: boolean): void {
    if (on) this.faults.add(call)
    else this.faults.delete(call)
  }

  count(call: string): number {
    return this.journal.filter((entry) => entry === call).length
  }

  /** The calls entered after the last stop published its intent. */
  afterLastStop(): Array<string> {
    const at = this.journal.lastIndexOf("stopRequested")
    return at === -1 ? [] : this.journal.slice(at + 1)
  }

  readonly releaseAll: Effect.Effect<void> = Effect.suspend(() =>
    Effect.forEach(this.latches, (latch) => latch.open, { discard: true })
  )

  private record(call: string): Effect.Effect<void> {
    return Effect.sync(() => {
      this.journal.push(call)
    })
  }

  private pause(point: Point, pullRequest?: number): Effect.Effect<void> {
    return Effect.suspend(() => {
      const index = this.armed.findIndex(
        (gate) =>
          gate.point === point &&
          (gate.pullRequest === undefined || pullRequest === undefined || gate.pullRequest === pullRequest)
      )
      const gate = this.armed[index]
      if (gate === undefined) return Effect.void
      this.armed.splice(index, 1)
      return Deferred.succeed(gate.reached, undefined).pipe(Effect.andThen(gate.latch.await))
    })
  }

  private failIf(call: Fault): Effect.Effect<void, RuntimeError> {
    return Effect.suspend(() =>
      this.faults.has(call) ? Effect.fail(new RuntimeError({ operation: call, detail: "injected fault" })) : Effect.void
    )
  }

  /** Options for `withEngine` that route the engine through this probe. */
  wrappers(): Required<Pick<EngineOptions, "runtime" | "health" | "workspaces" | "hooks" | "lifecycle">> {
    return {
      health: (real): CodeServerHealthShape => ({
        probe: (hostPort) => this.pause("health").pipe(Effect.andThen(real.probe(hostPort)))
      }),
      runtime: (real): ContainerRuntimeShape => ({
        ...real,
        ensureImage: (image, onProgress, login) =>
          this.record("ensureImage").pipe(
            Effect.andThen(this.pause("pull")),
            Effect.andThen(real.ensureImage(image, onProgress, login))
          ),
        provision: (spec, onProgress) =>
          this.record("provision").pipe(
            Effect.andThen(this.pause("beforeCreate")),
            Effect.andThen(real.provision(spec, onProgress)),
            Effect.tap(() => this.pause("afterCreate"))
          ),
        start: (containerId) =>
          this.record("start").pipe(
            Effect.andThen(this.pause("beforeStart")),
            Effect.andThen(real.start(containerId)),
            Effect.tap(() => this.pause("afterStart"))
          ),
        state: (containerId) => this.record("state").pipe(Effect.andThen(real.state(containerId))),
        listByLabel: (labels) => this.record("listByLabel").pipe(Effect.andThen(real.listByLabel(labels))),
        stop: (containerId) =>
          this.record("stop").pipe(Effect.andThen(this.failIf("stop")), Effect.andThen(real.stop(containerId))),
        destroy: (containerId, options) =>
          this.record("destroy").pipe(
            Effect.andThen(this.failIf("destroy")),
            Effect.andThen(real.destroy(containerId, options))
          ),
        exec: (containerId, argv, options) =>
          this.record("exec").pipe(
            Effect.andThen(this.pause("setup")),
            Effect.andThen(real.exec(containerId, argv, options))
          )
      }),
      workspaces: (real): Workspaces["Service"] => ({
        ...real,
        fetchPullRequest: (ref, options) =>
          this.record("fetch").pipe(Effect.andThen(real.fetchPullRequest(ref, options))),
        // The worker's clone: the PR was fetched (and its environment chosen) before admission.
        createWorkspace: (options) =>
          this.record("clone").pipe(
            Effect.andThen(this.pause("clone", pullRequestOfBranch(options.branchName))),
            Effect.andThen(real.createWorkspace(options))
          )
      }),
      hooks: (real): HooksShape => ({
        run: (hook, argv, context) =>
          this.record(`hook:${hook}`).pipe(
            Effect.andThen(hook === "onSandboxReady" ? this.pause("hook") : Effect.void),
            Effect.andThen(real.run(hook, argv, context))
          )
      }),
      lifecycle: (real): LifecycleShape => ({
        ...real,
        requestStop: (id) =>
          real
            .requestStop(id)
            .pipe(
              Effect.andThen(this.record("stopRequested")),
              Effect.andThen(Effect.suspend(() => Deferred.succeed(this.stopRequested, undefined)))
            )
      })
    }
  }
}

/**
 * `withEngine` routed through `probe`; its latches are all opened when the
 * body ends, before the engine (and its workers) shut down.
 */
export const withProbe = <A, E>(
  probe: Probe,
  options: Pick<EngineOptions, "config">,
  body: (fixture: EngineFixture) => Effect.Effect<A, E, SandboxService | SandboxRepo | ContainerRuntime>
) => withEngine({ ...options, ...probe.wrappers() }, (fixture) => Effect.ensuring(body(fixture), probe.releaseAll))

/** The sandbox's access password (rows written by this engine always have one). */
export const passwordOf = (row: Sandbox): string =>
  row.accessPassword === null ? "" : Redacted.value(row.accessPassword)

/** code-server's login form, without following the redirect. */
export const login = (port: number, password: string) =>
  Effect.promise(() =>
    fetch(`http://127.0.0.1:${port}/login`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ password }).toString()
    })
  )

/** The status of code-server's workbench page with `cookie` as the session: 200 let in, 302 sent to /login. */
export const workbenchStatus = (port: number, cookie: string) =>
  Effect.tryPromise(() =>
    fetch(`http://127.0.0.1:${port}/`, { headers: { cookie }, redirect: "manual" }).then((response) => response.status)
  )

export const healthz = (port: number) =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`)
    return { status: response.status, body: (await response.json()) as { readonly status?: unknown } }
  })
