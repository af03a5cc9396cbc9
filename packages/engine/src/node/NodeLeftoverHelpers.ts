import { type ContainerStatus, Docker } from "@prbox/docker"
import { decideLeftoverHelper, type HelperState, POOL_LABEL, PROBE_LABEL } from "@prbox/domain"
import { Effect, Layer } from "effect"
import { LABELS } from "../ContainerSpec.ts"
import { DiscoveryFailed, safeReason } from "../Errors.ts"
import { HelperOwner } from "../HelperOwner.ts"
import { LeftoverHelpers, type LeftoverHelpersReport } from "../LeftoverHelpers.ts"

const helperState = (state: ContainerStatus): HelperState =>
  state === "created" || state === "exited" ? state : "other"

/**
 * LeftoverHelpers on the configured engine's Docker: this home's helpers
 * listed by label (all states), each judged by decideLeftoverHelper, the
 * leftovers removed one by one; a removal that fails is reported, the
 * others still go.
 */
export const layer = Layer.effect(
  LeftoverHelpers,
  Effect.gen(function* () {
    const docker = yield* Docker
    const owner = yield* HelperOwner
    return LeftoverHelpers.of({
      remove: Effect.gen(function* () {
        const listed = yield* docker
          .listByLabel({ [PROBE_LABEL]: undefined, [LABELS.home]: owner.home }, { all: true })
          .pipe(
            Effect.mapError((error) => new DiscoveryFailed({ operation: "helper containers", detail: error.detail }))
          )
        const leftovers = listed.filter(
          ({ labels, state }) =>
            decideLeftoverHelper(
              {
                maker: labels[PROBE_LABEL],
                home: labels[LABELS.home],
                install: labels[LABELS.install],
                sandboxLabelled: [LABELS.sandbox, LABELS.service, POOL_LABEL].some((key) => labels[key] !== undefined),
                state: helperState(state)
              },
              owner
            ) === "Remove"
        )
        const results = yield* Effect.forEach(leftovers, ({ id }) =>
          docker.remove(id, { force: false, volumes: false }).pipe(
            Effect.as({ id, failure: undefined }),
            Effect.catchTag("ContainerNotFound", () => Effect.succeed({ id, failure: undefined })),
            Effect.catch((error) => Effect.succeed({ id, failure: safeReason(error) }))
          )
        )
        return {
          removed: results.filter((r) => r.failure === undefined).map((r) => r.id),
          failures: results.flatMap((r) => (r.failure === undefined ? [] : [{ containerId: r.id, detail: r.failure }]))
        } satisfies LeftoverHelpersReport
      }).pipe(Effect.withSpan("LeftoverHelpers.remove"))
    })
  })
)
