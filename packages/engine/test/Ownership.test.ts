import { execFileSync } from "node:child_process"
import { statSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { openRunning, withEngine } from "./harness.ts"

const filesUnder = (dir: string, ...tests: ReadonlyArray<string>): Array<string> =>
  execFileSync("find", [dir, ...tests, "-type", "f"], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.length > 0)

describe("workspace ownership", () => {
  // Only a root daemon hands workspaces over: elsewhere the test is reported skipped, not passed.
  it.live.skipIf(process.getuid?.() !== 0)(
    "a root daemon hands the workspace to a non-root user but never the mirror's shared objects",
    () =>
      withEngine({}, ({ remote, home }) =>
        Effect.gen(function* () {
          const row = yield* openRunning(remote.path, 1)
          const workspace = row.workspacePath ?? ""
          assert.strictEqual(statSync(workspace).uid, 1000)
          assert.strictEqual(statSync(join(workspace, "pr1.txt")).uid, 1000)
          assert.strictEqual(statSync(join(workspace, ".git", "objects")).uid, 1000, "new objects can be written")
          const mirrorFiles = filesUnder(join(home, "mirrors"))
          assert.isNotEmpty(mirrorFiles)
          for (const file of mirrorFiles) assert.strictEqual(statSync(file).uid, 0, file)
          const user = execFileSync("docker", ["inspect", "-f", "{{.Config.User}}", row.containerId ?? ""], {
            encoding: "utf8"
          }).trim()
          assert.strictEqual(user, "1000:1000")
        })
      )
  )

  // A file changed after it was written has a ctime past its mtime: equal, nothing handed it over later.
  it.live.skipIf(process.getuid?.() !== 0)(
    "a root daemon has the checkout written as the sandbox user, in its private state folder: no walk over it afterwards",
    () =>
      withEngine({}, ({ remote, home }) =>
        Effect.gen(function* () {
          assert.strictEqual(statSync(home).mode & 0o777, 0o700, "the state folder is private")
          const row = yield* openRunning(remote.path, 1)
          const workspace = row.workspacePath ?? ""
          const checkout = filesUnder(workspace, "-path", join(workspace, ".git"), "-prune", "-o")
          assert.isNotEmpty(checkout)
          for (const file of checkout) {
            const info = statSync(file, { bigint: true })
            assert.strictEqual(info.uid, 1000n, file)
            assert.strictEqual(info.ctimeNs, info.mtimeNs, `${file} was changed after it was written`)
          }
          assert.strictEqual(statSync(join(workspace, ".git", "index")).uid, 1000)
          for (const file of filesUnder(join(home, "mirrors"))) assert.strictEqual(statSync(file).uid, 0, file)
        })
      )
  )
})
