// What the Compose check takes and gives: the contract between the pure check
// (this package) and the engine, which renders the project with the user's
// Compose, hands the rendered configuration here, and runs the cleaned copy.

/** The image a built service gets in the cleaned project until the engine writes the tag it built. */
export const IMAGE_TO_BE_FILLED = "<to be filled by the engine>"

/** A Compose project as it is written back: plain JSON (Compose reads JSON as YAML). */
export interface ComposeProject {
  readonly services: Readonly<Record<string, Readonly<Record<string, unknown>>>>
  readonly networks?: Readonly<Record<string, unknown>>
  readonly volumes?: Readonly<Record<string, unknown>>
  readonly secrets?: Readonly<Record<string, unknown>>
  readonly configs?: Readonly<Record<string, unknown>>
  readonly [key: string]: unknown
}

export interface ComposeCheckInput {
  /** The devcontainer.json (or the Compose file) named in messages. */
  readonly file: string
  /** devcontainer.json's `service`: the sandbox's own container. */
  readonly service: string
  /** devcontainer.json's `runServices`; undefined starts every service. */
  readonly runServices: ReadonlyArray<string> | undefined
  /** Absolute host path of prbox's own copy of the repository, as the rendered paths show it. */
  readonly repositoryRoot: string
  /** Whether the user's config.json trusts the repository (and its widening is not withheld). */
  readonly trusted: boolean
  /** config.json's `untrustedWidening`. */
  readonly untrustedWidening: "omit" | "refuse"
  /** Why widening is left out (the spec's `withheld`); null when the repository's is honoured. */
  readonly withheld: string | null
}

/** A service's image as the engine builds it (never Compose): paths repository-relative. */
export interface ComposeBuild {
  readonly service: string
  /** Repository-relative ("." for the root). */
  readonly context: string
  /** Repository-relative. */
  readonly dockerfile: string
  readonly args: Readonly<Record<string, string>>
  readonly target?: string
}

export interface CheckedCompose {
  /** The cleaned project: only the services to start, widening left out unless trusted, builds replaced by `IMAGE_TO_BE_FILLED`. */
  readonly project: ComposeProject
  /** The services to start: `service`, `runServices` and what they depend on (without `runServices`, every service in no profile). */
  readonly services: ReadonlyArray<string>
  readonly builds: ReadonlyArray<ComposeBuild>
  /** The widening left out, each `{ property: "services.<name>.<key>", detail }`. */
  readonly ignored: ReadonlyArray<{ readonly property: string; readonly detail: string }>
  readonly warnings: ReadonlyArray<string>
}
