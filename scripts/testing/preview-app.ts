import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** The app preview tests and `pnpm bench preview` run inside a sandbox (its routes: the file's header). */
export const PREVIEW_APP_PATH = fileURLToPath(new URL("./preview-app.cjs", import.meta.url))

export interface PreviewAppOptions {
  readonly port: number
  /** Default 0.0.0.0; 127.0.0.1 for an app only the container itself can reach. */
  readonly host?: string
  /** Said in the app's hello line, so a test knows which app answered. */
  readonly name?: string
}

/**
 * Writes the app into /tmp, starts it in the background with the sandbox's
 * node (prbox's mounted code-server's, CodeServerSpec.ts's CODE_SERVER_MOUNT,
 * else the image's `node`), and returns once it listens; if it exits first,
 * fails with its output. The source travels in argv, so no host path or mount
 * is needed and it works on any engine. Parameters are positional, never
 * spliced into the script.
 */
const START = `
app=/tmp/prbox-preview-app-$2.cjs; log=/tmp/prbox-preview-app-$2.log
printf '%s' "$1" > "$app" || exit 1
node=/opt/prbox/code-server/bin/node
[ -x "$node" ] || node=$(command -v node) || { echo "no node in the sandbox" >&2; exit 127; }
nohup "$node" "$app" --port "$2" --host "$3" --name "$4" > "$log" 2>&1 < /dev/null &
pid=$!
echo $pid > /tmp/prbox-preview-app-$2.pid
i=0
while [ $i -lt 100 ]; do
  grep -q "listening on" "$log" && exit 0
  kill -0 $pid 2>/dev/null || { cat "$log"; exit 1; }
  sleep 0.1; i=$((i + 1))
done
echo "the app did not listen within 10 s"; cat "$log"; exit 1
`

/** argv for the daemon's exec endpoint (`prbox exec <id> -- ...`) that starts the app; exit code 0 once it listens. */
export const startPreviewAppArgv = (options: PreviewAppOptions): ReadonlyArray<string> => [
  "sh",
  "-c",
  START,
  "sh",
  readFileSync(PREVIEW_APP_PATH, "utf8"),
  String(options.port),
  options.host ?? "0.0.0.0",
  options.name ?? "app"
]

/** argv that stops the app `startPreviewAppArgv` started on `port`. */
export const stopPreviewAppArgv = (port: number): ReadonlyArray<string> => [
  "sh",
  "-c",
  `kill $(cat /tmp/prbox-preview-app-${port}.pid)`
]
