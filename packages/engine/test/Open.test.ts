import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { SandboxService } from "../src/index.ts"
import { healthzGitImage } from "./git-image.ts"
import { rowOf, withEngine } from "./harness.ts"

const login = (port: number, password: string) =>
  Effect.promise(() =>
    fetch(`http://127.0.0.1:${port}/login`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ password }).toString()
    })
  )

describe("open", () => {
  it.live("opens a PR into a running sandbox behind its password", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const opened = yield* sandboxes.open({ input: remote.path, pr: 1 })
        assert.include(["creating", "cloning"], opened.status)
        yield* sandboxes.awaitIdle(opened.id)
        const row = yield* rowOf(opened.id)
        assert.strictEqual(row.status, "running", row.error ?? "")
        assert.strictEqual(row.sourceCommit, remote.pr1)
        const port = row.hostPort ?? 0
        const health = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/healthz`))
        assert.strictEqual(health.status, 200)
        const password = row.accessPassword === null ? "" : Redacted.value(row.accessPassword)
        const good = yield* login(port, password)
        assert.strictEqual(good.status, 302)
        const bad = yield* login(port, `${password}x`)
        assert.notStrictEqual(bad.status, 302)
      })
    )
  )

  it.live("says each step under the status the row has then: never an earlier one after a later", () =>
    withEngine({ config: { image: healthzGitImage() } }, ({ remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const opened = yield* sandboxes.open({ input: remote.path, pr: 1 })
        yield* sandboxes.awaitIdle(opened.id)
        const events = yield* sandboxes.logs(opened.id, { limit: 1000 })
        const order = ["creating", "cloning", "starting", "running"]
        const said = events.map((event) => `${event.status}: ${event._tag === "Progress" ? event.line : "(status)"}`)
        // The image has git: the container's own checks out the PR, a step said while the row is starting.
        assert.isTrue(
          said.some((line) => line.startsWith("starting: checking out")),
          said.join("\n")
        )
        const ranks = events.map((event) => order.indexOf(event.status))
        assert.deepStrictEqual(
          ranks,
          [...ranks].sort((a, b) => a - b),
          said.join("\n")
        )
      })
    )
  )
})
