/**
 * prboxd as a user service: the systemd user unit (Linux) and the launchd
 * agent (macOS) `prbox daemon install` writes. Pure text: the CLI's adapter
 * asks the service manager where and whether, and writes what this renders.
 */

/** What the service runs: the CLI's own daemon launcher, with the environment it would give it. */
export interface DaemonServiceSpec {
  /** Absolute path of the program (the launcher's command). */
  readonly program: string
  readonly args: ReadonlyArray<string>
  /** Variables set for the daemon, in the order written. */
  readonly environment: ReadonlyArray<readonly [name: string, value: string]>
  /** `$PRBOX_HOME/logs/prboxd.log`: launchd sends the daemon's stdout and stderr there, as the CLI does. */
  readonly logPath: string
}

export const SYSTEMD_UNIT = "prboxd.service"
export const LAUNCHD_LABEL = "prbox.prboxd"

/**
 * `<config>/systemd/user/prboxd.service`, where `<config>` is the user
 * manager's `$XDG_CONFIG_HOME` (absolute), else `<its $HOME>/.config`: the
 * directory that manager reads user units from.
 */
export const systemdUnitPath = (managerEnv: { readonly [name: string]: string | undefined }, userHome: string) => {
  const xdg = managerEnv.XDG_CONFIG_HOME
  const config = xdg?.startsWith("/") ? xdg : `${managerEnv.HOME ?? userHome}/.config`
  return `${config.replace(/\/+$/, "")}/systemd/user/${SYSTEMD_UNIT}`
}

export const launchdAgentPath = (userHome: string) =>
  `${userHome.replace(/\/+$/, "")}/Library/LaunchAgents/${LAUNCHD_LABEL}.plist`

/**
 * The variables of the CLI's environment the service keeps: what the daemon
 * started on demand would have found (PATH for git and hooks, Docker's
 * endpoint, prbox's own settings and prboxd's limits). Nothing else: a token
 * in the user's shell must not end up in a unit file.
 */
const KEPT =
  /^(PATH|DOCKER_HOST|DOCKER_TLS_VERIFY|DOCKER_CERT_PATH|XDG_CACHE_HOME|PRBOX_CACHE|PRBOX_DEBIAN_MIRROR|PRBOXD_[A-Z_]+)$/

export const keptEnvironment = (env: { readonly [name: string]: string | undefined }): Record<string, string> =>
  Object.fromEntries(
    Object.entries(env)
      .filter((entry): entry is [string, string] => KEPT.test(entry[0]) && entry[1] !== undefined && entry[1] !== "")
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  )

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters (but tab, newline, return) are what is refused
const XML_UNSAFE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/

/** Why this spec cannot be rendered faithfully for `manager`, or undefined when it can. */
export const invalidServiceSpec = (spec: DaemonServiceSpec, manager: "systemd" | "launchd"): string | undefined => {
  if (!spec.program.startsWith("/")) return `the daemon's program must be an absolute path, not ${spec.program}`
  // systemd refuses these in ExecStart's program path, however they are escaped ("Executable name contains special characters").
  if (manager === "systemd" && /["'\\\t\n\r]/.test(spec.program)) {
    return `systemd cannot run a program whose path has a quote, a backslash, a tab or a newline: ${JSON.stringify(spec.program)}`
  }
  if (!spec.logPath.startsWith("/")) return `the daemon's log must be an absolute path, not ${spec.logPath}`
  const name = spec.environment.find(([name]) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
  if (name !== undefined) return `not a valid environment variable name: ${JSON.stringify(name[0])}`
  const strings = [spec.program, ...spec.args, spec.logPath, ...spec.environment.flat()]
  // XML 1.0 (the plist) cannot carry these at all, not even escaped; systemd could, but one rule for both.
  const control = strings.find((text) => XML_UNSAFE.test(text))
  if (control !== undefined) return `a control character in ${JSON.stringify(control)}`
  return undefined
}

const cEscapes: Record<string, string> = { "\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t" }

/**
 * One word of a systemd setting, double-quoted: C escapes for `\`, `"` and
 * whitespace controls, `%%` for a literal `%` (specifiers are expanded
 * everywhere) and, where systemd expands variables (ExecStart's arguments,
 * not its program path, not Environment=), `$$` for a literal `$`.
 */
export const systemdQuote = (text: string, options: { readonly variables: boolean }) =>
  `"${text.replace(/[\\"\n\r\t%$]/g, (char) =>
    char === "%" ? "%%" : char === "$" ? (options.variables ? "$$" : "$") : (cEscapes[char] ?? char)
  )}"`

export const renderSystemdUnit = (spec: DaemonServiceSpec): string =>
  [
    "# Written by `prbox daemon install`; `prbox daemon uninstall` removes it.",
    "[Unit]",
    "Description=prbox daemon (prboxd)",
    "",
    "[Service]",
    "Type=exec",
    `ExecStart=${[
      systemdQuote(spec.program, { variables: false }),
      ...spec.args.map((arg) => systemdQuote(arg, { variables: true }))
    ].join(" ")}`,
    ...spec.environment.map(([name, value]) => `Environment=${systemdQuote(`${name}=${value}`, { variables: false })}`),
    "Restart=on-failure",
    "RestartSec=2s",
    // SIGTERM to prboxd alone: it stops its own children (git, hooks) before it exits 0.
    "KillMode=mixed",
    "TimeoutStopSec=30s",
    "",
    "[Install]",
    "WantedBy=default.target",
    ""
  ].join("\n")

const xmlEscapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" }

export const xmlEscape = (text: string) => text.replace(/[&<>"']/g, (char) => xmlEscapes[char] ?? char)

const xmlString = (text: string) => `<string>${xmlEscape(text)}</string>`

export const renderLaunchdPlist = (spec: DaemonServiceSpec): string =>
  [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    "<dict>",
    "  <key>Label</key>",
    `  ${xmlString(LAUNCHD_LABEL)}`,
    "  <key>ProgramArguments</key>",
    "  <array>",
    ...[spec.program, ...spec.args].map((arg) => `    ${xmlString(arg)}`),
    "  </array>",
    "  <key>EnvironmentVariables</key>",
    "  <dict>",
    ...spec.environment.flatMap(([name, value]) => [`    <key>${xmlEscape(name)}</key>`, `    ${xmlString(value)}`]),
    "  </dict>",
    "  <key>RunAtLoad</key>",
    "  <true/>",
    // Restarted when it exits with a failure; `prbox daemon stop` (exit 0) stays stopped.
    "  <key>KeepAlive</key>",
    "  <dict>",
    "    <key>SuccessfulExit</key>",
    "    <false/>",
    "  </dict>",
    "  <key>StandardOutPath</key>",
    `  ${xmlString(spec.logPath)}`,
    "  <key>StandardErrorPath</key>",
    `  ${xmlString(spec.logPath)}`,
    "</dict>",
    "</plist>",
    ""
  ].join("\n")
