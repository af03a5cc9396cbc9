import { homedir } from "node:os"
import { renderSystemdUnit, SYSTEMD_UNIT, systemdUnitPath } from "@prbox/domain"
import { Effect, FileSystem } from "effect"
import { ServiceManagerUnavailable, type ServiceState, UserService, type UserServiceShape } from "../UserService.ts"
import {
  checkedSpec,
  exists,
  fileError,
  keyValues,
  type Platform,
  providing,
  run,
  step,
  writeFileAtomically
} from "./ServiceSteps.ts"

/** systemd's user manager, through `systemctl --user`. */
export const systemdUserService = Effect.gen(function* () {
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
