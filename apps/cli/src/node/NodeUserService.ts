import { Effect, Layer } from "effect"
import { ServiceManagerUnavailable, UserService, type UserServiceShape } from "../UserService.ts"
import { launchdUserService } from "./LaunchdUserService.ts"
import type { Platform } from "./ServiceSteps.ts"
import { systemdUserService } from "./SystemdUserService.ts"

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
    ? systemdUserService
    : process.platform === "darwin"
      ? launchdUserService
      : Effect.succeed(UserService.of(unsupported))
)
