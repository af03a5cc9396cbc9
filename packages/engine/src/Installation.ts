import { Context } from "effect"
import { LABELS } from "./ContainerSpec.ts"

export interface InstallationShape {
  /** A random id made once per `$PRBOX_HOME` and kept in its database: the `dev.prbox.install` label. */
  readonly id: string
}

/**
 * This `$PRBOX_HOME`'s install id. `dev.prbox.home` is a path, and two
 * machines can share one (`/root/.prbox` on a shared build box using one
 * engine): the id tells their containers apart.
 */
export class Installation extends Context.Service<Installation, InstallationShape>()("prbox/engine/Installation") {}

/**
 * Whether a container listed by this home's label is this install's: its
 * install label is ours, or it has none (made before install ids, by this
 * home: adopted as before). Another install's is never touched.
 */
export const ownInstall = (labels: Readonly<Record<string, string>>, installId: string): boolean => {
  const install = labels[LABELS.install]
  return install === undefined || install === installId
}
