import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert } from "@effect/vitest"
import type { Sandbox } from "@prbox/domain"
import { Effect } from "effect"
import { movePullRequest, type TestRemote } from "../../git/test/helpers.ts"
import { SandboxService } from "../src/index.ts"
import { rowOf } from "./harness.ts"

/**
 * Changes a tracked file and adds an untracked one in `folder` (the
 * workspace copy the sandbox's git sees), moves the PR on, and checks that
 * even `update --force` refuses, listing both, and leaves them, the head and
 * the row as they were. Returns the workspace's head, read by `head`.
 */
export const refusesOverUncommittedChanges = (
  running: Sandbox,
  folder: string,
  fixture: { readonly home: string; readonly remote: TestRemote },
  head: () => string
) =>
  Effect.gen(function* () {
    const sandboxes = yield* SandboxService
    writeFileSync(join(folder, "pr1.txt"), "my change\n")
    writeFileSync(join(folder, "notes.txt"), "mine\n")
    movePullRequest(fixture.home, fixture.remote.pr1, "next.txt")

    const refused = yield* Effect.flip(sandboxes.update(running.id, { force: true }))
    assert.strictEqual(refused._tag, "UpdateRefused")
    if (refused._tag !== "UpdateRefused") return
    assert.deepStrictEqual([...refused.changedFiles].sort(), ["notes.txt", "pr1.txt"])
    assert.include(refused.message, "uncommitted changes")
    assert.include(refused.message, "pr1.txt")
    assert.include(refused.message, "notes.txt")
    assert.strictEqual(readFileSync(join(folder, "pr1.txt"), "utf8"), "my change\n")
    assert.strictEqual(readFileSync(join(folder, "notes.txt"), "utf8"), "mine\n")
    assert.strictEqual(head(), fixture.remote.pr1)
    assert.strictEqual((yield* rowOf(running.id)).sourceCommit, fixture.remote.pr1)
  })
