import { homedir } from "node:os"
import { dirname } from "node:path"
import {
  type DaemonServiceSpec,
  invalidServiceSpec,
  LAUNCHD_LABEL,
  launchdAgentPath,
  renderLaunchdPlist,
  renderSystemdUnit,
  SYSTEMD_UNIT,
  systemdUnitPath
} from "@prbox/domain"
import { Effect, FileSystem, Layer, Stream } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import {
  ServiceManagerFailed,
  ServiceManagerUnavailable,
  type ServiceState,
  UserService,
  type UserServiceShape
} from "./UserService.ts"

/** systemd's user manager through `systemctl --user`, launchd's gui domain through `launchctl`. */

interface Ran {
  /** null: the program could not be run at all (not installed). */
  readonly code: number | null
  readonly stdout: string
  /** Its first line of stderr, or why it could not run. */
  readonly why: string
}

const run = Effect.fn("UserService.run")(function* (file: string, args: ReadonlyArray<string>) {
  const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
  const command = ChildProcess.make(file, args, { stdin: "ignore" })
  return yield* Effect.scoped(
    Effect.gen(function* () {
      const handle = yield* spawner.spawn(command)
      const [stdout, stderr, code] = yield* Effect.all(
        [
          Stream.mkString(Stream.decodeText(handle.stdout)),
          Stream.mkString(Stream.decodeText(handle.stderr)),
          handle.exitCode
        ],
        { concurrency: "unbounded" }
      )
      return { code: code as number, stdout, why: stderr.trim().split("\n")[0] || `exit ${code}` } satisfies Ran
    })
  ).pipe(
    Effect.timeout("30 seconds"),
    Effect.catch((error) => Effect.succeed<Ran>({ code: null, stdout: "", why: `${file}: ${error.message}` }))
  )
})

const failed = (operation: string, ran: Ran) =>
  new ServiceManagerFailed({ operation, message: `${operation}: ${ran.why}` })

/** Runs a step of the manager; a non-zero exit fails with its own words. */
const step = (operation: string, file: string, args: ReadonlyArray<string>) =>
  run(file, args).pipe(
    Effect.flatMap((ran) => (ran.code === 0 ? Effect.succeed(ran) : Effect.fail(failed(operation, ran))))
  )

const fileError = (operation: string) => (error: { readonly message: string }) =>
  new ServiceManagerFailed({ operation, message: `${operation}: ${error.message}` })

/** Writes `text` to `path` through a temporary file and a rename: never a half-written unit. */
const writeFileAtomically = (path: string, text: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const previous = yield* fs.readFileString(path).pipe(Effect.orElseSucceed(() => undefined))
    if (previous === text) return false
    yield* fs.makeDirectory(dirname(path), { recursive: true })
    const temporary = `${path}.${process.pid}.tmp`
    yield* fs.writeFileString(temporary, text, { mode: 0o644 })
    yield* fs.rename(temporary, path)
    return true
  }).pipe(Effect.mapError(fileError(`write ${path}`)))

const exists = (path: string) =>
  FileSystem.FileSystem.use((fs) => fs.exists(path)).pipe(Effect.orElseSucceed(() => false))

const checkedSpec = (spec: DaemonServiceSpec, manager: "systemd" | "launchd") => {
  const problem = invalidServiceSpec(spec, manager)
  return problem === undefined
    ? Effect.succeed(spec)
    : Effect.fail(new ServiceManagerFailed({ operation: "render the service", message: problem }))
}

/** `KEY=value` lines (systemctl show, show-environment) as a record. */
const keyValues = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split("\n")
      .map((line) => /^([^=]+)=(.*)$/.exec(line))
      .filter((match) => match !== null)
      .map((match) => [match[1] as string, match[2] as string])
  )

type Platform = ChildProcessSpawner.ChildProcessSpawner | FileSystem.FileSystem

/** Gives an effect this layer's spawner and file system, so that the service's methods need nothing. */
const providing = Effect.gen(function* () {
  const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
  const fs = yield* FileSystem.FileSystem
  return <A, E>(effect: Effect.Effect<A, E, Platform>): Effect.Effect<A, E> =>
    effect.pipe(
      Effect.provideService(ChildProcessSpawner.ChildProcessSpawner, spawner),
      Effect.provideService(FileSystem.FileSystem, fs)
    )
})

