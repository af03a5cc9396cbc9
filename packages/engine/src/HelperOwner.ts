import type { HelperJudge } from "@prbox/domain"
import { Context } from "effect"

/**
 * Whose the engine's helper containers are (domain HelperContainer.ts): this
 * home and install, and the maker value of this process. The runtime labels
 * each helper with them; LeftoverHelpers removes those another process left.
 */
export class HelperOwner extends Context.Service<HelperOwner, HelperJudge>()("prbox/engine/HelperOwner") {}
