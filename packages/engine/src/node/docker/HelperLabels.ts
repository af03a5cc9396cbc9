import { randomBytes } from "node:crypto"
import { type HelperJudge, PROBE_LABEL } from "@prbox/domain"
import { LABELS } from "../../ContainerSpec.ts"

/**
 * This process's maker value (PROBE_LABEL's): made once per process, so no
 * helper this process made and may still use is ever another's leftover.
 */
export const HELPER_MAKER = randomBytes(8).toString("hex")

/**
 * The labels of a helper container this runtime makes: PROBE_LABEL with the
 * maker, and its owner's home and install, so a later start of that home
 * finds the ones a killed daemon left. Without an owner (a runtime built
 * alone), the maker only: nothing will remove it but its own scope.
 */
export const helperLabels = (owner: HelperJudge | undefined): Readonly<Record<string, string>> =>
  owner === undefined
    ? { [PROBE_LABEL]: HELPER_MAKER }
    : { [PROBE_LABEL]: owner.maker, [LABELS.home]: owner.home, [LABELS.install]: owner.install }
