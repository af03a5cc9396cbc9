/**
 * Every path under `$PRBOX_HOME`, in one place. Pure string joins (POSIX):
 * the daemon, the engine, the store and the clients all ask here, so the
 * layout cannot drift between them.
 */

/** `$PRBOX_HOME` when set (and not empty), else `<user's home>/.prbox`. */
export const resolveHome = (env: { readonly PRBOX_HOME?: string | undefined }, userHome: string): string =>
  env.PRBOX_HOME !== undefined && env.PRBOX_HOME.length > 0 ? env.PRBOX_HOME : join(userHome, ".prbox")

const join = (...parts: ReadonlyArray<string>): string =>
  parts
    .map((part, index) => (index === 0 ? part.replace(/\/+$/, "") : part.replace(/^\/+|\/+$/g, "")))
    .filter((part, index) => index === 0 || part.length > 0)
    .join("/") || "/"

export interface StatePaths {
  readonly home: string
  /** `config.json`: the user's optional settings, read afresh per open. */
  readonly config: string
  /** `prbox.db` (0600): rows and the progress log. */
  readonly database: string
  /** One bare mirror per repository. */
  readonly mirrors: string
  readonly workspaces: string
  /** The PR's checkout, bind-mounted at the container's workspace. */
  readonly workspace: (id: string) => string
  readonly sandboxHomes: string
  /** The sandbox user's home directory inside the container. */
  readonly sandboxHome: (id: string) => string
  /** `run/` (0700): the daemon's socket and lock. */
  readonly run: string
  readonly socket: string
  readonly lock: string
  /** `logs/` (0700): the daemon's rotating log. */
  readonly logs: string
  readonly daemonLog: string
  /** Node's compile cache for the daemon and the CLI. */
  readonly compileCache: string
  /** One code-server distribution per version, mounted read-only into sandboxes. */
  readonly codeServer: string
}

export const statePaths = (home: string): StatePaths => ({
  home,
  config: join(home, "config.json"),
  database: join(home, "prbox.db"),
  mirrors: join(home, "mirrors"),
  workspaces: join(home, "workspaces"),
  workspace: (id) => join(home, "workspaces", id),
  sandboxHomes: join(home, "homes"),
  sandboxHome: (id) => join(home, "homes", id),
  run: join(home, "run"),
  socket: join(home, "run", "prboxd.sock"),
  lock: join(home, "run", "prboxd.lock"),
  logs: join(home, "logs"),
  daemonLog: join(home, "logs", "prboxd.log"),
  compileCache: join(home, "cache", "node-compile"),
  codeServer: join(home, "code-server")
})
