import { imageRegistry } from "@prbox/domain"
import { NodeRegistryCredentials, RegistryCredentials } from "@prbox/registry"
import { Effect, Layer } from "effect"
import { Config } from "../Config.ts"
import { isListed, type RegistryAccess, RegistryAuth } from "../RegistryAuth.ts"

/**
 * RegistryAuth from config.json (read afresh, as every open does) and the
 * user's Docker credentials (`@prbox/registry`'s RegistryCredentials:
 * DOCKER_CONFIG or ~/.docker, credential helpers), looked up only for a
 * registry config.json lists.
 */
export const make = Effect.gen(function* () {
  const config = yield* Config
  const credentials = yield* RegistryCredentials

  const forRegistry = Effect.fn("RegistryAuth.forRegistry")(function* (registry: string) {
    const listed = isListed(registry, (yield* config.load).registryCredentials)
    if (!listed) return { registry, listed, login: undefined } satisfies RegistryAccess
    const found = yield* credentials.forRegistry(registry.toLowerCase())
    return { registry, listed, login: found === undefined ? undefined : { registry, credentials: found } }
  })

  return RegistryAuth.of({
    forRegistry,
    forImage: (image) => {
      const registry = imageRegistry(image)
      return registry === undefined
        ? Effect.succeed<RegistryAccess>({ registry, listed: false, login: undefined })
        : forRegistry(registry)
    }
  })
})

/** On Node: the credentials of the daemon's user (DOCKER_CONFIG as the daemon's environment has it). */
export const layer = Layer.effect(RegistryAuth, make).pipe(Layer.provide(NodeRegistryCredentials.layer()))
