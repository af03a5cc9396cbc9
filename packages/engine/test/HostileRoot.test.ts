import { spawnSync } from "node:child_process"
import { existsSync, statSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { statePaths } from "@prbox/domain"
import { Effect } from "effect"
import { CONTAINER_HOME } from "../src/CodeServerSpec.ts"
import { healthzGitImage } from "./git-image.ts"
import { inspectContainer, openRunning, withEngine } from "./harness.ts"

/**
 * Root inside a sandbox (an image's passwordless sudo, a trusted
 * repository's root user; here `docker exec -u 0`) tries to leave something
 * in the folders the host keeps for it (the workspace and the home) that
 * would act on the host: a device node, a setuid copy of a shell. A root
 * daemon's state folder is its own (0700), so no other user of the host
 * reaches what is left there; the device node cannot be made at all.
 */
const asRootIn = (containerId: string, script: string) =>
  spawnSync("docker", ["exec", "-u", "0", containerId, "sh", "-c", script], { encoding: "utf8" })

/**
 * Runs `path` (a shell; `-p` keeps what its setuid bit gives) from a shell of
 * nobody (uid 65534) on the host: what any other user of the machine could do.
 */
const asNobody = (path: string) =>
  spawnSync(
    "setpriv",
    ["--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c", `'${path}' -p -c 'id -u'`],
    {
      encoding: "utf8"
    }
  )

describe("root in a sandbox, against the host", () => {
  it.live("cannot make a device node in the workspace or the home: its container has no MKNOD", () =>
    withEngine({ config: { image: healthzGitImage() } }, ({ remote }) =>
      Effect.gen(function* () {
        const row = yield* openRunning(remote.path, 1)
        const containerId = row.containerId ?? ""
        const dropped = inspectContainer(containerId).HostConfig.CapDrop ?? []
        assert.includeMembers([...dropped], ["MKNOD", "NET_RAW", "SETFCAP"])
        const workspace = row.environmentPlan?.workspaceFolder ?? "/workspace"
        for (const folder of [workspace, CONTAINER_HOME]) {
          const made = asRootIn(containerId, `mknod ${folder}/null c 1 3`)
          assert.notStrictEqual(made.status, 0, `mknod in ${folder} succeeded`)
        }
        assert.isFalse(existsSync(join(row.workspacePath ?? "", "null")))
      })
    )
  )

  it.live("a setuid copy of a shell left in the workspace and the home is out of every other host user's reach", () =>
    withEngine({ config: { image: healthzGitImage() } }, ({ home, remote }) =>
      Effect.gen(function* () {
        const row = yield* openRunning(remote.path, 1)
        const containerId = row.containerId ?? ""
        const workspace = row.environmentPlan?.workspaceFolder ?? "/workspace"
        for (const folder of [workspace, CONTAINER_HOME]) {
          const left = asRootIn(containerId, `cp /bin/sh ${folder}/rootsh && chmod 4755 ${folder}/rootsh`)
          assert.strictEqual(left.status, 0, left.stderr)
        }
        const onHost = [join(row.workspacePath ?? "", "rootsh"), join(statePaths(home).sandbox(row.id).home, "rootsh")]
        for (const path of onHost) {
          assert.strictEqual(statSync(path).mode & 0o4000, 0o4000, "the setuid bit was not left as the test expects")
          const run = asNobody(path)
          assert.notStrictEqual(run.stdout.trim(), "0", `${path} gave another user root`)
          assert.notStrictEqual(run.status, 0, `${path} ran for another user`)
        }
        // What keeps it out of reach: the folder holding both is root's alone, and so is the state folder.
        const sealed = statSync(statePaths(home).sandbox(row.id).sealed ?? "")
        assert.deepStrictEqual([sealed.uid, sealed.mode & 0o7777], [0, 0o700], "the sandbox's folder is not sealed")
        assert.strictEqual(statSync(home).mode & 0o077, 0, "the state folder is open to other users")
        assert.strictEqual(statSync(home).uid, process.getuid?.())
      })
    )
  )
})
