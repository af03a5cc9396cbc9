import { homedir } from "node:os"
import { LAUNCHD_LABEL, launchdAgentPath, renderLaunchdPlist } from "@prbox/domain"
import { Effect, FileSystem } from "effect"
import { ServiceManagerUnavailable, type ServiceState, UserService, type UserServiceShape } from "../UserService.ts"
import {
  checkedSpec,
  exists,
  fileError,
  type Platform,
  providing,
  run,
  step,
  writeFileAtomically
} from "./ServiceSteps.ts"

/** launchd's gui domain of this user, through `launchctl`. */
export const launchdUserService = Effect.gen(function* () {
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
