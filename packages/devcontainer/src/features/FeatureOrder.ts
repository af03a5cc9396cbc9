// The features spec's install order, as the devcontainers CLI computes it
// (containerFeaturesOrder.ts `computeDependsOnInstallationOrder`): rounds; a
// feature joins a round once everything it `dependsOn` and every
// `installsAfter` feature that is in the set are installed; of a round's
// candidates only those of the highest `overrideFeatureInstallOrder`
// priority go; within a round, sorted by id.

/** A feature in the set, resolved (its metadata read). */
export interface FeatureNode {
  /** Its identity in the set: source, version and options. */
  readonly key: string
  /** The feature without version: what `installsAfter` and the override name. */
  readonly resource: string
  /** The same feature under its former ids (`legacyIds`), as resources. */
  readonly aliases: ReadonlyArray<string>
  /** Keys of the nodes it needs installed first. */
  readonly dependsOn: ReadonlyArray<string>
  /** Resources it installs after, when they are in the set. */
  readonly installsAfter: ReadonlyArray<string>
}

export type InstallOrder =
  | { readonly ok: true; readonly order: ReadonlyArray<string> }
  | { readonly ok: false; readonly remaining: ReadonlyArray<string> }

const matches = (node: FeatureNode, resource: string): boolean =>
  node.resource === resource || node.aliases.includes(resource)

/** `override` lists resources, first installed first; it cannot break a `dependsOn`. */
export const installOrder = (nodes: ReadonlyArray<FeatureNode>, override: ReadonlyArray<string>): InstallOrder => {
  const priority = new Map<string, number>()
  for (const node of nodes) {
    const ranks = override.flatMap((resource, index) => (matches(node, resource) ? [override.length - index] : []))
    priority.set(node.key, Math.max(0, ...ranks))
  }
  // A soft dependency on a feature outside the set does not hold anything back.
  const soft = new Map(
    nodes.map((node) => [node.key, node.installsAfter.filter((resource) => nodes.some((n) => matches(n, resource)))])
  )
  const installed: Array<FeatureNode> = []
  let worklist = [...nodes]
  while (worklist.length > 0) {
    const ready = worklist.filter(
      (node) =>
        node.dependsOn.every((key) => installed.some((done) => done.key === key)) &&
        (soft.get(node.key) ?? []).every((resource) => installed.some((done) => matches(done, resource)))
    )
    if (ready.length === 0) return { ok: false, remaining: worklist.map((node) => node.key) }
    const top = Math.max(...ready.map((node) => priority.get(node.key) ?? 0))
    const round = ready
      .filter((node) => (priority.get(node.key) ?? 0) === top)
      .sort((a, b) => a.key.localeCompare(b.key))
    installed.push(...round)
    worklist = worklist.filter((node) => !round.includes(node))
  }
  return { ok: true, order: installed.map((node) => node.key) }
}
