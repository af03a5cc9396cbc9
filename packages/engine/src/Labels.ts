/** Labels on every sandbox container, so state can be rebuilt from Docker alone. */
export const LABELS = {
  sandbox: "dev.prbox.sandbox",
  pr: "dev.prbox.pr",
  repo: "dev.prbox.repo",
  home: "dev.prbox.home"
} as const
