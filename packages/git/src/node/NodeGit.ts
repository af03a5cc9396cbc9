import * as NodeChildProcessSpawner from "@effect/platform-node/NodeChildProcessSpawner"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Duration, Effect, Layer, Stream } from "effect"
import type { PlatformError } from "effect/PlatformError"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import { GitCommandFailed, GitTimeout } from "../Errors.ts"
import { Git, type GitOutput, type GitRunOptions, type GitUser, REPOSITORY_ENV } from "../Git.ts"
import { redactCredentials } from "../Redact.ts"

// The user's environment passes through (HOME, SSH_AUTH_SOCK, credential
// helpers), with these on top: git must never wait for a human, and must
// answer in English so that its failures can be classified.
const fixedEnv: Readonly<Record<string, string | undefined>> = {
  GIT_TERMINAL_PROMPT: "0",
  GCM_INTERACTIVE: "never",
  LC_ALL: "C",
  ...Object.fromEntries(REPOSITORY_ENV.map((name) => [name, undefined]))
}

// A timed-out git gets SIGTERM, then SIGKILL if its process group lingers.
const forceKillAfter = Duration.seconds(1)

/** `git fetch`, `git clone`, ...: the subcommand, past any `-c key=value`. */
const operationOf = (args: ReadonlyArray<string>): string => {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? ""
    if (arg === "-c" || arg === "-C") i++
    else if (!arg.startsWith("-")) return `git ${arg}`
  }
  return "git"
}

/** A progress meter rewrites its line with `\r`: only its final state counts as a line. */
const finalState = (line: string): string =>
  line
    .split("\r")
    .filter((part) => part.trim().length > 0)
    .at(-1) ?? ""

/** Feeds each complete line to `onLine` as it arrives. */
const forEachLine = (
  bytes: Stream.Stream<Uint8Array, PlatformError>,
  onLine: (line: string) => Effect.Effect<void>
): Effect.Effect<void, PlatformError> => {
  let pending = ""
  const emit = (raw: string) => {
    const line = finalState(raw)
    return line === "" ? Effect.void : onLine(line)
  }
  return bytes.pipe(
    Stream.decodeText(),
    Stream.runForEach((text) => {
      const lines = (pending + text).split("\n")
      pending = lines.pop() ?? ""
      return Effect.forEach(lines, emit, { discard: true })
    }),
    Effect.andThen(Effect.suspend(() => emit(pending)))
  )
}

/**
 * Runs git as another user in `dir` (Linux, as root). Git checks every folder
 * above its work tree against that user, and a root daemon's state folder is
 * private (0700): in a mount namespace of its own, the folder is bound at
 * /mnt, then the user's git runs there (util-linux's unshare and setpriv).
 * The mount ends with the process; nothing on the host sees it.
 */
const AS_USER_SCRIPT =
  'dir=$0 uid=$1 gid=$2; shift 2; mount --bind -- "$dir" /mnt && cd /mnt && exec setpriv --reuid="$uid" --regid="$gid" --clear-groups -- "$@"'

/** `argv` run as `user` in `dir` (see AS_USER_SCRIPT). */
export const asUserCommand = (
  user: GitUser,
  dir: string,
  argv: ReadonlyArray<string>
): [string, ReadonlyArray<string>] => [
  "unshare",
  [
    "--mount",
    "--propagation",
    "private",
    "--",
    "sh",
    "-c",
    AS_USER_SCRIPT,
    dir,
    String(user.uid),
    String(user.gid),
    ...argv
  ]
]

// Another user's git has no home: the daemon's (root's) is not its to read.
const otherUserEnv: Readonly<Record<string, string | undefined>> = { HOME: "/nonexistent", XDG_CONFIG_HOME: undefined }

export const make = Effect.gen(function* () {
  const spawner = yield* ChildProcessSpawner.ChildProcessSpawner

  const run = Effect.fn("Git.run")(function* (args: ReadonlyArray<string>, options: GitRunOptions) {
    const operation = operationOf(args)
    const stderrLines: Array<string> = []
    const onStderrLine = options.onStderrLine
    const [program, programArgs] =
      options.asUser === undefined ? ["git", args] : asUserCommand(options.asUser, options.cwd, ["git", ...args])
    const command = ChildProcess.make(program, programArgs, {
      cwd: options.cwd,
      env: { ...options.env, ...(options.asUser === undefined ? {} : otherUserEnv), ...fixedEnv },
      // Without it, `env` replaces the whole environment.
      extendEnv: true,
      stdin: options.stdin === undefined ? "ignore" : { stream: Stream.make(options.stdin) },
      forceKillAfter
    })
    const execute = Effect.gen(function* () {
      const handle = yield* spawner.spawn(command)
      const [stdout, , exitCode] = yield* Effect.all(
        [
          handle.stdout.pipe(Stream.decodeText(), Stream.mkString),
          forEachLine(handle.stderr, (line) => {
            stderrLines.push(line)
            return onStderrLine === undefined ? Effect.void : onStderrLine(redactCredentials(line))
          }),
          handle.exitCode
        ],
        { concurrency: "unbounded" }
      )
      const output: GitOutput = { stdout, stderr: stderrLines.join("\n"), exitCode }
      return output
    }).pipe(Effect.scoped)

    return yield* execute.pipe(
      Effect.mapError(
        (error) => new GitCommandFailed({ operation, exitCode: null, detail: redactCredentials(error.message) })
      ),
      Effect.timeoutOrElse({
        duration: Duration.millis(options.timeoutMs),
        orElse: () =>
          Effect.fail(
            new GitTimeout({
              operation,
              timeoutMs: options.timeoutMs,
              detail: redactCredentials(stderrLines.at(-1) ?? "no output")
            })
          )
      })
    )
  })

  return Git.of({ run })
})

/** Git on this machine's `git` binary. */
export const layer: Layer.Layer<Git> = Layer.effect(Git, make).pipe(
  Layer.provide(NodeChildProcessSpawner.layer),
  Layer.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer))
)
