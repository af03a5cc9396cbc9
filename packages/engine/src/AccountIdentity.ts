import type { Provider } from "@prbox/domain"
import { Context, Effect, Layer, type Option } from "effect"

export interface AccountQuery {
  readonly provider: Provider
  readonly host: string
  /** The configured profile the PR is reached through, if any. */
  readonly profile: string | undefined
}

export interface AccountIdentityShape {
  /**
   * The identity behind the profile (CodeCommit: the AWS account id;
   * GitHub/GitLab: the token's numeric user id), or none when it cannot be
   * discovered right now. Never fails: unavailable is an answer.
   */
  readonly discover: (query: AccountQuery) => Effect.Effect<Option.Option<string>>
}

export class AccountIdentity extends Context.Service<AccountIdentity, AccountIdentityShape>()(
  "prbox/engine/AccountIdentity"
) {
  /** No discovery: every sandbox is keyed by its profile name. */
  static readonly unavailable = Layer.succeed(
    AccountIdentity,
    AccountIdentity.of({ discover: () => Effect.succeedNone })
  )
}
