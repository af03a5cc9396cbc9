import { accountKind, isSupersededBy, type Sandbox } from "@prbox/domain"
import { Effect, Option } from "effect"
import { retire } from "./LegacyPass.ts"
import { collect, perRow, type ReconcilePass } from "./ReconcilePass.ts"

/**
 * Pass 3: once an account is discovered, rows of the same PR keyed by the
 * profile name (or by an empty account) are retired, as legacy rows are; the
 * PR's sandbox lives on under the discovered identity.
 */
export const accountPass =
  (profile: string | undefined): ReconcilePass =>
  (ctx, { rows, containers }) =>
    Effect.gen(function* () {
      const fallbacks = rows.filter(
        (row) =>
          row.host !== null && row.legacyRetiredAt === null && accountKind(row.provider, row.account) !== "discovered"
      )
      const step = (row: Sandbox & { readonly host: string }) =>
        Effect.gen(function* () {
          if (yield* ctx.state.hasWorker(row.id)) return []
          const rowProfile = row.account === "" ? profile : row.account
          const discovered = yield* ctx.identity.discover({
            provider: row.provider,
            host: row.host,
            profile: rowProfile
          })
          if (Option.isNone(discovered) || !isSupersededBy(row.account, discovered.value, rowProfile ?? "")) return []
          yield* retire(ctx, row, containers)
          return [
            {
              sandboxId: row.id,
              containerId: row.containerId,
              action: `retired: keyed by ${row.account === "" ? "an empty account" : "its profile"}, now account ${discovered.value}`
            }
          ]
        })
      return collect(
        "account",
        yield* Effect.forEach(fallbacks, (row) => perRow(row.id, step(row as Sandbox & { readonly host: string })))
      )
    })
