import { Effect, FileSystem, Semaphore } from "effect"
import type { ChildProcessSpawner } from "effect/process"
import type { CodeServerDistribution } from "../../SandboxTools.ts"
import { CodeServerUnavailable } from "../../SandboxTools.ts"
import { codeServerPasswordEnv } from "./CodeServerPassword.ts"
import { commandOutput, onPath, runStep, type StepFailure } from "./HostSteps.ts"

/**
 * code-server for images that do not contain it: one distribution per
 * version on the host, mounted read-only into the container and run with its
 * own Node. Built once from the npm registry only: the `node-linux-<arch>`
 * package (Node's binary and headers) and the `code-server` package, whose
 * native modules are built on this host (so they link against its glibc:
 * the image needs glibc too, see GLIBC_LOADERS).
 */
export const CODE_SERVER_VERSION = "4.139.1"
export const CODE_SERVER_NODE_VERSION = "24.21.0"

export type Arch = "x64" | "arm64"

/** The dynamic loader every glibc binary of the distribution needs, per architecture. */
export const GLIBC_LOADERS: Readonly<Record<Arch, string>> = {
  x64: "/lib64/ld-linux-x86-64.so.2",
  arm64: "/lib/ld-linux-aarch64.so.1"
}

const NODE = "bin/node"
const ENTRY = "lib/node_modules/code-server/out/node/entry.js"
/** Host tools the native modules build with, and the Debian package that provides each. */
const BUILD_TOOLS: ReadonlyArray<readonly [tool: string, pkg: string]> = [
  ["python3", "python3"],
  ["make", "make"],
  ["g++", "g++"],
  ["krb5-config", "libkrb5-dev"]
]

const hostArch = (): Arch | undefined => (process.arch === "x64" || process.arch === "arm64" ? process.arch : undefined)

/** `<version>-node<node version>-<arch>`: the distribution's directory name under `dir`. */
export const distributionName = (arch: Arch): string => `${CODE_SERVER_VERSION}-node${CODE_SERVER_NODE_VERSION}-${arch}`

const STAGE_SCRIPT = new URL("./code-server/stage.sh", import.meta.url).pathname

/** One build at a time in this process; the final rename makes concurrent processes safe too. */
const building = Semaphore.makeUnsafe(1)

const unavailable = (detail: string) => new CodeServerUnavailable({ detail })
const stepFailed = (failure: StepFailure) => unavailable(`${failure.step} failed (${failure.detail})`)

/** npm as the running Node ships it (`<prefix>/lib/node_modules/npm/bin/npm-cli.js`), else `npm` on PATH. */
const findNpm = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem
  const cli = `${process.execPath.replace(/\/bin\/[^/]+$/, "")}/lib/node_modules/npm/bin/npm-cli.js`
  if (yield* fs.exists(cli).pipe(Effect.orElseSucceed(() => false))) return { cli }
  if ((yield* onPath("npm")) !== undefined) return { cli: undefined }
  return yield* unavailable("npm was not found next to Node or on PATH: install npm")
})

const checkBuildTools = Effect.gen(function* () {
  const missing: Array<string> = []
  for (const [tool, pkg] of BUILD_TOOLS) if ((yield* onPath(tool)) === undefined) missing.push(pkg)
  if (missing.length > 0) {
    return yield* unavailable(
      `building code-server's native modules needs ${missing.join(", ")}: install them (apt-get install ${missing.join(" ")})`
    )
  }
})

const complete = (fs: FileSystem.FileSystem, root: string) =>
  Effect.all([fs.exists(`${root}/${NODE}`), fs.exists(`${root}/${ENTRY}`)]).pipe(
    Effect.map(([node, entry]) => node && entry),
    Effect.orElseSucceed(() => false)
  )

