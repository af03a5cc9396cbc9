/** Labels on every sandbox container, so state can be rebuilt from Docker alone. */
export const LABELS = {
  sandbox: "dev.prbox.sandbox",
  pr: "dev.prbox.pr",
  repo: "dev.prbox.repo",
  home: "dev.prbox.home",
  /** The install id of the `$PRBOX_HOME` that made it (Installation.ts): homes are paths, and paths repeat across machines. */
  install: "dev.prbox.install"
} as const
