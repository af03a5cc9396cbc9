import { randomBytes } from "node:crypto"
import { lifecyclePathTo, PullRequestNumber, type Sandbox, SandboxId, type SandboxStatus } from "@prbox/domain"
import { SandboxRepo, type StatusUpdate } from "@prbox/store"
import { Effect, Redacted } from "effect"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { ContainerRuntime, LABELS } from "../src/index.ts"
import { healthzTag } from "./harness.ts"

export const newId = (): SandboxId => SandboxId.make(randomBytes(6).toString("hex"))

/** A row of PR `pullRequest` of the fixture's repository, walked to `status`. */
export const seedRow = (
  status: SandboxStatus,
  fields: Omit<StatusUpdate, "to"> = {},
  key: {
    readonly account?: string
    readonly pullRequest?: number
    readonly host?: string
    /** The Docker engine it lives on (absent: the local one). */
    readonly engine?: string
    readonly id?: SandboxId
  } = {}
) =>
  Effect.gen(function* () {
    const repo = yield* SandboxRepo
    const id = key.id ?? newId()
    let row: Sandbox = yield* repo.insert({
      id,
      provider: "git",
      host: key.host ?? "local",
      account: key.account ?? "",
      repository: "/fixture/remote.git",
      pullRequest: PullRequestNumber.make(key.pullRequest ?? 1),
      accessPassword: Redacted.make("seeded-password"),
      createdAt: 1,
      lastActivityAt: 1,
      ...(key.engine === undefined ? {} : { engine: key.engine })
    })
    const steps = lifecyclePathTo(status)
    for (const [index, to] of steps.entries()) {
      row = yield* repo.updateStatus(id, index === steps.length - 1 ? { ...fields, to } : { to })
    }
    return row
  })

/** A container labelled as a sandbox of `home` (as the engine labels them). */
export const labelledContainer = (
  home: string,
  sandboxId: string,
  options: { readonly running: boolean; readonly labels?: Readonly<Record<string, string>> }
) =>
  Effect.gen(function* () {
    const runtime = yield* ContainerRuntime
    const containerId = yield* runtime.provision({
      name: `prbox-test-${randomBytes(4).toString("hex")}`,
      image: healthzTag,
      args: [],
      env: {},
      labels: {
        [TEST_RUN_LABEL]: inject("testRunId"),
        [LABELS.sandbox]: sandboxId,
        [LABELS.pr]: "1",
        [LABELS.repo]: "local//fixture/remote.git",
        [LABELS.home]: home,
        ...options.labels
      },
      binds: [],
      user: "1000:1000",
      workingDir: "/",
      port: 8080,
      capDrop: []
    })
    if (options.running) yield* runtime.start(containerId)
    return containerId
  })

export const isRunning = (containerId: string) =>
  Effect.map(ContainerRuntime, (runtime) => runtime.state(containerId)).pipe(
    Effect.flatten,
    Effect.map((state) => state._tag === "Running")
  )