/** Builds the distribution in a temporary directory under `dir` and renames it to `root` when complete. */
const build = Effect.fn("CodeServerDistribution.build")(function* (
  dir: string,
  root: string,
  arch: Arch,
  onProgress: (line: string) => Effect.Effect<void>
) {
  const fs = yield* FileSystem.FileSystem
  const npm = yield* findNpm
  yield* checkBuildTools
  const npmArgs = (args: ReadonlyArray<string>) =>
    npm.cli === undefined ? (["npm", args] as const) : ([process.execPath, [npm.cli, ...args]] as const)
  const hostFailure = (operation: string) => () => unavailable(`could not ${operation}`)
  yield* Effect.scoped(
    Effect.gen(function* () {
      const work = yield* fs
        .makeTempDirectoryScoped({ directory: dir, prefix: ".build-" })
        .pipe(Effect.mapError(hostFailure(`create a build directory in ${dir}`)))
      const nodePackage = `node-linux-${arch}@${CODE_SERVER_NODE_VERSION}`
      yield* onProgress(`fetching ${nodePackage}`)
      const [npmFile, packArgs] = npmArgs(["pack", "--silent", "--pack-destination", work, nodePackage])
      const packed = (yield* commandOutput(`npm pack ${nodePackage}`, npmFile, packArgs).pipe(
        Effect.mapError(stepFailed)
      ))
        .split("\n")
        .pop()
      if (packed === undefined || packed.length === 0)
        return yield* unavailable(`npm pack ${nodePackage} printed no file`)
      yield* runStep(`unpacking ${nodePackage}`, "tar", ["-xzf", `${work}/${packed}`, "-C", work], {
        onProgress
      }).pipe(Effect.mapError(stepFailed))
      const prefix = `${work}/prefix`
      yield* runStep(
        `installing code-server@${CODE_SERVER_VERSION}`,
        "bash",
        [STAGE_SCRIPT, `${work}/package`, CODE_SERVER_VERSION, arch, prefix],
        { env: { NPM_CLI: npm.cli }, onProgress }
      ).pipe(Effect.mapError(stepFailed))
      // Another process may have finished first: its complete copy wins.
      yield* fs
        .rename(prefix, root)
        .pipe(
          Effect.catch((error) =>
            complete(fs, root).pipe(
              Effect.flatMap((done) =>
                done ? Effect.void : Effect.fail(unavailable(`could not move the build to ${root} (${error.message})`))
              )
            )
          )
        )
    })
  )
})

/**
 * The code-server distribution under `dir` (`$PRBOX_HOME/code-server`),
 * built first when absent. A crash never leaves a half-built one that looks
 * complete: the build happens next to it and is renamed in place.
 */
export const ensureCodeServerDistribution = Effect.fn("CodeServerDistribution.ensure")(function* (options: {
  readonly dir: string
  readonly onProgress: (line: string) => Effect.Effect<void>
}): Effect.fn.Return<
  CodeServerDistribution,
  CodeServerUnavailable,
  FileSystem.FileSystem | ChildProcessSpawner.ChildProcessSpawner
> {
  const fs = yield* FileSystem.FileSystem
  const arch = hostArch()
  if (process.platform !== "linux" || arch === undefined) {
    return yield* unavailable(
      `code-server distributions are built for Linux on x64 or arm64, not ${process.platform}-${process.arch}`
    )
  }
  const key = distributionName(arch)
  const root = `${options.dir}/${key}`
  const distribution: CodeServerDistribution = {
    root,
    key,
    node: NODE,
    entry: ENTRY,
    version: CODE_SERVER_VERSION,
    loader: GLIBC_LOADERS[arch],
    passwordEnv: codeServerPasswordEnv
  }
  if (yield* complete(fs, root)) return distribution
  yield* building.withPermit(
    Effect.gen(function* () {
      if (yield* complete(fs, root)) return
      yield* fs
        .makeDirectory(options.dir, { recursive: true })
        .pipe(Effect.mapError(() => unavailable(`could not create ${options.dir}`)))
      yield* options.onProgress(
        `building code-server ${CODE_SERVER_VERSION} with Node ${CODE_SERVER_NODE_VERSION} (once)`
      )
      yield* build(options.dir, root, arch, options.onProgress)
      yield* options.onProgress(`code-server ${CODE_SERVER_VERSION} is ready in ${root}`)
    })
  )
  return distribution
})
