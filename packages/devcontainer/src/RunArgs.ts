import { dockerSizeMb, hostName, isHostGateway, isIpv4, isIpv6, parseMountString } from "./DockerValues.ts"

// `runArgs` and `build.options` are `docker run` / `docker build` flags
// written by the PR. Each is sorted into what widens nothing (honoured, or
// ignored with one log line) and what widens the container or reaches the
// host (left out unless the repository is trusted). A flag prbox does not
// know is widening: it is never honoured on a guess.

/** What an honoured `runArgs` flag does. */
export type RunEffect =
  | { readonly _tag: "Env"; readonly name: string; readonly value: string }
  | { readonly _tag: "Init" }
  | { readonly _tag: "Hostname"; readonly hostname: string }
  | { readonly _tag: "ExtraHost"; readonly entry: string }
  | { readonly _tag: "NoNewPrivileges" }
  | { readonly _tag: "Cpus"; readonly cpus: number }
  | { readonly _tag: "Memory"; readonly mb: number }
  | { readonly _tag: "ShmSize"; readonly mb: number }
  | { readonly _tag: "Volume"; readonly source: string | null; readonly target: string; readonly readOnly: boolean }
  | { readonly _tag: "BuildArg"; readonly name: string; readonly value: string }

/**
 * One flag and its value: `index` is the flag's place in the array, `flag`
 * its name as it may be shown (never its value: PR content), `args` the
 * tokens it took (what a trusted repository's widening hands on).
 */
export type RunArg =
  | { readonly _tag: "Honoured"; readonly index: number; readonly flag: string; readonly effect: RunEffect }
  | { readonly _tag: "Ignored"; readonly index: number; readonly flag: string; readonly why: string }
  | {
      readonly _tag: "Widening"
      readonly index: number
      readonly flag: string
      readonly args: ReadonlyArray<string>
      readonly why: string
    }

const widens = "widens the container"
const dockerSocket = /docker\.sock/

type Outcome =
  | { readonly _tag: "Honoured"; readonly effect: RunEffect }
  | { readonly _tag: "Ignored"; readonly why: string }
  | { readonly _tag: "Widening"; readonly why: string }

const honoured = (effect: RunEffect): Outcome => ({ _tag: "Honoured", effect })
const ignored = (why: string): Outcome => ({ _tag: "Ignored", why })
const widening = (why: string): Outcome => ({ _tag: "Widening", why })
const notUnderstood = ignored("its value is not understood")

const addHost = (value: string): Outcome => {
  // `name:address` (the address may hold colons: IPv6) or `name=address`.
  const at = value.search(/[:=]/)
  if (at <= 0) return notUnderstood
  const name = value.slice(0, at)
  const address = value.slice(at + 1)
  if (isHostGateway(address)) return widening("points a name at this machine (the host's gateway)")
  if (!hostName.test(name) || !(isIpv4(address) || isIpv6(address))) return notUnderstood
  return honoured({ _tag: "ExtraHost", entry: `${name}:${address}` })
}

const env = (value: string): Outcome => {
  const at = value.indexOf("=")
  if (at < 0) return ignored("passes a variable of the host's environment, which prbox never reads")
  const name = value.slice(0, at)
  return /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(name)
    ? honoured({ _tag: "Env", name, value: value.slice(at + 1) })
    : notUnderstood
}

const securityOpt = (value: string): Outcome => {
  const [option = "", setting] = value.split(/[:=]/, 2)
  if (option !== "no-new-privileges") return widening(widens)
  if (setting === undefined || setting === "true") return honoured({ _tag: "NoNewPrivileges" })
  return setting === "false" ? ignored("it is Docker's default") : notUnderstood
}

// A source that is a path (or could be read as one) binds this machine's files; a name is a volume.
const isHostPath = (source: string) => /^[/.~]/.test(source) || source.includes("/") || source.includes("\\")

