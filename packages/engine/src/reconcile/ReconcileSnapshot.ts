import type { Sandbox, SandboxId } from "@prbox/domain"
import type { SandboxRepo } from "@prbox/store"
import { Effect } from "effect"
import type { ContainerRuntimeShape } from "../ContainerRuntime.ts"
import type { LabelledContainer } from "../ContainerSpec.ts"
import { LABELS } from "../ContainerSpec.ts"
import { DiscoveryFailed } from "../Errors.ts"
import { ownInstall } from "../Installation.ts"

type PullRequestSelector = Parameters<SandboxRepo["Service"]["findByPr"]>[0]

/** Which rows and containers a run looks at: everything, or one PR's. */
export type ReconcileScope =
  | { readonly _tag: "All" }
  | {
      readonly _tag: "PullRequest"
      readonly provider: PullRequestSelector["provider"]
      readonly repository: string
      readonly pullRequest: PullRequestSelector["pullRequest"]
    }

/**
 * The rows and labelled containers a reconcile run works from: read once at
 * the start of the run, then kept current by the run's own writes (the run
 * holds the lifecycle permit, so nobody else writes a status meanwhile).
 */
export interface ReconcileSnapshot {
  readonly rows: ReadonlyArray<Sandbox>
  readonly containers: ReadonlyArray<LabelledContainer>
}

/** Where a run lists containers: one engine's runtime, for this home and install. */
export interface ListingTarget {
  readonly runtime: ContainerRuntimeShape
  readonly home: string
  readonly install: string
}

/**
 * This install's labelled containers in scope on one engine; a failed listing
 * fails closed, never "no containers". Listed by home, then another install's
 * are dropped (ownInstall): containers made before install ids carry none.
 */
export const listContainers = ({ runtime, home, install }: ListingTarget, scope: ReconcileScope) =>
  Effect.gen(function* () {
    const labels: Record<string, string> =
      scope._tag === "All" ? { [LABELS.home]: home } : { [LABELS.home]: home, [LABELS.pr]: String(scope.pullRequest) }
    const listed = yield* runtime
      .listByLabel(labels)
      .pipe(Effect.mapError((error) => new DiscoveryFailed({ operation: "containers", detail: error.message })))
    return listed.filter(
      (container) =>
        ownInstall(container.labels, install) &&
        (scope._tag === "All" || (container.labels[LABELS.repo] ?? "").endsWith(`/${scope.repository}`))
    )
  })

/** The rows in scope, every engine's. */
export const readRows = (repo: SandboxRepo["Service"], scope: ReconcileScope) =>
  (scope._tag === "All" ? repo.findAll() : repo.findByPr(scope)).pipe(
    Effect.mapError((error) => new DiscoveryFailed({ operation: "sandboxes", detail: error.message }))
  )

/**
 * One engine's snapshot: its rows, and the containers listed on it. A
 * container labelled with a row of another engine is left out: two addresses
 * can name one engine, and that row's own engine judges it.
 */
export const engineSnapshot = (
  rows: ReadonlyArray<Sandbox>,
  engine: string | null,
  containers: ReadonlyArray<LabelledContainer>
): ReconcileSnapshot => {
  const elsewhere = new Set<string>(rows.filter((row) => row.engine !== engine).map((row) => row.id))
  return {
    rows: rows.filter((row) => row.engine === engine),
    containers: containers.filter((c) => !elsewhere.has(c.labels[LABELS.sandbox] ?? ""))
  }
}

/** The snapshot with `row` as the store now has it. */
export const withRow = (snapshot: ReconcileSnapshot, row: Sandbox): ReconcileSnapshot => ({
  ...snapshot,
  rows: snapshot.rows.map((each) => (each.id === row.id ? row : each))
})

/** The snapshot after Docker confirmed `containerId` stopped (or absent). */
export const withStopped = (snapshot: ReconcileSnapshot, containerId: string): ReconcileSnapshot => ({
  ...snapshot,
  containers: snapshot.containers.map((c) => (c.containerId === containerId ? { ...c, running: false } : c))
})

/** Every container the row records or that carries its label. */
export const containersOf = (
  row: { readonly id: SandboxId; readonly containerId: string | null },
  containers: ReadonlyArray<LabelledContainer>
): ReadonlyArray<string> => [
  ...new Set([
    ...(row.containerId === null ? [] : [row.containerId]),
    ...containers.filter((c) => c.labels[LABELS.sandbox] === row.id).map((c) => c.containerId)
  ])
]
