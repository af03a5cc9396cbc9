/**
 * An argv that prints how many processes in a container have `sleep <marker>`
 * on their command line (read from /proc, so no `ps` is needed). The marker
 * reaches the probe in two pieces so that the probe's own command line never
 * holds it (a `grep` for it would count itself).
 */
export const countSleepsArgv = (marker: string): ReadonlyArray<string> => [
  "sh",
  "-c",
  'n=0; for f in /proc/[0-9]*/cmdline; do line=$(tr "\\0" " " < "$f" 2>/dev/null); case "$line" in *"$1$2"*) n=$((n+1));; esac; done; echo $n',
  "probe",
  "sleep ",
  marker
]
