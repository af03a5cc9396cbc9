import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Layer } from "effect"
import { type ClientOptions, PrboxClient } from "../PrboxClient.ts"

/** The client over `socketPath`, with its own HTTP agent (closed with the layer). */
export const layer = (options: ClientOptions): Layer.Layer<PrboxClient> =>
  PrboxClient.layer(options).pipe(
    Layer.provide(NodeHttpClient.layerNodeHttpOptions({ socketPath: options.socketPath }))
  )
