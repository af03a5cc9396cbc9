import { tmpdir } from "node:os"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Docker, type DockerShape } from "@prbox/docker"
import { type FilesAt, filesAtOf, PROBE_LABEL } from "@prbox/domain"
import { Effect, Semaphore } from "effect"
import { LABELS } from "../../ContainerSpec.ts"
import { RuntimeError } from "../../Errors.ts"
import { probeLocation } from "../engines/EngineProbe.ts"
import { DEFAULT_IMAGE } from "../tools/DefaultImage.ts"

/** Labels of a sandbox's own: a probe container must never pass for a sandbox's. */
const SANDBOX_ONLY: ReadonlyArray<string> = [LABELS.sandbox, LABELS.pr, LABELS.repo]

/**
 * Where one engine sees this machine's files, found once by the bind-mount
 * probe (EngineProbe.ts) under `home` and kept for the runtime's life. An
 * engine that cannot be asked is asked again next time; a probe that cannot
 * tell is an error, never a guess.
 */
export const filesModeFor = (docker: DockerShape, home: string | undefined, helper: Readonly<Record<string, string>>) =>
  Effect.gen(function* () {
    const lock = yield* Semaphore.make(1)
    let decided: FilesAt | undefined
    /** Images this runtime was asked to make present: the engine has them to probe with. */
    const seen = new Set<string>()

    /**
     * The images to probe with, the given one first; then the default image,
     * then any a prbox container runs (a helper's, of the empty image, is none).
     */
    const candidates = (image: string | undefined) =>
      docker.listByLabel({ [LABELS.home]: undefined }, { all: true }).pipe(
        Effect.map((containers) =>
          containers
            .filter((container) => container.labels[PROBE_LABEL] === undefined)
            .map((container) => container.image)
        ),
        Effect.orElseSucceed((): ReadonlyArray<string> => []),
        Effect.map((running) => [
          ...new Set([...(image === undefined ? [] : [image]), ...seen, DEFAULT_IMAGE, ...running])
        ])
      )

    const decide = (image: string | undefined, labels: Readonly<Record<string, string>>) =>
      lock.withPermit(
        Effect.gen(function* () {
          if (decided !== undefined) return decided
          const found = yield* probeLocation({
            home: home ?? tmpdir(),
            images: yield* candidates(image),
            labels: {
              ...Object.fromEntries(Object.entries(labels).filter(([key]) => !SANDBOX_ONLY.includes(key))),
              ...helper
            }
          }).pipe(Effect.provideService(Docker, docker), Effect.provide(NodeFileSystem.layer))
          const answer = filesAtOf(found.location, found.detail)
          if (answer._tag === "Unknown") {
            return yield* new RuntimeError({ operation: "engine.files", detail: answer.reason })
          }
          decided = answer.at
          return answer.at
        })
      )

    return {
      /** Remembers an image the engine has (made present for a sandbox) to probe with later. */
      remember: (image: string) =>
        Effect.sync(() => {
          seen.add(image)
        }),
      filesAt: decide(undefined, {}),
      /** Decides with `image` (which the engine has) and the spec's labels on the probe container. */
      forSpec: (image: string, labels: Readonly<Record<string, string>>) => decide(image, labels)
    }
  })