/** `-v source:target[:options]`: a bind when the source is a path, a volume when it is a name or absent. */
const volumeFlag = (value: string): Outcome => {
  if (dockerSocket.test(value)) return widening("mounts the Docker socket")
  const parts = value.split(":")
  const [first = "", second, options = ""] = parts
  if (second === undefined) {
    return first.startsWith("/")
      ? honoured({ _tag: "Volume", source: null, target: first, readOnly: false })
      : notUnderstood
  }
  if (parts.length > 3 || isHostPath(first)) return widening("mounts storage from the host")
  return honoured({ _tag: "Volume", source: first, target: second, readOnly: options.split(",").includes("ro") })
}

/** `--mount type=…,source=…,target=…`: only a volume is not widening. */
const mountFlag = (value: string): Outcome => {
  if (dockerSocket.test(value)) return widening("mounts the Docker socket")
  const mount = parseMountString(value)
  if (mount === undefined) return notUnderstood
  return mount.type === "volume"
    ? honoured({ _tag: "Volume", source: mount.source, target: mount.target, readOnly: mount.readOnly })
    : widening("mounts storage from the host")
}

const positive = (text: string): number | undefined => {
  const value = Number(text)
  return text.trim() !== "" && Number.isFinite(value) && value > 0 ? value : undefined
}

type Rule =
  | { readonly value: false; readonly decide: (value: string | undefined) => Outcome }
  | {
      readonly value: true
      readonly decide: (value: string) => Outcome
    }

const flagOnly = (decide: (value: string | undefined) => Outcome): Rule => ({ value: false, decide })
const withValue = (decide: (value: string) => Outcome): Rule => ({ value: true, decide })
const always = (outcome: Outcome) => withValue(() => outcome)
const bool = (on: Outcome, off: Outcome) =>
  flagOnly((value) => (value === undefined || value === "true" ? on : value === "false" ? off : notUnderstood))

const hostnameRule = withValue((value) =>
  hostName.test(value) ? honoured({ _tag: "Hostname", hostname: value }) : notUnderstood
)
// A label is read by tools on this machine (a proxy routes to containers by label): never the PR's to set.
const labelRule = always(ignored("labels are read by tools on this machine (proxies, updaters): prbox sets its own"))
const memoryRule = withValue((value) => {
  const mb = dockerSizeMb(value)
  return mb === undefined ? notUnderstood : honoured({ _tag: "Memory", mb })
})

const runRules: Readonly<Record<string, Rule>> = {
  "--name": always(ignored("prbox names its containers itself")),
  "--init": bool(honoured({ _tag: "Init" }), ignored("prbox always runs Docker's init")),
  "--hostname": hostnameRule,
  "-h": hostnameRule,
  "--label": labelRule,
  "-l": labelRule,
  "--env": withValue(env),
  "-e": withValue(env),
  "--env-file": always(widening("reads a file on this machine")),
  "--add-host": withValue(addHost),
  "--security-opt": withValue(securityOpt),
  "--cpus": withValue((value) => {
    const cpus = positive(value)
    return cpus === undefined ? notUnderstood : honoured({ _tag: "Cpus", cpus })
  }),
  "--memory": memoryRule,
  "-m": memoryRule,
  "--shm-size": withValue((value) => {
    const mb = dockerSizeMb(value)
    return mb === undefined ? notUnderstood : honoured({ _tag: "ShmSize", mb })
  }),
  "--volume": withValue(volumeFlag),
  "-v": withValue(volumeFlag),
  "--mount": withValue(mountFlag),
  "--privileged": bool(widening(widens), ignored("it is Docker's default")),
  "--cap-add": always(widening(widens)),
  "--device": always(widening("gives the container a device of this machine")),
  "--gpus": always(widening("gives the container this machine's GPUs")),
  "--network": always(widening("joins the container to another network")),
  "--net": always(widening("joins the container to another network")),
  "--publish": always(widening("publishes a port on this machine")),
  "-p": always(widening("publishes a port on this machine")),
  "--publish-all": flagOnly(() => widening("publishes a port on this machine")),
  "-P": flagOnly(() => widening("publishes a port on this machine")),
  "--pid": always(widening("shares a namespace of this machine")),
  "--ipc": always(widening("shares a namespace of this machine")),
  "--uts": always(widening("shares a namespace of this machine")),
  "--userns": always(widening("shares a namespace of this machine")),
  "--cgroupns": always(widening("shares a namespace of this machine"))
}

