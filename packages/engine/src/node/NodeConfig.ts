import { homedir } from "node:os"
import { statePaths } from "@prbox/domain"
import { Effect, FileSystem, Layer, Schema, SchemaIssue } from "effect"
import { Config, checkMounts, PrboxConfig } from "../Config.ts"
import { InvalidConfig } from "../Errors.ts"

/** Reads `<home>/config.json`; a missing file means all defaults. */
export const layer = (options: { readonly home: string; readonly userHome?: string }) =>
  Layer.effect(
    Config,
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const path = statePaths(options.home).config
      const userHome = options.userHome ?? homedir()
      return Config.of({
        home: options.home,
        userHome,
        load: Effect.gen(function* () {
          const text = yield* fs
            .readFileString(path)
            .pipe(
              Effect.catch((error) =>
                error.reason._tag === "NotFound"
                  ? Effect.succeed("{}")
                  : Effect.fail(new InvalidConfig({ path, detail: "cannot be read" }))
              )
            )
          const json = yield* Effect.try({
            try: () => JSON.parse(text) as unknown,
            catch: () => new InvalidConfig({ path, detail: "is not valid JSON" })
          })
          const config = yield* Schema.decodeUnknownEffect(PrboxConfig)(json).pipe(
            Effect.mapError(
              (error) => new InvalidConfig({ path, detail: SchemaIssue.makeFormatterDefault()(error.issue) })
            )
          )
          const mounts = yield* checkMounts(fs, path, userHome, config.mounts)
          return { ...config, mounts }
        })
      })
    })
  )
