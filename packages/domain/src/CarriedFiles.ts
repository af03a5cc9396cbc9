/*
 * Where a sandbox's files come from on an engine: this machine's folders
 * bind-mounted ("host"), or carried into the engine's volumes ("engine")
 * when the engine runs elsewhere and cannot see them.
 */

export type FilesAt = "host" | "engine"

/** What the engine probe found (see the engine's EngineProbe): local sees this machine's files. */
export type ProbedLocation = "local" | "remote" | "unknown"

/** An unknown location is never guessed: nothing is made until the probe can answer. */
export const filesAtOf = (
  location: ProbedLocation,
  detail: string
): { readonly _tag: "Known"; readonly at: FilesAt } | { readonly _tag: "Unknown"; readonly reason: string } =>
  location === "unknown"
    ? { _tag: "Unknown", reason: `cannot tell whether the Docker engine sees this machine's files: ${detail}` }
    : { _tag: "Known", at: location === "local" ? "host" : "engine" }

/** The folders a sandbox carries: its workspace and its home. */
export type CarriedKind = "workspace" | "home"

/** `prbox-<sandbox id>-workspace`, from the sandbox's container name `prbox-<sandbox id>`. */
export const carriedVolumeName = (containerName: string, kind: CarriedKind): string => `${containerName}-${kind}`

/**
 * A volume the PR's configuration asks for, the sandbox's own:
 * `prbox-<sandbox id>-volume-<source>`, or `prbox-<sandbox id>-anonymous-<n>`
 * for the n-th one without a source. Sources are checked to be volume names
 * (letters, digits, `_.-`) where the configuration is read.
 */
export const sandboxVolumeName = (containerName: string, source: string | null, anonymousIndex: number): string =>
  source === null ? `${containerName}-anonymous-${anonymousIndex}` : `${containerName}-volume-${source}`

/** The code-server distribution's read-only volume, one per distribution key (its version and architecture). */
export const codeServerVolumeName = (key: string): string => `prbox-code-server-${key}`

/** Why a sandbox with the user's own mounts cannot be made on an engine that does not see this machine's files. */
export const mountsRefusal = (sources: ReadonlyArray<string>): string =>
  `the Docker engine runs on another machine and cannot mount this machine's folders (${sources.join(", ")}): remove these mounts from config.json (or the trusted widening) or use a local engine`

const UNITS = ["B", "kB", "MB", "GB", "TB"] as const

/** Decimal units, one decimal from kB on: 999 B, 12.3 MB. */
export const byteSize = (bytes: number): string => {
  let value = bytes
  let unit = 0
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000
    unit += 1
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`
}

/** "copying the workspace to the engine: 12.3 MB of 40.1 MB (1,234 files)"; `what` names the folder ("the workspace"). */
export const copyProgressLine = (what: string, sentBytes: number, totalBytes: number, files: number): string =>
  `copying ${what} to the engine: ${byteSize(sentBytes)} of ${byteSize(totalBytes)} (${files.toLocaleString("en-US")} file${files === 1 ? "" : "s"})`

/** While bytes flow, a progress line every this many bytes; the first (the total) and the last always. */
export const COPY_PROGRESS_STEP_BYTES = 8 * 1000 * 1000

export const copyProgressDue = (lastReportedBytes: number, sentBytes: number, totalBytes: number): boolean =>
  sentBytes === totalBytes || sentBytes - lastReportedBytes >= COPY_PROGRESS_STEP_BYTES