const systemd = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem
  const provide = yield* providing
  const systemctl = (args: ReadonlyArray<string>) => run("systemctl", ["--user", ...args])
  /** Asks the manager itself: its environment says where it reads user units from. */
  const manager = systemctl(["show-environment"]).pipe(
    Effect.map((ran) =>
      ran.code === 0
        ? { available: true as const, file: systemdUnitPath(keyValues(ran.stdout), homedir()) }
        : { available: false as const, file: systemdUnitPath(process.env, homedir()), why: ran.why }
    )
  )
  const unavailable = (why: string, consequence: string) =>
    new ServiceManagerUnavailable({
      message: `no systemd user manager answers (\`systemctl --user show-environment\`: ${why}); ${consequence}`
    })
  const availableFile = (consequence: string) =>
    manager.pipe(
      Effect.flatMap((found) =>
        found.available ? Effect.succeed(found.file) : Effect.fail(unavailable(found.why, consequence))
      )
    )

  const state = Effect.gen(function* (): Effect.fn.Return<ServiceState, never, Platform> {
    const found = yield* manager
    const installed = yield* exists(found.file)
    if (!found.available) {
      const detail = `no systemd user manager answers (${found.why})`
      return { manager: "systemd", available: false, file: found.file, installed, running: false, pid: null, detail }
    }
    const shown = yield* systemctl([
      "show",
      SYSTEMD_UNIT,
      "--property=LoadState,ActiveState,SubState,MainPID,UnitFileState"
    ])
    const properties = keyValues(shown.stdout)
    const pid = Number(properties.MainPID ?? 0)
    return {
      manager: "systemd",
      available: shown.code === 0,
      file: found.file,
      installed,
      running: shown.code === 0 && properties.ActiveState === "active",
      pid: pid > 0 ? pid : null,
      detail:
        shown.code === 0
          ? `${properties.ActiveState ?? "unknown"} (${properties.SubState ?? "unknown"}), ${properties.UnitFileState || properties.LoadState || "unknown"}`
          : `systemctl --user show ${SYSTEMD_UNIT}: ${shown.why}`
    }
  }).pipe(provide)

  const install: UserServiceShape["install"] = (spec) =>
    Effect.gen(function* () {
      const file = yield* availableFile("prboxd still starts on demand; nothing was written")
      const checked = yield* checkedSpec(spec, "systemd")
      const changed = yield* writeFileAtomically(file, renderSystemdUnit(checked))
      yield* step("systemctl --user daemon-reload", "systemctl", ["--user", "daemon-reload"])
      yield* step(`systemctl --user enable ${SYSTEMD_UNIT}`, "systemctl", ["--user", "enable", SYSTEMD_UNIT])
      return { file, changed }
    }).pipe(provide)

  const start = (restart: boolean) => {
    const verb = restart ? "restart" : "start"
    return step(`systemctl --user ${verb} ${SYSTEMD_UNIT}`, "systemctl", ["--user", verb, SYSTEMD_UNIT]).pipe(
      Effect.asVoid,
      provide
    )
  }

  const uninstall = Effect.gen(function* () {
    const found = yield* manager
    const installed = yield* exists(found.file)
    if (!installed) return { file: found.file, removed: false }
    if (!found.available) {
      return yield* unavailable(found.why, `cannot stop and disable ${SYSTEMD_UNIT}; ${found.file} was left in place`)
    }
    yield* step(`systemctl --user disable --now ${SYSTEMD_UNIT}`, "systemctl", [
      "--user",
      "disable",
      "--now",
      SYSTEMD_UNIT
    ])
    yield* fs.remove(found.file).pipe(Effect.mapError(fileError(`remove ${found.file}`)))
    yield* step("systemctl --user daemon-reload", "systemctl", ["--user", "daemon-reload"])
    // A unit that had failed stays listed as failed until reset; it is gone now.
    yield* systemctl(["reset-failed", SYSTEMD_UNIT])
    return { file: found.file, removed: true }
  }).pipe(provide)

  return UserService.of({ state, install, start, uninstall })
})

