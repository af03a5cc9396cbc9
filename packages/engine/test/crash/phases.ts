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

/** The line the child prints (synchronously) once it reached the phase; it then blocks until killed. */
export const phaseLine = (phase: string): string => `PHASE ${phase}`

/** How the child learns where it runs (argv[2] is the phase). */
export const CHILD_ENV = {
  home: "PRBOX_HOME",
  remote: "PRBOX_CRASH_REMOTE",
  runId: "PRBOX_CRASH_RUN_ID",
  image: "PRBOX_CRASH_IMAGE"
} as const

/** The PR every phase opens (legacy rows of the seeded phases are of this PR too). */
export const PULL_REQUEST = 1
