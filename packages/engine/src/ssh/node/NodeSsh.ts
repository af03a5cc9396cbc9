import { type SandboxId, sandboxFolders, statePaths } from "@prbox/domain"
import { SandboxRepo } from "@prbox/store"
import { Clock, Effect, Layer, Schedule } from "effect"
import { CODE_SERVER_MOUNT, homeEnvFor, SSH_SOCKETS_MOUNT } from "../../CodeServerSpec.ts"
import { ContainerRuntime } from "../../ContainerRuntime.ts"
import { mapStoreErrors, RuntimeError } from "../../Errors.ts"
import { ExecTargets } from "../../exec/ExecTarget.ts"
import { Lifecycle } from "../../Lifecycle.ts"
import { SandboxTools } from "../../SandboxTools.ts"
import { SSH_SOCKET_NAME, Ssh } from "../Ssh.ts"
import { serverMode } from "./ServerMode.ts"
import { bootstrapSource, buildBundle } from "./SshBundle.ts"
import { hostKeyOf, hostKeyPaths, writeKnownHosts } from "./SshHostKeys.ts"

/** An open connection counts as activity (gc); the row is touched this often while it is. */
const TOUCH_EVERY = "30 seconds"

const keyError = (cause: unknown) =>
  cause instanceof RuntimeError
    ? cause
    : new RuntimeError({ operation: "ssh.host-key", detail: cause instanceof Error ? cause.message : String(cause) })

const make = (home: string) =>
  Effect.gen(function* () {
    const targets = yield* ExecTargets
    const lifecycle = yield* Lifecycle
    const runtime = yield* ContainerRuntime
    const tools = yield* SandboxTools
    const repo = yield* SandboxRepo
    const bundle = yield* Effect.cached(buildBundle)
    // Built at the first connection, not at start: every engine (each test's too) would pay esbuild otherwise.
    const bootstrap = bootstrapSource()
    const mountedNode = yield* Effect.cached(
      tools
        .codeServer(() => Effect.void)
        .pipe(
          Effect.map((distribution) => `${CODE_SERVER_MOUNT}/${distribution.node}`),
          Effect.mapError((error) => new RuntimeError({ operation: "ssh.node", detail: error.message }))
        )
    )

    const touch = (id: SandboxId) =>
      Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) => repo.touch(id, now)),
        Effect.ignore
      )

    const open = Effect.fn("Ssh.open")(function* (id: SandboxId, socket: string | undefined) {
      const target = yield* targets(id, "ssh")
      const row = yield* lifecycle.getRow(id)
      const plan = row.environmentPlan
      const node = plan?.codeServer === "included" ? "node" : yield* mountedNode
      const hostKey = yield* Effect.tryPromise({
        try: async () => {
          const key = await hostKeyOf(home, id)
          await writeKnownHosts(home)
          return key
        },
        catch: keyError
      })
      const server = yield* bundle
      // The bytes go by the client's socket, which the server dials where its container has the folder: not through the engine.
      const sockets = sandboxFolders(statePaths(home), id, row.workspacePath).sockets
      const socketPath =
        socket !== undefined && SSH_SOCKET_NAME.test(socket) && sockets !== undefined
          ? `${SSH_SOCKETS_MOUNT}/${socket}`
          : "-"
      const env = {
        ...(plan === null ? {} : homeEnvFor(plan)),
        ...target.env,
        PRBOX_SSH_CWD: target.workspaceFolder,
        ...(process.env.PRBOX_SSH_DEBUG === "1" ? { PRBOX_SSH_DEBUG: "1" } : {})
      }
      const pipe = yield* runtime.pipe(
        target.containerId,
        [node, "-e", bootstrap],
        { user: target.user, cwd: target.workspaceFolder, env },
        // The server's own complaints (a crash) go to the daemon's log, cut short: the sandbox wrote them.
        (chunk) =>
          Effect.runFork(
            Effect.logWarning(
              `ssh ${id}: ${Buffer.from(chunk)
                .toString("utf8")
                .slice(0, 500)
                .replace(/[^\x20-\x7e\n]/g, "?")}`
            )
          )
      )
      pipe.input.write(`PRBOX-SSH/2 ${server.length} ${hostKey.length} ${socketPath}\n`)
      pipe.input.write(server)
      pipe.input.write(hostKey)
      const mode = yield* serverMode(pipe.output)
      yield* touch(id).pipe(Effect.repeat(Schedule.spaced(TOUCH_EVERY)), Effect.forkScoped)
      if (mode === "stdio") return { _tag: "Piped", input: pipe.input, output: pipe.output } as const
      if (socketPath === "-") {
        return yield* new RuntimeError({ operation: "ssh.open", detail: "the sandbox's SSH server dialled no socket" })
      }
      return { _tag: "Dialled", ended: pipe.output } as const
    }, mapStoreErrors("ssh.open"))

    return Ssh.of({ open, knownHostsFile: hostKeyPaths(home).knownHosts })
  })

export const layer = (options: { readonly home: string }) =>
  Layer.effect(Ssh, make(options.home)).pipe(Layer.provide(ExecTargets.layer))
