import { execFileSync } from "node:child_process"
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { statePaths } from "@prbox/domain"
import { Effect } from "effect"
import { SandboxService } from "../src/index.ts"
import { bounded, openRunning, openSettled, rowOf, withEngine } from "./harness.ts"

// The tests run as root, so permissions cannot make host I/O fail: a path
// replaced by a file (ENOTDIR), a full tmpfs (ENOSPC) or a read-only mount do.

/** A tmpfs of `size` mounted on `path` for the scope (unmounted before the home is removed). */
const tmpfs = (path: string, options: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      mkdirSync(path, { recursive: true })
      execFileSync("mount", ["-t", "tmpfs", "-o", options, "tmpfs", path])
    }),
    () => Effect.sync(() => execFileSync("umount", ["-l", path]))
  )

/** Fills the file system under `dir` until it refuses another byte. */
const fill = (dir: string) => {
  try {
    execFileSync("dd", ["if=/dev/zero", `of=${dir}/.fill`, "bs=4k"], { stdio: "ignore" })
  } catch {
    // dd stops with ENOSPC: the file system is full, as wanted.
  }
}

const assertFailedWith = (row: { readonly status: string; readonly error: string | null }, reason: RegExp) => {
  assert.strictEqual(row.status, "error", `still ${row.status}`)
  assert.match(row.error ?? "", reason)
}

describe("host I/O that fails puts the row in error with a reason (never stuck in a create step)", () => {
  it.live("restart after the workspace directory was deleted", () =>
    withEngine({}, ({ home, remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const running = yield* openRunning(remote.path, 1)
        yield* sandboxes.stop(running.id)
        rmSync(statePaths(home).sandbox(running.id).root, { recursive: true, force: true })

        const restarting = yield* sandboxes.restart(running.id)
        assert.strictEqual(restarting.status, "starting")
        yield* sandboxes.awaitIdle(running.id).pipe(bounded("the restart worker did not end"))
        assertFailedWith(yield* rowOf(running.id), /could not read the workspace \(ENOENT\)/)
      })
    )
  )

  it.live("a sandbox's folder that cannot be created ($PRBOX_HOME/sandboxes is a file)", () =>
    withEngine({}, ({ home, remote }) =>
      Effect.gen(function* () {
        writeFileSync(statePaths(home).sandboxes, "not a directory")
        const row = yield* openSettled(remote.path, 1).pipe(bounded("the create worker did not end"))
        assertFailedWith(row, /could not create the sandbox's folder \((ENOTDIR|EEXIST)\)/)
      })
    )
  )

  it.live("a workspace that cannot be written (the sandboxes directory on a full tmpfs)", () =>
    withEngine({}, ({ home, remote }) =>
      Effect.scoped(
        Effect.gen(function* () {
          const workspaces = statePaths(home).sandboxes
          yield* tmpfs(workspaces, "size=64k")
          fill(workspaces)
          const row = yield* openSettled(remote.path, 1).pipe(bounded("the create worker did not end"))
          assertFailedWith(row, /.+/)
          assert.isNull(row.containerId)
        })
      )
    )
  )

  it.live("a workspace that cannot be written (the sandboxes directory is a read-only mount)", () =>
    withEngine({}, ({ home, remote }) =>
      Effect.scoped(
        Effect.gen(function* () {
          yield* tmpfs(statePaths(home).sandboxes, "ro,size=64k")
          const row = yield* openSettled(remote.path, 1).pipe(bounded("the create worker did not end"))
          assertFailedWith(row, /.+/)
          assert.isNull(row.containerId)
        })
      )
    )
  )
})

describe("a defect inside a worker", () => {
  it.live("is recorded on its row (error, safe reason) and ends the worker", () =>
    withEngine(
      { runtime: (real) => ({ ...real, ensureImage: () => Effect.die(new Error("injected defect: /secret/path")) }) },
      ({ remote }) =>
        Effect.gen(function* () {
          const row = yield* openSettled(remote.path, 1).pipe(bounded("the create worker did not end"))
          assertFailedWith(row, /^unexpected failure$/)
        })
    )
  )
})
