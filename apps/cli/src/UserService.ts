import { type ClientHome, type DaemonLauncher, Launch } from "@prbox/client"
import { type DaemonServiceSpec, keptEnvironment } from "@prbox/domain"
import { Context, type Effect, Schema } from "effect"

/**
 * The user's service manager (systemd's user instance, launchd's gui domain),
 * as `prbox daemon install|uninstall` and `prbox doctor` need it. The Node
 * implementation runs systemctl / launchctl (node/NodeUserService.ts).
 */

export type ServiceManagerKind = "systemd" | "launchd" | "none"

/** What `prbox doctor` reports about the service (its `--json` field names are stable). */
export interface ServiceState {
  readonly manager: ServiceManagerKind
  /** The manager answered (e.g. `systemctl --user show-environment` succeeded). */
  readonly available: boolean
  /** The unit file or agent plist prbox writes (null where no manager is supported). */
  readonly file: string | null
  /** That file exists. */
  readonly installed: boolean
  /** The manager says the service runs. */
  readonly running: boolean
  readonly pid: number | null
  /** The manager's own words (e.g. `active (running), enabled`), or why they are unknown. */
  readonly detail: string
}

/** No user service manager answers here: nothing was written. */
export class ServiceManagerUnavailable extends Schema.TaggedError<ServiceManagerUnavailable>()(
  "ServiceManagerUnavailable",
  { message: Schema.String }
) {}

/** The manager (or the unit file) refused a step: which one, and its own words. */
export class ServiceManagerFailed extends Schema.TaggedError<ServiceManagerFailed>()("ServiceManagerFailed", {
  operation: Schema.String,
  message: Schema.String
}) {}

export type ServiceError = ServiceManagerUnavailable | ServiceManagerFailed

export interface UserServiceShape {
  /** Never fails: what cannot be known is said in `detail`, with `available: false`. */
  readonly state: Effect.Effect<ServiceState>
  /** Writes the unit (when it differs) and registers it with the manager, without starting it; `changed` when the file was new or different. */
  readonly install: (spec: DaemonServiceSpec) => Effect.Effect<{ file: string; changed: boolean }, ServiceError>
  /** Starts the installed service, or restarts it (to run a changed unit). */
  readonly start: (restart: boolean) => Effect.Effect<void, ServiceError>
  /** Stops and unregisters the service, then removes its file; `removed: false` when there was none. */
  readonly uninstall: Effect.Effect<{ file: string | null; removed: boolean }, ServiceError>
}

export class UserService extends Context.Service<UserService, UserServiceShape>()("prbox/cli/UserService") {}

/**
 * The daemon as the service runs it: the CLI's own launcher (program and
 * arguments) and the environment the CLI starts it with (`daemonEnv`, for
 * this home), plus the kept variables of the user's environment.
 */
export const daemonServiceSpec = (
  launcher: DaemonLauncher,
  home: ClientHome,
  env: NodeJS.ProcessEnv
): DaemonServiceSpec => {
  const daemonEnv = Launch.daemonEnv({ ...keptEnvironment(env), PRBOX_HOME: home.home })
  return {
    program: launcher.command,
    args: launcher.args,
    environment: Object.entries(daemonEnv).filter((entry): entry is [string, string] => entry[1] !== undefined),
    logPath: home.logPath
  }
}
