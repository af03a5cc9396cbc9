import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import { isAbsolute, resolve } from "node:path"
import { isSettling } from "@prbox/domain"
import { Effect, Schema, Stream } from "effect"
import { Cancelled, type Daemon, DaemonError } from "./Daemon.ts"
import type { LogFollowers } from "./Logs.ts"
import { CommandId, nameOf, pickItem, progressMessage, repoOf, sortSandboxes, titleOf } from "./Model.ts"
import { type OpenRequest, type PrboxClientShape, SandboxView } from "./Protocol.ts"
import { expandHome } from "./Settings.ts"

export interface TerminalSpec {
  readonly name: string
  readonly shellPath: string
  readonly shellArgs: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
}

export interface PickItem {
  readonly label: string
  readonly description: string
  readonly view: SandboxView
}

/**
 * Everything a command handler needs from the editor. `extension.ts`
 * implements it with the VS Code API; tests pass a recorder.
 */
export interface Ui {
  /** An information message; resolves with the action the user chose, if any. */
  readonly info: (message: string, ...actions: ReadonlyArray<string>) => Promise<string | undefined>
  readonly error: (message: string) => void
  /** A modal question; true only when the user chose `action`. */
  readonly confirm: (message: string, detail: string, action: string) => Promise<boolean>
  readonly input: (options: {
    readonly prompt: string
    readonly placeHolder: string
    readonly value?: string
  }) => Promise<string | undefined>
  readonly pick: (items: ReadonlyArray<PickItem>, placeHolder: string) => Promise<PickItem | undefined>
  /** A progress notification with a Cancel button; `signal` aborts when the user presses it. */
  readonly progress: <A>(
    title: string,
    task: (report: (message: string) => void, signal: AbortSignal) => Promise<A>
  ) => Promise<A>
  readonly copy: (text: string) => Promise<void>
  readonly openExternal: (url: string) => Promise<void>
  readonly terminal: (spec: TerminalSpec) => void
}

export interface HandlerContext {
  readonly ui: Ui
  readonly daemon: Daemon
  readonly logs: LogFollowers
  /** Relative local paths typed into Open PR Sandbox are read against this directory. */
  readonly baseDir: () => string
}

export type ParsedOpen =
  | { readonly _tag: "ok"; readonly request: OpenRequest }
  | { readonly _tag: "invalid"; readonly message: string }

const invalid = (message: string): ParsedOpen => ({ _tag: "invalid", message })

/**
 * What `prbox open` accepts, as one line: a pull request URL, `owner/repo#N`,
 * or a git URL or path followed by `--pr N`, optionally `--ref REF`. A local
 * path is sent absolute, since the daemon would read a relative one against
 * its own directory.
 */
export const parseOpenInput = (text: string, baseDir: string): ParsedOpen => {
  const words = text
    .trim()
    .split(/\s+/)
    .filter((word) => word.length > 0)
  const positional: Array<string> = []
  let pr: number | undefined
  let ref: string | undefined
  for (let index = 0; index < words.length; index++) {
    const word = words[index] ?? ""
    const flag = /^--(pr|ref)(?:=(.*))?$/.exec(word)
    if (flag === null) {
      positional.push(word)
      continue
    }
    const value = flag[2] ?? words[++index]
    if (value === undefined || value === "") return invalid(`--${flag[1]} needs a value`)
    if (flag[1] === "ref") ref = value
    else if (/^[1-9]\d*$/.test(value)) pr = Number(value)
    else return invalid(`--pr needs a pull request number, not "${value}"`)
  }
  const [input, ...extra] = positional
  if (input === undefined) return invalid("type a pull request URL, owner/repo#N, or a git URL or path with --pr N")
  if (extra.length > 0) return invalid(`one pull request at a time (also got: ${extra.join(" ")})`)
  const isUrl = /^[A-Za-z][A-Za-z0-9+.-]*:/.test(input)
  const local = isUrl ? undefined : resolve(baseDir, expandHome(input))
  const sent = local !== undefined && (isAbsolute(expandHome(input)) || existsSync(local)) ? local : input
  return {
    _tag: "ok",
    request: { input: sent, ...(pr === undefined ? {} : { pr }), ...(ref === undefined ? {} : { ref }) }
  }
}

/**
 * Follows a sandbox from `since` until it runs or ends, reporting each line;
 * returns its view then. The daemon replays the log first, so nothing that
 * happened before the stream opened is missed.
 */
const untilSettled = (client: PrboxClientShape, view: SandboxView, since: number, report: (message: string) => void) =>
  Effect.gen(function* () {
    if (view.status === "running") return view
    yield* client.events(view.id, { after: 0 }).pipe(
      Stream.filter((event) => event.at >= since),
      Stream.tap((event) => Effect.sync(() => report(progressMessage(event)))),
      Stream.filter(isSettling),
      Stream.runHead
    )
    return yield* client.get(view.id)
  })

