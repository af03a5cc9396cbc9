import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { killChildAt } from "./agree.ts"
import { CHILD_ENV, HELPER_PHASE, phaseLine } from "./phases.ts"

/** What the engine and daemon tests of leftover helpers share: the killed child and the home's helpers. */

const CHILD = fileURLToPath(new URL("./helper-child.ts", import.meta.url))

export interface Helper {
  readonly id: string
  readonly state: string
  readonly name: string
}

/** The home's helper containers (dev.prbox.probe), as Docker lists them. */
export const helpersOf = (home: string): Array<Helper> =>
  execFileSync(
    "docker",
    [
      ...["ps", "-a", "--no-trunc", "--filter", "label=dev.prbox.probe"],
      ...["--filter", `label=dev.prbox.home=${home}`, "--format", "{{.ID}} {{.State}} {{.Names}}"]
    ],
    { encoding: "utf8" }
  )
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => {
      const [id = "", state = "", name = ""] = line.split(" ")
      return { id, state, name }
    })

/** Removes whatever helper of the home is still there (a test's cleanup). */
export const removeHelpersOf = (home: string): void => {
  const left = helpersOf(home).map((helper) => helper.id)
  if (left.length > 0) execFileSync("docker", ["rm", "-f", ...left], { stdio: "ignore" })
}

/** An engine on `home` in a child process (helper-child.ts), killed with SIGKILL while its folder read's helper exists. */
export const killMidFolderRead = (home: string, runId: string) =>
  killChildAt({
    script: CHILD,
    phase: HELPER_PHASE,
    expected: phaseLine(HELPER_PHASE),
    env: { [CHILD_ENV.home]: home, [CHILD_ENV.runId]: runId },
    seconds: 60
  })
