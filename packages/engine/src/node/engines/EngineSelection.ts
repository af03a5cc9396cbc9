import { createHash } from "node:crypto"
import { homedir } from "node:os"
import { join } from "node:path"
import { type ChosenEngine, type ConfiguredEngine, chooseEngine, type EngineSources, statePaths } from "@prbox/domain"
import { Effect, FileSystem, Result } from "effect"
import type { ConfigShape } from "../../Config.ts"
import { InvalidConfig } from "../../Errors.ts"

/** Docker's own config folder: `DOCKER_CONFIG`, else `~/.docker`. */
const dockerConfigDir = (env: NodeJS.ProcessEnv) => env.DOCKER_CONFIG ?? join(homedir(), ".docker")

const readJson = (fs: FileSystem.FileSystem, path: string) =>
  fs.readFileString(path).pipe(
    Effect.flatMap((text) => Effect.try({ try: () => JSON.parse(text) as unknown, catch: () => undefined })),
    Effect.orElseSucceed(() => undefined)
  )

const field = (value: unknown, ...path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>(
    (at, key) =>
      typeof at === "object" && at !== null && key in at ? (at as Record<string, unknown>)[key] : undefined,
    value
  )

const stringField = (value: unknown, ...path: ReadonlyArray<string>): string | undefined => {
  const found = field(value, ...path)
  return typeof found === "string" ? found : undefined
}

/**
 * What names the engine besides config.json: the environment, Docker's
 * config.json `currentContext`, and the contexts Docker keeps (each in
 * `contexts/meta/<sha256 of its name>/meta.json`, its engine at
 * `Endpoints.docker.Host`). A file that cannot be read names nothing.
 */
export const readEngineSources = (configured: ConfiguredEngine | undefined, env: NodeJS.ProcessEnv = process.env) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const dir = dockerConfigDir(env)
    const currentContext = stringField(yield* readJson(fs, join(dir, "config.json")), "currentContext")
    const metaDir = join(dir, "contexts", "meta")
    const entries = yield* fs.readDirectory(metaDir).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))
    const contexts = new Map<string, string>()
    for (const entry of entries) {
      const meta = yield* readJson(fs, join(metaDir, entry, "meta.json"))
      const name = stringField(meta, "Name")
      const host = stringField(meta, "Endpoints", "docker", "Host")
      // Docker files a context under the sha256 of its name: anything else is not one.
      if (name !== undefined && host !== undefined && entry === createHash("sha256").update(name).digest("hex")) {
        contexts.set(name, host)
      }
    }
    return {
      configured,
      dockerHost: env.DOCKER_HOST,
      dockerContext: env.DOCKER_CONTEXT,
      currentContext,
      contexts
    } satisfies EngineSources
  })

/** The engine `chooseEngine` picks; a named context that does not exist (or a bad address) is InvalidConfig. */
export const resolveEngine = (
  home: string,
  configured: ConfiguredEngine | undefined,
  env: NodeJS.ProcessEnv = process.env
) =>
  Effect.flatMap(readEngineSources(configured, env), (sources) => {
    const chosen = chooseEngine(sources)
    if (Result.isSuccess(chosen)) return Effect.succeed<ChosenEngine>(chosen.success)
    const path = configured === undefined ? join(dockerConfigDir(env), "config.json") : statePaths(home).config
    return Effect.fail(new InvalidConfig({ path, detail: chosen.failure }))
  })

/**
 * The engine a daemon of this home uses, chosen once at its start. A
 * config.json that cannot be read does not stop the daemon (every open
 * reports it): the engine then comes from DOCKER_HOST or the Docker context,
 * as before config.json could name one, and `configProblem` says why.
 */
export const engineOfHome = (config: ConfigShape, env: NodeJS.ProcessEnv = process.env) =>
  Effect.gen(function* () {
    const loaded = yield* Effect.result(config.load)
    const configured = loaded._tag === "Success" ? loaded.success.runtime?.docker : undefined
    const chosen = yield* resolveEngine(config.home, configured, env)
    return { chosen, configProblem: loaded._tag === "Failure" ? loaded.failure.message : undefined }
  })