const isSandboxId = Schema.is(SandboxView.fields.id)

/** A command's argument: a sandbox node (context menu), a sandbox id (an action node), or nothing (palette). */
const idOf = (argument: unknown) => {
  if (isSandboxId(argument)) return argument
  if (typeof argument === "object" && argument !== null && "kind" in argument && argument.kind === "sandbox") {
    return "id" in argument && isSandboxId(argument.id) ? argument.id : undefined
  }
  return undefined
}

const runCli = (cliPath: string, args: ReadonlyArray<string>, home: string): Promise<string> =>
  new Promise((done, fail) => {
    execFile(
      cliPath,
      args,
      { env: { ...process.env, PRBOX_HOME: home }, timeout: 60_000, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (error === null) return done(stdout.trim())
        const why = stderr.trim().split("\n").at(-1) ?? ""
        fail(new Error(`\`${cliPath} ${args.join(" ")}\` failed: ${why === "" ? error.message : why}`))
      }
    )
  })

export const handlers = (context: HandlerContext) => {
  const { ui, daemon } = context
  const call = daemon.call.bind(daemon)

  /** The sandbox a command is about, as the daemon sees it now. */
  const target = async (argument: unknown, placeHolder: string): Promise<SandboxView | undefined> => {
    const id = idOf(argument)
    if (id !== undefined) return call((client) => client.get(id))
    const views = sortSandboxes(await call((client) => client.list({ all: true })))
    if (views.length === 0) {
      void ui.info("There are no PR sandboxes yet: use “Open PR Sandbox…”.")
      return undefined
    }
    const now = Date.now()
    return (
      await ui.pick(
        views.map((view) => pickItem(view, now)),
        placeHolder
      )
    )?.view
  }

  const name = (view: SandboxView) => `${titleOf(view)} (${repoOf(view)})`

  const openInBrowser = async (view: SandboxView) => {
    if (view.status !== "running" || view.url === null) {
      ui.error(`Sandbox ${name(view)} is ${view.status}; restart it first.`)
      return
    }
    // Opening it is activity: the idle timer starts over.
    await call((client) => client.touch(view.id))
    await ui.openExternal(view.url)
  }

  const copyPassword = async (view: SandboxView) => {
    const secret = await call((client) => client.password(view.id))
    await ui.copy(secret.password)
    void ui.info(`The password of sandbox ${name(view)} is on the clipboard.`)
  }

  /** What the user sees once a create or restart settles. */
  const announce = async (view: SandboxView) => {
    if (view.status === "running") {
      const choice = await ui.info(
        `Sandbox ${name(view)} is running at ${view.url ?? "(no URL)"}.`,
        "Open in Browser",
        "Copy Password"
      )
      if (choice === "Open in Browser") await openInBrowser(view)
      if (choice === "Copy Password") await copyPassword(view)
      return
    }
    ui.error(
      view.status === "error"
        ? `Sandbox ${name(view)} failed: ${view.error ?? "unknown error"} (Show Logs has every step).`
        : `Sandbox ${name(view)} is ${view.status}: it did not reach running.`
    )
  }

  /**
   * Follows a create or restart in the notification and returns the settled
   * view; Cancel stops the sandbox instead (and returns nothing).
   */
  const settle = async (
    view: SandboxView,
    since: number,
    report: (message: string) => void,
    signal: AbortSignal
  ): Promise<SandboxView | undefined> => {
    try {
      if (signal.aborted) throw new Cancelled()
      return await call((client) => untilSettled(client, view, since, report), signal)
    } catch (error) {
      if (!(error instanceof Cancelled)) throw error
      report("cancelled: stopping…")
      const stopped = await call((client) => client.stop(view.id))
      void ui.info(`Cancelled: sandbox ${name(stopped)} is ${stopped.status}.`)
      return undefined
    } finally {
      daemon.refresh()
    }
  }

  return {
    [CommandId.open]: async () => {
      const text = await ui.input({
        prompt: "A pull request URL, owner/repo#N, or a git URL or path followed by --pr N (and --ref REF)",
        placeHolder: "owner/repo#123"
      })
      if (text === undefined || text.trim() === "") return
      const parsed = parseOpenInput(text, context.baseDir())
      if (parsed._tag === "invalid") return ui.error(`Open PR Sandbox: ${parsed.message}`)
      const settled = await ui.progress(`Opening ${text.trim()}`, async (report, signal) => {
        const since = Date.now()
        report("asking prboxd…")
        const opened = await call((client) => client.open(parsed.request))
        daemon.refresh()
        return settle(opened, since, report, signal)
      })
      // After the notification has closed: the message may wait long for the user.
      if (settled !== undefined) await announce(settled)
    },

    [CommandId.openInBrowser]: async (argument?: unknown) => {
      const view = await target(argument, "Sandbox to open in the browser")
      if (view !== undefined) await openInBrowser(view)
    },

    [CommandId.copyPassword]: async (argument?: unknown) => {
      const view = await target(argument, "Sandbox whose password to copy")
      if (view !== undefined) await copyPassword(view)
    },

    [CommandId.stop]: async (argument?: unknown) => {
      const view = await target(argument, "Sandbox to stop")
      if (view === undefined) return
      const stopped = await call((client) => client.stop(view.id))
      daemon.refresh()
      void ui.info(`Sandbox ${name(stopped)} is ${stopped.status}.`)
    },

    [CommandId.restart]: async (argument?: unknown) => {
      const view = await target(argument, "Sandbox to restart")
      if (view === undefined) return
      const settled = await ui.progress(`Restarting ${name(view)}`, async (report, signal) => {
        const since = Date.now()
        const restarted = await call((client) => client.restart(view.id))
        daemon.refresh()
        return settle(restarted, since, report, signal)
      })
      if (settled !== undefined) await announce(settled)
    },

    [CommandId.delete]: async (argument?: unknown) => {
      const view = await target(argument, "Sandbox to delete")
      if (view === undefined) return
      const sure = await ui.confirm(
        `Delete sandbox ${name(view)}?`,
        "Its container, workspace and state are removed; uncommitted work in it is lost.",
        "Delete"
      )
      if (!sure) return
      // The user confirmed, so a live sandbox is stopped first (`prbox rm --force`).
      await call((client) => client.remove(view.id, { force: true }))
      daemon.refresh()
      void ui.info(`Deleted sandbox ${name(view)}.`)
    },

    [CommandId.showLogs]: async (argument?: unknown) => {
      const view = await target(argument, "Sandbox whose log to show")
      // Following goes on in the background until the sandbox is deleted.
      if (view !== undefined) void context.logs.show(view.id, `${name(view)} ${view.id}`)
    },

    [CommandId.execInTerminal]: async (argument?: unknown) => {
      const view = await target(argument, "Sandbox to run a command in")
      if (view === undefined) return
      const command = await ui.input({
        prompt: `A command to run in ${name(view)} (sh -c, in /workspace, as its owner, without input)`,
        placeHolder: "git status",
        value: "git status"
      })
      if (command === undefined || command.trim() === "") return
      const { cliPath, home } = daemon.settings
      ui.terminal({
        name: `prbox exec #${view.pullRequest}`,
        shellPath: cliPath,
        shellArgs: ["exec", view.id, "--", "sh", "-c", command],
        env: { PRBOX_HOME: home }
      })
    },

    [CommandId.refresh]: async () => {
      daemon.refresh()
    },

    [CommandId.gc]: async () => {
      // Dry run first: the user confirms a plan, and the daemon acts only on what was shown and is still true.
      const planned = await call((client) => client.gc({ execute: false }))
      const { stop, remove } = planned.plan
      if (stop.length === 0 && remove.length === 0) {
        void ui.info("GC: nothing to collect (no idle sandbox, none stopped long ago).")
        return
      }
      const views = daemon.views
      const detail = [
        ...stop.map((id) => `stop ${nameOf(views, id)}: idle`),
        ...remove.map((id) => `delete ${nameOf(views, id)}: ended long ago`)
      ].join("\n")
      const sure = await ui.confirm(
        `GC: stop ${stop.length} and delete ${remove.length} sandbox(es)?`,
        detail,
        "Run GC"
      )
      if (!sure) return
      const report = await call((client) => client.gc({ execute: true, shown: planned.plan }))
      daemon.refresh()
      const done = `GC stopped ${report.stopped.length} and deleted ${report.removed.length} sandbox(es).`
      if (report.failures.length === 0) void ui.info(done)
      else ui.error(`${done} Failed: ${report.failures.map((f) => `${f.sandboxId}: ${f.detail}`).join("; ")}`)
    },

    [CommandId.startDaemon]: async () => {
      const { cliPath, home } = daemon.settings
      const said = await ui.progress("Starting prboxd", () => runCli(cliPath, ["daemon", "start"], home))
      daemon.refresh()
      void ui.info(said)
    }
  } satisfies Record<CommandId, (argument?: unknown) => Promise<void>>
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * The command table: every command id with its handler, wrapped so that a
 * failure is shown to the user (a cancellation is not a failure).
 */
export const commandTable = (
  context: HandlerContext
): ReadonlyArray<readonly [CommandId, (argument?: unknown) => Promise<void>]> => {
  const table = handlers(context)
  return Object.values(CommandId).map((id) => [
    id,
    async (argument?: unknown) => {
      try {
        await table[id](argument)
      } catch (error) {
        if (error instanceof Cancelled) return
        const hint =
          error instanceof DaemonError && error.tag === "DaemonUnreachable" ? " (PR Sandboxes › Start Daemon)" : ""
        context.ui.error(`prbox: ${messageOf(error)}${hint}`)
      }
    }
  ])
}
