/** The CLI's exit codes (`prbox --help` and the README list them); without effect, for the CLI's fast path. */
export const ExitCode = {
  ok: 0,
  other: 1,
  usage: 2,
  notFound: 3,
  conflict: 4,
  daemonUnreachable: 5,
  dockerUnavailable: 6,
  invalidConfig: 7,
  busy: 8
} as const
