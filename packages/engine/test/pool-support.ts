import { assert } from "@effect/vitest"
import type { Sandbox } from "@prbox/domain"
import { Effect } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { WarmPool } from "../src/index.ts"
import { healthzGitImage } from "./git-image.ts"
import { logLines, openRunning } from "./harness.ts"
import { prebuiltBase } from "./prebuild-support.ts"

/** A sandbox's progress log as one text. */
export const logOf = (row: Sandbox) => Effect.map(logLines(row.id), (lines) => lines.join("\n"))

/** The warm pool's tests' environment: an image with git, each create-time step leaving a trace. */
export const poolDevcontainer = JSON.stringify({
  image: healthzGitImage(),
  // The home's file: what onCreate leaves outside the workspace reaches a claimed container too.
  onCreateCommand:
    "mkdir -p deps ~/.cache && echo made-on-$(git rev-parse --short HEAD) > deps/made && echo home-made > ~/.cache/made",
  updateContentCommand: "echo update-$(cat pr.txt 2>/dev/null || echo base) >> deps/log",
  postCreateCommand: "echo post > post.txt"
})

/** Prebuilds on, and a warm pool of `size`. */
export const poolConfig = (size: number) => ({
  prebuilds: { maxGiB: 10, keepDays: 7 },
  warmPool: { size, idleMinutes: 30 }
})

/** A repository whose base (of `devcontainer`) has a prebuild ready and the pool filled (an open of PR 3, then of PR 4). */
export const primed = (remote: string, devcontainer: string = poolDevcontainer) =>
  Effect.gen(function* () {
    const { base } = yield* prebuiltBase(remote, devcontainer)
    pushPullRequest(remote, 4, { "four.txt": "4" })
    const four = yield* openRunning(remote, 4)
    assert.include(yield* logOf(four), "from prebuild", "the second open starts from the prebuild")
    const pool = yield* WarmPool
    yield* pool.settled
    return { base, pool }
  })
