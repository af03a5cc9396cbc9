import { execFileSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { parsePullRequestRef, Workspaces } from "../src/index.ts"
import { gitSync, makeRemote, movePullRequest, tempDir, workspacesLayer } from "./helpers.ts"

/** A bundle's header: the commits it needs the receiver to have (`-<id>` lines) and the refs it carries. */
const headerOf = (bundle: Uint8Array) => {
  const text = new TextDecoder("latin1").decode(bundle)
  const lines = text.slice(0, text.indexOf("\n\n")).split("\n")
  assert.strictEqual(lines[0], "# v2 git bundle")
  return {
    prerequisites: lines.filter((line) => line.startsWith("-")).map((line) => line.slice(1, 41)),
    refs: lines.slice(1).filter((line) => !line.startsWith("-"))
  }
}

describe("a bundle of one commit from a mirror", () => {
  it.effect(
    "holds what the receiver lacks, skips commits the mirror does not know, is empty when the receiver holds it all, and unbundles there",
    () =>
      Effect.gen(function* () {
        const root = yield* tempDir
        const remote = makeRemote(root)
        const ref = Result.getOrThrow(parsePullRequestRef(remote.path, { pr: 1 }))
        // A receiver at the PR's head before it moves.
        const receiver = NodePath.join(root, "receiver")
        gitSync(root, "clone", "--quiet", "--no-checkout", remote.path, receiver)
        gitSync(receiver, "fetch", "--quiet", "origin", "refs/pull/1/head")
        gitSync(receiver, "checkout", "--quiet", "--detach", remote.pr1)
        const { bundle, whole, next } = yield* Effect.gen(function* () {
          const workspaces = yield* Workspaces
          const next = movePullRequest(root, remote.pr1, "next.txt")
          const fetched = yield* workspaces.fetchPullRequest(ref)
          assert.strictEqual(fetched.commit, next)
          const refsBefore = gitSync(fetched.mirrorPath, "for-each-ref")
          const unknown = "0123456789abcdef0123456789abcdef01234567"
          const bundle = yield* workspaces.bundleCommit(fetched.mirrorPath, next, [unknown, remote.pr1])
          const whole = yield* workspaces.bundleCommit(fetched.mirrorPath, next, [])
          // A receiver that holds it (or a descendant of it) already gets an empty bundle, not a failure.
          assert.strictEqual((yield* workspaces.bundleCommit(fetched.mirrorPath, remote.pr1, [next])).length, 0)
          assert.strictEqual((yield* workspaces.bundleCommit(fetched.mirrorPath, next, [unknown, next])).length, 0)
          // The mirror's refs are left alone: the bundle's ref lives in a throwaway repository.
          assert.strictEqual(gitSync(fetched.mirrorPath, "for-each-ref"), refsBefore)
          return { bundle, whole, next }
        }).pipe(Effect.provide(workspacesLayer(NodePath.join(root, "state"))))

        assert.deepStrictEqual(headerOf(bundle).prerequisites, [remote.pr1])
        assert.deepStrictEqual(headerOf(bundle).refs, [`${next} refs/heads/prbox-bundle`])
        assert.deepStrictEqual(headerOf(whole).prerequisites, [])
        assert.isBelow(bundle.length, whole.length)

        // The receiver takes the small one, from its stdin.
        assert.throws(() => gitSync(receiver, "cat-file", "-e", next))
        const file = NodePath.join(root, "next.bundle")
        writeFileSync(file, bundle)
        execFileSync("sh", ["-c", 'git bundle unbundle /dev/stdin < "$1"', "unbundle", file], { cwd: receiver })
        assert.strictEqual(gitSync(receiver, "cat-file", "-t", next), "commit")
      })
  )
})
