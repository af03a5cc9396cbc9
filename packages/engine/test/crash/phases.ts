import { Effect, type Scope } from "effect"

/** The points at which the crash test kills the engine, in the order the table lists them. */
export const PHASES = [
  "after-row-insert",
  "mid-clone",
  "after-create-before-start",
  "after-start-before-running",
  "mid-stop",
  "mid-retirement",
  "mid-destroy",
  "mid-gc-cleanup",
  "mid-migration",
  "fenced"
] as const

export type Phase = (typeof PHASES)[number]

export const isPhase = (value: string | undefined): value is Phase => PHASES.some((phase) => phase === value)

/** Where helper-child.ts is killed: a folder read's helper container exists (LeftoverHelpers.test.ts). */
export const HELPER_PHASE = "mid-folder-read"

/** The line the child prints (synchronously) once it reached the phase; it then blocks until killed. */
export const phaseLine = (phase: string): string => `PHASE ${phase}`

/** How the child learns where it runs (argv[2] is the phase). */
export const CHILD_ENV = {
  home: "PRBOX_HOME",
  remote: "PRBOX_CRASH_REMOTE",
  runId: "PRBOX_CRASH_RUN_ID",
  image: "PRBOX_CRASH_IMAGE"
} as const

/** The child's environment: its home, the remote it opens, the test run's id, the image. */
export const childEnv = (home: string, remote: string, runId: string, image: string): Record<string, string> => ({
  [CHILD_ENV.home]: home,
  [CHILD_ENV.remote]: remote,
  [CHILD_ENV.runId]: runId,
  [CHILD_ENV.image]: image
})

/**
 * Runs a child's program, which never ends by itself (the parent kills it
 * at its phase): an end or a failure before is said on stderr, exit 2 or 1.
 */
export const runChild = (phase: string, program: Effect.Effect<unknown, unknown, Scope.Scope>): void => {
  // Effect.never alone does not hold Node's event loop open.
  const keepAlive = setInterval(() => undefined, 1 << 30)
  Effect.runPromise(Effect.scoped(program)).then(
    () => {
      clearInterval(keepAlive)
      process.stderr.write(`the child ended without reaching ${phase}\n`)
      process.exit(2)
    },
    (error: unknown) => {
      clearInterval(keepAlive)
      process.stderr.write(`the child failed before reaching ${phase}: ${String(error)}\n`)
      process.exit(1)
    }
  )
}

/** The PR every phase opens (legacy rows of the seeded phases are of this PR too). */
export const PULL_REQUEST = 1
