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
  /** `push/`: `prbox push`'s temporary repositories (one per push, removed when it ends). */
  readonly pushes: string
  /** Where sandboxes made before the sealed layout keep their workspaces (`<id>`), and their homes. */
  readonly workspaces: string
  readonly sandboxHomes: string
  /** One folder per sandbox (`<id>`), holding its sealed folder. */
  readonly sandboxes: string
  /**
   * The sandbox's own folders: `sealed/workspace` (the PR's checkout, the
   * container's workspace) and `sealed/home` (its user's home). Once a
   * container may run, `sealed` is root's and 0700: nothing root in the
   * container leaves there (a setuid shell) is in reach of a host user.
   */
  readonly sandbox: (id: string) => SandboxFolders
  /**
   * `spares/`: a ready prebuild's copies of its workspace and home, each a
   * sandbox's folder (`sealedFolders`) made ahead, renamed to a new
   * sandbox's when an open starts from the prebuild.
   */
  readonly spares: string
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
  /** `ssh/` (0700): the `known_hosts` pinning each sandbox's host key, and the `Host *.prbox` config. */
  readonly ssh: { readonly folder: string; readonly knownHosts: string; readonly config: string }
}

export interface SandboxFolders {
  readonly root: string
  /** The folder the host closes once a container may run; undefined for a sandbox of the old layout. */
  readonly sealed: string | undefined
  readonly workspace: string
  readonly home: string
  /**
   * `ssh/`: where an SSH client (`prbox ssh-proxy`) listens for its
   * connection, the container's server dialling in (read-only in the
   * container); undefined for a sandbox of the old layout.
   */
  readonly sockets: string | undefined
}

/** The folders of a sandbox's folder `root`: its sealed folder with the workspace and the home, and its sockets. */
export const sealedFolders = (root: string): SandboxFolders => ({
  root,
  sealed: `${root}/sealed`,
  workspace: `${root}/sealed/workspace`,
  home: `${root}/sealed/home`,
  sockets: `${root}/ssh`
})

/**
 * A sandbox's folders, from where its row says its workspace is: a sandbox
 * made before the sealed layout keeps `workspaces/<id>` and `homes/<id>`
 * (unsealed) for life; every other is `sandboxes/<id>`'s, where its row
 * recorded it.
 */
export const sandboxFolders = (paths: StatePaths, id: string, workspacePath: string | null): SandboxFolders => {
  if (workspacePath === null) return paths.sandbox(id)
  // By its shape, not its spelling: the home may be reached by another path now (a link on the way).
  const sealedWorkspace = `/sandboxes/${id}/sealed/workspace`
  if (workspacePath.endsWith(sealedWorkspace)) {
    const root = workspacePath.slice(0, -"/sealed/workspace".length)
    return { ...sealedFolders(root), workspace: workspacePath }
  }
  return {
    root: workspacePath,
    sealed: undefined,
    workspace: workspacePath,
    home: join(paths.sandboxHomes, id),
    sockets: undefined
  }
}

export const statePaths = (home: string): StatePaths => ({
  home,
  config: join(home, "config.json"),
  database: join(home, "prbox.db"),
  mirrors: join(home, "mirrors"),
  pushes: join(home, "push"),
  workspaces: join(home, "workspaces"),
  sandboxHomes: join(home, "homes"),
  sandboxes: join(home, "sandboxes"),
  sandbox: (id) => sealedFolders(join(home, "sandboxes", id)),
  spares: join(home, "spares"),
  run: join(home, "run"),
  socket: join(home, "run", "prboxd.sock"),
  lock: join(home, "run", "prboxd.lock"),
  logs: join(home, "logs"),
  daemonLog: join(home, "logs", "prboxd.log"),
  compileCache: join(home, "cache", "node-compile"),
  codeServer: join(home, "code-server"),
  ssh: { folder: join(home, "ssh"), knownHosts: join(home, "ssh", "known_hosts"), config: join(home, "ssh", "config") }
})
