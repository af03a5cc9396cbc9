/**
 * The engine's helper containers: short-lived containers it makes for
 * itself, never a sandbox's (a folder helper of an empty image, the shared
 * volume's filler, the files probe). Each carries PROBE_LABEL, whose value
 * names the process that made it, and its home's and install's labels: a
 * daemon's next start removes the ones a killed process left behind.
 */

/** Labels every helper container; its value is the maker: the process that made it. */
export const PROBE_LABEL = "dev.prbox.probe"

/** A helper's Docker state as the decision needs it: never started, ended, or anything else (running, paused...). */
export type HelperState = "created" | "exited" | "other"

/** What a listed container's labels and state say of it. */
export interface HelperFacts {
  /** PROBE_LABEL's value; undefined: not a helper. */
  readonly maker: string | undefined
  readonly home: string | undefined
  readonly install: string | undefined
  /** It carries a sandbox's, a Compose service's or a warm pool container's label. */
  readonly sandboxLabelled: boolean
  readonly state: HelperState
}

/** The daemon that judges: its home, its install id, and the maker value its own helpers carry. */
export interface HelperJudge {
  readonly home: string
  readonly install: string
  readonly maker: string
}

/**
 * Whether a listed container is a helper a killed process of this home and
 * install left behind: a helper (PROBE_LABEL) of exactly this home and
 * install (both labels, equal), made by another process than this one,
 * never started or ended, and nothing of a sandbox's. Anything else is kept.
 */
export const decideLeftoverHelper = (facts: HelperFacts, judge: HelperJudge): "Remove" | "Keep" =>
  facts.maker !== undefined &&
  facts.maker !== judge.maker &&
  facts.home === judge.home &&
  facts.install === judge.install &&
  !facts.sandboxLabelled &&
  facts.state !== "other"
    ? "Remove"
    : "Keep"
