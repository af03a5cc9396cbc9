import { spawn } from "node:child_process"
import { type ClientError, openRequest, PrboxClient, type PrboxClientShape } from "@prbox/client"
import type { SandboxId } from "@prbox/domain"
import type { SandboxView } from "@prbox/protocol"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { ensureRunning, withClient } from "./Connect.ts"
import { printJson, runCommand } from "./Exit.ts"
import { describe, listText, poolText, terminalColumns } from "./Format.ts"
import { acceptedLine, readyLines } from "./OpenText.ts"
import { idArgument, isTty, json, needsDaemon, optionalNumber, out, prFlag, resolveId, waitFlag } from "./Params.ts"
import { followUntilReady } from "./Progress.ts"

/** The commands about one sandbox's life: open, ls, status, stop, restart, rebuild, rm, password. */

const openBrowser = (url: string) =>
  Effect.sync(() => {
    const command = process.env.BROWSER ?? (process.platform === "darwin" ? "open" : "xdg-open")
    try {
      const child = spawn(command, [url], { detached: true, stdio: "ignore" })
      child.on("error", () => process.stderr.write(`prbox: could not start ${command}; open ${url} yourself\n`))
      child.unref()
    } catch {
      process.stderr.write(`prbox: could not start ${command}; open ${url} yourself\n`)
    }
  })

const open = Command.make(
  "open",
  {
    input: Argument.String("pull-request").pipe(
      Argument.withDescription("a pull request URL, owner/repo#N, or a git URL or path with --pr N")
    ),
    pr: prFlag,
    ref: Flag.String("ref").pipe(Flag.withDescription("fetch this ref instead of the provider's"), Flag.optional),
    devcontainer: Flag.String("devcontainer").pipe(
      Flag.withDescription("use the PR's .devcontainer/<name>/devcontainer.json when it has several"),
      Flag.optional
    ),
    browser: Flag.Boolean("browser").pipe(
      Flag.withDescription("open the sandbox in a browser"),
      Flag.withDefault(false)
    ),
    wait: waitFlag,
    json
  },
  (config) =>
    runCommand(
      config,
      withClient(
        Effect.gen(function* () {
          const since = Date.now()
          yield* ensureRunning()
          const client = yield* PrboxClient
          const opened = yield* client.open(
            openRequest(config.input, process.cwd(), {
              pr: optionalNumber(config.pr),
              ref: Option.getOrUndefined(config.ref),
              devcontainer: Option.getOrUndefined(config.devcontainer)
            })
          )
          if (!config.wait) {
            if (config.json) return printJson(opened)
            return yield* out(acceptedLine(opened))
          }
          const ready = yield* followUntilReady(client, opened, since, { tty: isTty(config.json) })
          if (config.json) printJson(ready)
          else yield* out(readyLines(ready))
          if (config.browser && ready.url !== null) yield* openBrowser(ready.url)
        })
      )
    )
).pipe(
  Command.withDescription(
    "Open a pull request in a sandbox (starting prboxd if needed), follow its progress, and print its URL. Exits 0 only once it runs."
  )
)

const ls = Command.make(
  "ls",
  {
    all: Flag.Boolean("all").pipe(
      Flag.withAlias("a"),
      Flag.withDescription("include stopped and failed sandboxes"),
      Flag.withDefault(false)
    ),
    pool: Flag.Boolean("pool").pipe(
      Flag.withDescription("list the warm pool's started containers instead (id, repository, key, age, port)"),
      Flag.withDefault(false)
    ),
    json
  },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      if (config.pool) {
        const entries = yield* client.pool
        if (config.json) return printJson(entries)
        return yield* out(poolText(entries, Date.now()))
      }
      if (config.json) return printJson(yield* client.list({ all: config.all }))
      // One request: the full list holds the active rows (newest first, like `all: false`) and the legacy ones.
      const views = yield* client.list({ all: true })
      yield* out(listText(views, config.all, Date.now(), terminalColumns(process.stdout)))
    })
  )
).pipe(
  Command.withDescription(
    "List sandboxes: id, PR, repository, status (merged or closed PRs marked), environment, age, URL, and the PR's title (cut to the terminal's width). Legacy sandboxes without a password are always listed, with what to do."
  )
)

const status = Command.make(
  "status",
  { id: idArgument, pr: prFlag, json },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      const view = yield* resolveId(client, config.id, optionalNumber(config.pr))
      if (config.json) return printJson(view)
      yield* out(describe(view, Date.now()))
    })
  )
).pipe(Command.withDescription("Show one sandbox."))

const stop = Command.make(
  "stop",
  { id: idArgument, json },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      const view = yield* resolveId(client, config.id)
      const stopped = yield* client.stop(view.id)
      if (config.json) return printJson(stopped)
      yield* out(`sandbox ${stopped.id} is ${stopped.status}`)
    })
  )
).pipe(Command.withDescription("Stop a sandbox (its workspace is kept; `prbox restart` or `prbox open` resumes it)."))

/** A command that hands a sandbox to a restart worker and follows it until it runs (restart, rebuild). */
const restartCommand = (
  name: string,
  call: (client: PrboxClientShape, id: SandboxId) => Effect.Effect<SandboxView, ClientError>,
  description: string,
  follow: { readonly afterStarting: boolean } = { afterStarting: false }
) =>
  Command.make(
    name,
    { id: idArgument, wait: waitFlag, json },
    needsDaemon((client, config) =>
      Effect.gen(function* () {
        const since = Date.now()
        const view = yield* resolveId(client, config.id)
        const restarted = yield* call(client, view.id)
        if (!config.wait) {
          if (config.json) return printJson(restarted)
          return yield* out(`sandbox ${restarted.id} is ${restarted.status}`)
        }
        const ready = yield* followUntilReady(client, restarted, since, { tty: isTty(config.json), ...follow })
        if (config.json) return printJson(ready)
        yield* out(readyLines(ready))
      })
    )
  ).pipe(Command.withDescription(description))

const restart = restartCommand(
  "restart",
  (client, id) => client.restart(id),
  "Restart a stopped sandbox and follow it until it runs."
)

const rebuild = restartCommand(
  "rebuild",
  (client, id) => client.rebuild(id),
  "Recreate a sandbox's container (after devcontainer.json or the image changed), keeping its workspace, home and URL; the create-time steps run again. Follows it until it runs.",
  // The rebuild's own stop comes before its restart: only what follows `starting` settles it.
  { afterStarting: true }
)

const rm = Command.make(
  "rm",
  {
    id: idArgument,
    force: Flag.Boolean("force").pipe(
      Flag.withAlias("f"),
      Flag.withDescription("stop a live sandbox first"),
      Flag.withDefault(false)
    ),
    json
  },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      const view = yield* resolveId(client, config.id)
      yield* client.delete(view.id, { force: config.force })
      if (config.json) return printJson({ removed: view.id })
      yield* out(`removed sandbox ${view.id}`)
    })
  )
).pipe(
  Command.withDescription(
    "Delete a sandbox: container, workspace and row. A live one needs --force. Retries a destroy that Docker did not confirm."
  )
)

const password = Command.make(
  "password",
  { id: idArgument, json },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      const view = yield* resolveId(client, config.id)
      const secret = yield* client.password(view.id)
      if (config.json) return printJson(secret)
      yield* out(secret.password)
    })
  )
).pipe(Command.withDescription("Print a sandbox's code-server password."))

export const sandboxCommands = [open, ls, status, stop, restart, rm] as const
export const rebuildCommand = rebuild
export const passwordCommand = password
