import { resolveInRepository } from "../Paths.ts"
import type { ComposeBuild } from "./ComposeTypes.ts"
import { type Finding, inRepository, isRecord, scalarText } from "./ComposeValues.ts"

// A service's `build` as the engine builds it itself (its content-keyed build
// path, from the PR's commit): context and Dockerfile inside the repository
// (else the service cannot run: refused), args, target. Compose never builds.
// What reaches the host at build time (ssh agent, secrets, the host's
// network, privileged builds) is left out; cache and tag settings are
// prbox's own.

export interface BuildResult {
  readonly build?: ComposeBuild
  /** What an untrusted repository's build leaves out. */
  readonly widening: ReadonlyArray<Finding>
  readonly refusal?: Finding
  readonly notes: ReadonlyArray<string>
}

const WIDENING_KEYS: Readonly<Record<string, string>> = {
  ssh: "gives the build the host's SSH agent or keys",
  secrets: "gives the build secrets from the host",
  privileged: "runs the build privileged",
  entitlements: "gives the build entitlements"
}

/** Build keys prbox's own build path decides: not used, said once. */
const PRBOX_OWN = new Set([
  "cache_from",
  "cache_to",
  "tags",
  "labels",
  "no_cache",
  "pull",
  "platforms",
  "shm_size",
  "isolation",
  "ulimits"
])

const argsOf = (value: unknown): Record<string, string> | undefined => {
  if (value === undefined) return {}
  const pairs: ReadonlyArray<readonly [string, unknown]> = Array.isArray(value)
    ? value.map((entry) => {
        const text = String(entry)
        const split = text.indexOf("=")
        return split < 0 ? ([text, null] as const) : ([text.slice(0, split), text.slice(split + 1)] as const)
      })
    : isRecord(value)
      ? Object.entries(value)
      : []
  if (!Array.isArray(value) && !isRecord(value)) return undefined
  // An arg without a value takes its value from Compose's (scrubbed) environment: none.
  return Object.fromEntries(
    pairs.flatMap(([name, arg]) => {
      const text = scalarText(arg)
      return text === undefined ? [] : [[name, text]]
    })
  )
}

/** The `build` of service `name` (`at`: `services.<name>.build`) against the repository at `root`. */
export const buildRule = (name: string, at: string, root: string, value: unknown): BuildResult => {
  const fail = (property: string, detail: string): BuildResult => ({
    widening: [],
    refusal: { property, detail },
    notes: []
  })
  const build = typeof value === "string" ? { context: value } : isRecord(value) ? value : undefined
  if (build === undefined) return fail(at, "expected a context path or a mapping")
  const contextPath = typeof build.context === "string" ? build.context : undefined
  if (contextPath === undefined) return fail(`${at}.context`, "missing: prbox builds from a folder of the repository")
  const context = inRepository(root, contextPath)
  if (context === undefined) {
    return fail(
      `${at}.context`,
      "must be a folder inside the repository (a URL or a host folder cannot be built from the PR's commit)"
    )
  }
  if (build.dockerfile_inline !== undefined)
    return fail(`${at}.dockerfile_inline`, "is not supported: name a Dockerfile in the repository")
  if (build.additional_contexts !== undefined)
    return fail(`${at}.additional_contexts`, "is not supported: one build context only")
  const dockerfileText = build.dockerfile === undefined ? "Dockerfile" : scalarText(build.dockerfile)
  const dockerfile =
    dockerfileText === undefined
      ? undefined
      : dockerfileText.startsWith("/")
        ? inRepository(root, dockerfileText)
        : resolveInRepository(context === "." ? "" : context, dockerfileText)
  if (dockerfile === undefined || dockerfile === ".")
    return fail(`${at}.dockerfile`, "must be a file inside the repository")
  const args = argsOf(build.args)
  if (args === undefined) return fail(`${at}.args`, "expected a list or a mapping")
  const target = build.target === undefined ? undefined : scalarText(build.target)
  const widening: Array<Finding> = []
  const notes: Array<string> = []
  const unused: Array<string> = []
  for (const [key, option] of Object.entries(build)) {
    if (["context", "dockerfile", "args", "target"].includes(key) || key.startsWith("x-")) continue
    const detail = WIDENING_KEYS[key]
    if (detail !== undefined) widening.push({ property: `${at}.${key}`, detail })
    else if (key === "network") {
      if (option === "host") widening.push({ property: `${at}.network`, detail: "builds on the host's network" })
      else unused.push(key)
    } else if (key === "extra_hosts") {
      if (JSON.stringify(option).includes("host-gateway")) {
        widening.push({ property: `${at}.extra_hosts`, detail: "names the host's gateway (reaches the host)" })
      } else unused.push(key)
    } else if (PRBOX_OWN.has(key)) unused.push(key)
    else return fail(`${at}.${key}`, "is not a Compose build key prbox knows (refused rather than run unchecked)")
  }
  if (unused.length > 0) notes.push(`${at}: ${unused.join(", ")} not used: prbox builds the image itself`)
  // prbox builds without these for every repository: a trusted one is told, an untrusted one has them listed.
  return {
    build: { service: name, context, dockerfile, args, ...(target === undefined ? {} : { target }) },
    widening,
    notes
  }
}
