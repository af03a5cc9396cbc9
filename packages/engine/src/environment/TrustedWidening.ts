import type { Widening } from "@prbox/devcontainer"

/** The container settings a trusted repository asked for, before its mounts are checked against the home. */
export interface RequestedWidening {
  readonly privileged: boolean
  readonly capAdd: ReadonlyArray<string>
  readonly securityOpt: ReadonlyArray<string>
  readonly mounts: ReadonlyArray<{ readonly source: string; readonly target: string; readonly readOnly: boolean }>
  /** What prbox does not apply, each a warning. */
  readonly ignored: ReadonlyArray<string>
}

/** `--flag value` and `--flag=value`. */
const flagValue = (args: ReadonlyArray<string>, index: number, flag: string): readonly [string | undefined, number] => {
  const arg = args[index] ?? ""
  if (arg.startsWith(`${flag}=`)) return [arg.slice(flag.length + 1), index]
  return [args[index + 1], index + 1]
}

/**
 * A trusted repository's widening as container settings. Its `runArgs` are
 * only the flags that widen (devcontainer RunArgs.ts; the rest every
 * repository gets): those with a setting here are applied (`--privileged`,
 * `--cap-add`, `--security-opt`, `--volume`/`-v` binds); the rest are
 * reported and ignored. Named volumes are not widening: they never get here.
 */
export const decideWidening = (widening: Widening): RequestedWidening => {
  const capAdd = [...widening.capAdd]
  const securityOpt = [...widening.securityOpt]
  const mounts: Array<RequestedWidening["mounts"][number]> = []
  const ignored: Array<string> = []
  let privileged = widening.privileged
  const bind = (spec: string) => {
    const [source, target, mode] = spec.split(":")
    if (source === undefined || target === undefined || !source.startsWith("/")) ignored.push(`volume ${spec}`)
    else mounts.push({ source, target, readOnly: mode === "ro" })
  }
  for (const mount of widening.mounts) {
    if (mount.type === "bind" && mount.source !== null)
      mounts.push({ source: mount.source, target: mount.target, readOnly: mount.readOnly })
    else ignored.push(`mount ${mount.type} ${mount.target}`)
  }
  const args = widening.runArgs
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] ?? ""
    if (arg === "--privileged") privileged = true
    else if (arg === "--cap-add" || arg.startsWith("--cap-add=")) {
      const [value, next] = flagValue(args, index, "--cap-add")
      if (value !== undefined) capAdd.push(value)
      index = next
    } else if (arg === "--security-opt" || arg.startsWith("--security-opt=")) {
      const [value, next] = flagValue(args, index, "--security-opt")
      if (value !== undefined) securityOpt.push(value)
      index = next
    } else if (arg === "-v" || arg === "--volume" || arg.startsWith("--volume=")) {
      const [value, next] = flagValue(args, index, arg === "-v" ? "-v" : "--volume")
      if (value !== undefined) bind(value)
      index = next
    } else ignored.push(`runArgs ${arg}`)
  }
  if (widening.workspaceMount !== null) ignored.push("workspaceMount (prbox mounts the PR's workspace)")
  if (widening.appPort.length > 0) ignored.push("appPort (prbox publishes code-server only; previews come later)")
  if (widening.buildOptions.length > 0) ignored.push("build.options")
  return { privileged, capAdd, securityOpt, mounts, ignored }
}
