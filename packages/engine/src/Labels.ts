/** Labels on every sandbox container, so state can be rebuilt from Docker alone. */
export const LABELS = {
  sandbox: "dev.prbox.sandbox",
  pr: "dev.prbox.pr",
  repo: "dev.prbox.repo",
  home: "dev.prbox.home",
  /** The install id of the `$PRBOX_HOME` that made it (Installation.ts): homes are paths, and paths repeat across machines. */
  install: "dev.prbox.install",
  /**
   * The sandbox's port on this machine's 127.0.0.1, on a container of an engine
   * whose ports are forwarded here over SSH (a remote engine): a daemon
   * started afresh forwards it again (HostPorts.ts).
   */
  port: "dev.prbox.port"
} as const
