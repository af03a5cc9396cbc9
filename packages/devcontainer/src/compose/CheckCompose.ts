import { Effect } from "effect"
import { DevcontainerError } from "../Errors.ts"
import { leftOutDetail, leftOutWarning } from "../Policy.ts"
import { buildRule } from "./ComposeBuild.ts"
import { SERVICE_NAME } from "./ComposeSource.ts"
import { type CheckedCompose, type ComposeBuild, type ComposeCheckInput, IMAGE_TO_BE_FILLED } from "./ComposeTypes.ts"
import { DROP, type Finding, isRecord } from "./ComposeValues.ts"
import { dependenciesOf } from "./Dependencies.ts"
import { serviceKeyRule } from "./ServiceRules.ts"
import { type TopLevelKind, topLevelRule } from "./TopLevel.ts"

// The rendered project (what `docker compose config` prints, parsed) under
// prbox's policy, service by service (issue 29 item 3, with issue 28's
// open-without-widening rule), cleaned into the copy prbox runs.

const KINDS: ReadonlyArray<TopLevelKind> = ["networks", "volumes", "secrets", "configs"]
const TOP_LEVEL = new Set(["version", "name", "services", ...KINDS])

/** A service's `secrets` / `configs` without the entries naming one left out. */
const withoutRemoved = (value: unknown, removed: ReadonlySet<string>): unknown =>
  Array.isArray(value)
    ? value.filter(
        (entry) => !removed.has(typeof entry === "string" ? entry : isRecord(entry) ? String(entry.source) : "")
      )
    : value

const inNoProfile = (definition: unknown) =>
  !isRecord(definition) || !Array.isArray(definition.profiles) || definition.profiles.length === 0

/**
 * The services to start, with what they need: `service` and `runServices`;
 * without `runServices`, what a plain `up` starts (every service in no
 * profile) and `service`.
 */
const startSet = (
  services: Readonly<Record<string, unknown>>,
  service: string,
  runServices: ReadonlyArray<string> | undefined
): ReadonlyArray<string> => {
  const first = runServices ?? Object.keys(services).filter((name) => inNoProfile(services[name]))
  const wanted = new Set([service, ...first])
  const queue = [...wanted]
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    for (const dependency of dependenciesOf(services[name])) {
      if (!wanted.has(dependency) && dependency in services) {
        wanted.add(dependency)
        queue.push(dependency)
      }
    }
  }
  return Object.keys(services).filter((name) => wanted.has(name))
}

/** The rendered project checked and cleaned; widening left out (listed) or refused as `input` says. */
export const checkComposeProject = (
  rendered: unknown,
  input: ComposeCheckInput
): Effect.Effect<CheckedCompose, DevcontainerError> =>
  Effect.gen(function* () {
    const file = input.file
    const fail = (property: string, detail: string) => Effect.fail(new DevcontainerError({ file, property, detail }))
    if (!isRecord(rendered) || !isRecord(rendered.services)) {
      return yield* Effect.fail(new DevcontainerError({ file, detail: "the Compose configuration has no services" }))
    }
    const all = rendered.services
    if (!Object.keys(all).every((name) => SERVICE_NAME.test(name))) {
      return yield* fail("services", "holds a name that is not a Compose service name")
    }
    const unknownTop = Object.keys(rendered).find((key) => !TOP_LEVEL.has(key) && !key.startsWith("x-"))
    if (unknownTop !== undefined) {
      return yield* fail(unknownTop, "is not a top-level Compose key prbox knows (refused rather than run unchecked)")
    }
    if (!(input.service in all)) return yield* fail("service", "names no service of the Compose configuration")
    const missing = input.runServices?.findIndex((name) => !(name in all)) ?? -1
    if (missing >= 0) return yield* fail(`runServices[${missing}]`, "names no service of the Compose configuration")
    const honoured = input.trusted && input.withheld === null
    const started = startSet(all, input.service, input.runServices)
    const names = new Set(Object.keys(all))
    const projectName = typeof rendered.name === "string" ? rendered.name : undefined
    const widening: Array<Finding> = []
    const warnings: Array<string> = []
    const refusals: Array<Finding> = []
    const top: Record<string, Readonly<Record<string, unknown>>> = {}
    const removed = new Map<TopLevelKind, ReadonlySet<string>>()
    for (const kind of KINDS) {
      const result = topLevelRule(kind, rendered[kind], input.repositoryRoot, projectName)
      if (result.refusal !== undefined) refusals.push(result.refusal)
      widening.push(...result.widening)
      removed.set(kind, honoured ? new Set() : result.removed)
      const kept = honoured ? result.trusted : result.untrusted
      if (Object.keys(kept).length > 0) top[kind] = kept
    }
    const services: Record<string, Record<string, unknown>> = {}
    const builds: Array<ComposeBuild> = []
    for (const name of started) {
      const at = `services.${name}`
      const definition = all[name]
      if (!isRecord(definition)) return yield* fail(at, "expected a mapping")
      const cleaned: Record<string, unknown> = {}
      for (const [key, value] of Object.entries(definition)) {
        if (key === "build") {
          const build = buildRule(name, `${at}.build`, input.repositoryRoot, value)
          if (build.refusal !== undefined) refusals.push(build.refusal)
          if (build.build !== undefined) builds.push(build.build)
          warnings.push(...build.notes)
          if (honoured)
            warnings.push(
              ...build.widening.map((one) => `${one.property} is not applied: prbox builds the image itself`)
            )
          else widening.push(...build.widening)
          continue
        }
        const result = serviceKeyRule(key, value, { at, root: input.repositoryRoot, services: names })
        if (result.refusal !== undefined) refusals.push(result.refusal)
        widening.push(...result.widening)
        warnings.push(...result.notes)
        const kept = honoured ? result.trusted : result.untrusted
        if (kept === DROP) continue
        cleaned[key] =
          key === "secrets" || key === "configs" ? withoutRemoved(kept, removed.get(key) ?? new Set()) : kept
      }
      if (builds.some((build) => build.service === name)) cleaned.image = IMAGE_TO_BE_FILLED
      services[name] = cleaned
    }
    const [refusal] = refusals
    if (refusal !== undefined) return yield* fail(refusal.property, refusal.detail)
    const hint = input.withheld ?? "the repository is not trusted"
    const left = honoured ? [] : widening
    const [first] = left
    if (first !== undefined && input.untrustedWidening === "refuse") {
      return yield* fail(
        first.property,
        `refused: it ${first.detail}, and the repository's content is untrusted; ${hint}`
      )
    }
    warnings.push(...left.map((one) => leftOutWarning(file, one)))
    return {
      project: {
        ...(rendered.version === undefined ? {} : { version: rendered.version }),
        services,
        ...top
      },
      services: started,
      builds,
      ignored: left.map((one) => ({ property: one.property, detail: leftOutDetail(one, hint) })),
      warnings
    } satisfies CheckedCompose
  })