const buildRules: Readonly<Record<string, Rule>> = {
  "--build-arg": withValue((value) => {
    const at = value.indexOf("=")
    return at <= 0
      ? ignored("passes a variable of the host's environment, which prbox never reads")
      : honoured({ _tag: "BuildArg", name: value.slice(0, at), value: value.slice(at + 1) })
  }),
  "--pull": flagOnly(() => ignored("prbox decides when an image is pulled")),
  "--no-cache": flagOnly(() => ignored("prbox reuses a build only when its inputs are unchanged")),
  "--progress": always(ignored("prbox shows the build's progress itself")),
  "--quiet": flagOnly(() => ignored("prbox shows the build's progress itself")),
  "-q": flagOnly(() => ignored("prbox shows the build's progress itself")),
  "--label": always(ignored("prbox labels the images it builds itself")),
  "--platform": always(ignored("prbox builds for the engine's platform"))
}

const unknownWhy = "is not a flag prbox knows, and an unknown flag may widen the container"
const unknownFlag = widening(unknownWhy)

/** The flag's name as it may be shown: a plain `--name` or `-x`, else "an argument" (PR content). */
const shown = (flag: string): string => (/^--?[A-Za-z0-9][A-Za-z0-9-]{0,40}$/.test(flag) ? flag : "an argument")

const classify = (args: ReadonlyArray<string>, rules: Readonly<Record<string, Rule>>): ReadonlyArray<RunArg> => {
  const found: Array<RunArg> = []
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] ?? ""
    const start = index
    let flag = arg
    let inline: string | undefined
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=")
      if (eq > 0) [flag, inline] = [arg.slice(0, eq), arg.slice(eq + 1)]
    } else if (/^-[A-Za-z]./.test(arg) && rules[arg.slice(0, 2)]?.value === true) {
      // `-eNAME=value` and `-e=NAME=value`, as Docker's shorthand flags take them.
      flag = arg.slice(0, 2)
      inline = arg.slice(2).replace(/^=/, "")
    }
    const rule = rules[flag]
    const next = args[index + 1]
    // A value not given inline is the next argument (for an unknown flag too, unless it is a flag itself).
    const takesNext =
      inline === undefined &&
      (rule === undefined ? next !== undefined && !next.startsWith("-") && arg.startsWith("-") : rule.value)
    const value = inline ?? (takesNext ? next : undefined)
    if (takesNext && next !== undefined) index++
    const taken = args.slice(start, index + 1)
    const outcome: Outcome =
      rule === undefined
        ? unknownFlag
        : rule.value
          ? value === undefined
            ? notUnderstood
            : rule.decide(value)
          : rule.decide(value)
    // The Docker socket is named whatever flag carries it.
    const why =
      outcome._tag === "Widening" && taken.some((token) => dockerSocket.test(token))
        ? "mounts the Docker socket"
        : undefined
    found.push(
      outcome._tag === "Honoured"
        ? { _tag: "Honoured", index: start, flag: shown(flag), effect: outcome.effect }
        : outcome._tag === "Ignored"
          ? { _tag: "Ignored", index: start, flag: shown(flag), why: outcome.why }
          : { _tag: "Widening", index: start, flag: shown(flag), args: taken, why: why ?? outcome.why }
    )
  }
  return found
}

/** Each `runArgs` flag (both `--flag value` and `--flag=value`) sorted into honoured, ignored and widening. */
export const classifyRunArgs = (args: ReadonlyArray<string>): ReadonlyArray<RunArg> => classify(args, runRules)

/**
 * Each `build.options` flag: `--build-arg` honoured, the ones that change
 * only how the build is shown or cached ignored, the rest (network, secrets,
 * SSH, build contexts and caches on this machine, outputs) widening.
 */
export const classifyBuildOptions = (args: ReadonlyArray<string>): ReadonlyArray<RunArg> =>
  classify(args, buildRules).map((found) =>
    found._tag === "Widening" && found.why === unknownWhy ? { ...found, why: "reaches the host" } : found
  )
