import { setFlagsFromString } from "node:v8"
import { SERVING_TIERING_FLAGS } from "@prbox/domain"

/** Once the daemon serves: V8's own tiering thresholds (see @prbox/domain DaemonTiering.ts). */
export const restoreOptimization = (): void => {
  for (const flag of SERVING_TIERING_FLAGS) setFlagsFromString(flag)
}