const launchd = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem
  const provide = yield* providing
  const domain = `gui/${process.getuid?.() ?? 0}`
  const target = `${domain}/${LAUNCHD_LABEL}`
  const file = launchdAgentPath(homedir())
  const launchctl = (args: ReadonlyArray<string>) => run("launchctl", args)
  const available = launchctl(["print", domain])
  const unavailable = (why: string, consequence: string) =>
    new ServiceManagerUnavailable({
      message: `launchd's ${domain} domain does not answer (\`launchctl print ${domain}\`: ${why}); ${consequence}`
    })

  const state = Effect.gen(function* (): Effect.fn.Return<ServiceState, never, Platform> {
    const installed = yield* exists(file)
    const domainAnswer = yield* available
    if (domainAnswer.code !== 0) {
      const detail = `launchd's ${domain} domain does not answer (${domainAnswer.why})`
      return { manager: "launchd", available: false, file, installed, running: false, pid: null, detail }
    }
    const printed = yield* launchctl(["print", target])
    const serviceState = /^\s*state = (\S+)/m.exec(printed.stdout)?.[1]
    const pid = Number(/^\s*pid = (\d+)/m.exec(printed.stdout)?.[1] ?? 0)
    return {
      manager: "launchd",
      available: true,
      file,
      installed,
      running: serviceState === "running",
      pid: pid > 0 ? pid : null,
      detail: printed.code === 0 ? `loaded, ${serviceState ?? "state unknown"}` : "not loaded"
    }
  }).pipe(provide)

  const install: UserServiceShape["install"] = (spec) =>
    Effect.gen(function* () {
      const domainAnswer = yield* available
      if (domainAnswer.code !== 0) {
        return yield* unavailable(domainAnswer.why, "prboxd still starts on demand; nothing was written")
      }
      const checked = yield* checkedSpec(spec, "launchd")
      const changed = yield* writeFileAtomically(file, renderLaunchdPlist(checked))
      return { file, changed }
    }).pipe(provide)

  // bootstrap loads the agent, and RunAtLoad starts it; a loaded one is booted out first to read the new plist.
  const start = (restart: boolean) =>
    Effect.gen(function* () {
      const loaded = yield* launchctl(["print", target])
      if (loaded.code === 0) {
        if (!restart) return
        yield* step(`launchctl bootout ${target}`, "launchctl", ["bootout", target])
      }
      yield* step(`launchctl bootstrap ${domain}`, "launchctl", ["bootstrap", domain, file])
    }).pipe(provide)

  const uninstall = Effect.gen(function* () {
    if (!(yield* exists(file))) return { file, removed: false }
    const domainAnswer = yield* available
    if (domainAnswer.code !== 0) {
      return yield* unavailable(domainAnswer.why, `cannot stop ${LAUNCHD_LABEL}; ${file} was left in place`)
    }
    const loaded = yield* launchctl(["print", target])
    if (loaded.code === 0) yield* step(`launchctl bootout ${target}`, "launchctl", ["bootout", target])
    yield* fs.remove(file).pipe(Effect.mapError(fileError(`remove ${file}`)))
    return { file, removed: true }
  }).pipe(provide)

  return UserService.of({ state, install, start, uninstall })
})

/** Platforms with neither: install says so, doctor reports no service. */
const unsupported: UserServiceShape = (() => {
  const message = `prbox daemon install supports systemd (Linux) and launchd (macOS), not ${process.platform}; prboxd still starts on demand`
  const refuse = Effect.fail(new ServiceManagerUnavailable({ message }))
  return {
    state: Effect.succeed({
      manager: "none",
      available: false,
      file: null,
      installed: false,
      running: false,
      pid: null,
      detail: message
    }),
    install: () => refuse,
    start: () => refuse,
    uninstall: Effect.succeed({ file: null, removed: false })
  }
})()

/** The user service manager of this platform, run through its command-line tool. */
export const layer: Layer.Layer<UserService, never, Platform> = Layer.effect(
  UserService,
  process.platform === "linux"
    ? systemd
    : process.platform === "darwin"
      ? launchd
      : Effect.succeed(UserService.of(unsupported))
)
