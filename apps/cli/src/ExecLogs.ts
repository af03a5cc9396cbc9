import type { PrboxClientShape } from "@prbox/client"
import { describeEvent, type SandboxId } from "@prbox/domain"
import { Effect, Option, Stream } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { ExitCode, printJson, usageError } from "./Exit.ts"
import { followFlag, idArgument, json, needsDaemon, note, out, resolveId } from "./Params.ts"

/** The commands that look into a sandbox: its progress log, and a command run in it. */

const time = (at: number) => new Date(at).toISOString().slice(11, 19)

/** The whole log, page after page, as one stream. */
const logPages = (client: PrboxClientShape, id: SandboxId) =>
  Stream.paginate(0, (after) =>
    Effect.map(
      client.logs(id, { after, limit: 1000 }),
      (page) => [page.lines, page.more ? Option.some(page.next) : Option.none()] as const
    )
  )

const logs = Command.make(
  "logs",
  { id: idArgument, follow: followFlag("keep following new lines"), json },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      const view = yield* resolveId(client, config.id)
      if (config.follow) {
        // The stream replays the log, then follows: one path, no gap.
        return yield* client
          .events(view.id, { after: 0 })
          .pipe(
            Stream.runForEach((event) =>
              config.json ? Effect.sync(() => printJson(event)) : out(`${time(event.at)} ${describeEvent(event)}`)
            )
          )
      }
      yield* logPages(client, view.id).pipe(
        Stream.runForEach((event) =>
          config.json ? Effect.sync(() => printJson(event)) : out(`${time(event.at)} ${describeEvent(event)}`)
        )
      )
    })
  )
).pipe(Command.withDescription("Print a sandbox's progress log (-f: and follow it)."))

const exec = Command.make(
  "exec",
  {
    id: idArgument,
    timeout: Flag.Int("timeout").pipe(
      Flag.withDescription(
        "seconds before the command is killed inside the sandbox (default 300; 3600 with --background)"
      ),
      Flag.optional
    ),
    cwd: Flag.String("cwd").pipe(
      Flag.withDescription("folder to run in, relative to the workspace (must stay inside it)"),
      Flag.optional
    ),
    env: Flag.KeyValuePair("env").pipe(
      Flag.withDescription("K=V set for this command only (repeatable)"),
      Flag.optional
    ),
    background: Flag.Boolean("background").pipe(
      Flag.withDescription("start it as a job and print the job id (read it with `prbox job`)"),
      Flag.withDefault(false)
    ),
    command: Argument.String("command").pipe(
      Argument.withDescription("the command and its arguments, after --"),
      Argument.variadic({ min: 1 })
    ),
    json
  },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      const timeout = Option.getOrUndefined(config.timeout)
      if (timeout !== undefined && (timeout < 1 || timeout > 3600)) {
        return yield* usageError("--timeout must be between 1 and 3600 seconds")
      }
      const view = yield* resolveId(client, config.id)
      const request = {
        argv: config.command,
        ...(timeout === undefined ? {} : { timeoutMs: timeout * 1000 }),
        ...Option.match(config.cwd, { onNone: () => ({}), onSome: (cwd) => ({ cwd }) }),
        ...Option.match(config.env, { onNone: () => ({}), onSome: (env) => ({ env }) })
      }
      if (config.background) {
        const job = yield* client.startJob(view.id, request)
        return config.json ? printJson(job) : yield* out(job.jobId)
      }
      const seconds = timeout ?? 300
      const result = yield* client.exec(view.id, { ...request, timeoutMs: seconds * 1000 })
      if (config.json) printJson(result)
      else {
        process.stdout.write(result.stdout)
        process.stderr.write(result.stderr)
      }
      if (result.truncated && !config.json) yield* note("output truncated: its head and tail are shown")
      if (result.timedOut) {
        if (!config.json) yield* note(`the command did not finish within ${seconds} s and was killed`)
        process.exitCode = ExitCode.execTimeout
        return
      }
      process.exitCode = result.exitCode ?? ExitCode.other
    })
  )
).pipe(
  Command.withDescription(
    [
      "Run a command in a running sandbox as its workspace's owner (no stdin): prbox exec <id> -- <cmd...>.",
      "Exits with the command's exit code (124: killed at --timeout). Output over 1 MiB keeps its head and tail.",
      "--background starts a job instead: `prbox job <id> <jobId> -f` follows it, `prbox jobs <id>` lists them."
    ].join("\n")
  )
)

export const execLogsCommands = [logs, exec] as const
