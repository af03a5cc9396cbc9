import { randomBytes } from "node:crypto"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Docker } from "@prbox/docker"
import { PROBE_LABEL } from "@prbox/domain"
import { Effect, FileSystem, Option } from "effect"
import { Config } from "../../Config.ts"
import * as NodeConfig from "../NodeConfig.ts"
import * as NodePlatform from "../NodePlatform.ts"
import { DEFAULT_IMAGE } from "../tools/DefaultImage.ts"
import { dockerFor } from "./EngineClient.ts"
import { engineOfHome } from "./EngineSelection.ts"

/** Local: the engine sees this machine's files (bind mounts work); remote: it does not. */
export type EngineLocation = "local" | "remote" | "unknown"

/** What `prbox doctor` says of the engine (`doctor --json`'s `engine`). */
export interface EngineReport {
  readonly address: string
  /** Where the address came from: `config`, `DOCKER_HOST`, `context <name>` or `default`. */
  readonly source: string
  /** Null when the engine cannot be reached (or the address cannot be chosen). */
  readonly version: string | null
  readonly apiVersion: string | null
  readonly location: EngineLocation
  readonly detail: string
}

const PROBE_MOUNT = "/prbox-probe"
const REQUEST_TIMEOUT_MS = 5000

/**
 * Whether the engine sees this machine's files, by trying: a fresh folder
 * holding a file with a random name is bind-mounted into a container that
 * is created, never started, and asked (Docker's archive API) for that file.
 * Seen: local. A missing mount source or an empty folder: remote. The
 * container is removed and the folder deleted whatever happens.
 */
export const probeLocation = (options: {
  readonly home: string
  /** Tried in order; the first one the engine has is used (nothing is pulled). */
  readonly images: ReadonlyArray<string>
  /** A daemon's helper labels (HelperLabels.ts) give PROBE_LABEL its maker; without them it is 1. */
  readonly labels: Readonly<Record<string, string>>
}) =>
  Effect.gen(function* () {
    const docker = yield* Docker
    const fs = yield* FileSystem.FileSystem
    const image = yield* Effect.findFirst(options.images, (candidate) =>
      docker.imageExists(candidate).pipe(Effect.orElseSucceed(() => false))
    )
    if (Option.isNone(image)) {
      return {
        location: "unknown" as const,
        detail: `no image to probe with: none of ${options.images.join(", ")} is on the engine`
      }
    }
    const parent = (yield* fs.exists(options.home).pipe(Effect.orElseSucceed(() => false))) ? options.home : tmpdir()
    const folder = yield* fs.makeTempDirectoryScoped({ directory: parent, prefix: "engine-probe-" })
    const token = randomBytes(16).toString("hex")
    yield* fs.writeFileString(join(folder, token), token)
    const created = yield* Effect.result(
      docker.createContainer({
        name: `prbox-probe-${token.slice(0, 12)}`,
        image: image.value,
        cmd: ["true"],
        env: {},
        labels: { [PROBE_LABEL]: "1", ...options.labels },
        binds: [{ hostPath: folder, containerPath: PROBE_MOUNT, readOnly: true }],
        exposedPort: 9
      })
    )
    if (created._tag === "Failure") {
      return created.failure._tag === "BindSourceMissing"
        ? { location: "remote" as const, detail: `${folder} of this machine does not exist where the engine runs` }
        : { location: "unknown" as const, detail: `the probe container could not be made: ${created.failure.message}` }
    }
    const seen = yield* docker
      .hasPath(created.success.id, `${PROBE_MOUNT}/${token}`)
      .pipe(Effect.ensuring(Effect.ignore(docker.remove(created.success.id, { force: true, volumes: true }))))
    return seen
      ? { location: "local" as const, detail: `a file this machine wrote under ${parent} is visible to its containers` }
      : {
          location: "remote" as const,
          detail: `a folder of this machine, bind-mounted, is empty in its containers: it runs elsewhere`
        }
  }).pipe(
    Effect.scoped,
    Effect.catch((error) =>
      Effect.succeed({ location: "unknown" as const, detail: `the probe failed: ${error.message}` })
    )
  )

/**
 * The engine a daemon of `home` uses (engineOfHome), its version, and where
 * it runs (probeLocation, with config.json's image or the default image).
 * Never fails: what could not be found out is said in `detail`.
 */
export const inspectEngine = (options: { readonly home: string; readonly env?: NodeJS.ProcessEnv }) =>
  Effect.gen(function* () {
    const config = yield* Config
    const chosen = yield* Effect.result(engineOfHome(config, options.env))
    if (chosen._tag === "Failure") {
      return {
        address: "",
        source: "",
        version: null,
        apiVersion: null,
        location: "unknown",
        detail: chosen.failure.message
      } satisfies EngineReport
    }
    const { address, source } = chosen.success.chosen
    const loaded = Option.getOrUndefined(yield* Effect.option(config.load))
    return yield* Effect.gen(function* () {
      const docker = yield* Docker
      const version = yield* docker.version()
      const where = yield* probeLocation({
        home: options.home,
        images: [...new Set([loaded?.image ?? DEFAULT_IMAGE, DEFAULT_IMAGE])],
        labels: loaded?.labels ?? {}
      })
      return {
        address,
        source,
        version: version.version,
        apiVersion: version.apiVersion,
        ...where
      } satisfies EngineReport
    }).pipe(
      Effect.provide(dockerFor(address, { requestTimeoutMs: REQUEST_TIMEOUT_MS })),
      Effect.catch((error) =>
        Effect.succeed<EngineReport>({
          address,
          source,
          version: null,
          apiVersion: null,
          location: "unknown",
          detail: `cannot be reached: ${error.message}`
        })
      )
    )
  }).pipe(Effect.provide(NodeConfig.layer({ home: options.home })), Effect.provide(NodePlatform.layer))
