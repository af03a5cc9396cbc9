import { Docker, EngineUnavailable, NodeDocker } from "@prbox/docker"
import { LOCAL_ENGINE } from "@prbox/domain"
import { Effect, Layer } from "effect"
import { ImageSource } from "../docker/ImageTransfer.ts"

const unusable = (address: string, detail: string): Layer.Layer<Docker, EngineUnavailable> =>
  Layer.effect(
    Docker,
    Effect.fail(new EngineUnavailable({ operation: "engine.connect", detail: `${address}: ${detail}` }))
  )

/**
 * The Docker client of an engine address: the one place an address becomes
 * a connection. unix:// is a socket; tcp:// from DOCKER_HOST is left to
 * dockerode (which reads DOCKER_TLS_VERIFY and DOCKER_CERT_PATH with it),
 * from elsewhere it is plain HTTP; ssh:// is the SSH transport's.
 */
export const dockerFor = (address: string, options: { readonly requestTimeoutMs?: number } = {}) => {
  const url = URL.canParse(address) ? new URL(address) : undefined
  const timeout = options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }
  // dockerode's own default also finds Docker Desktop's socket (~/.docker/run/docker.sock).
  if (address === LOCAL_ENGINE && process.env.DOCKER_HOST === undefined) return NodeDocker.layer(timeout)
  switch (url?.protocol) {
    case "unix:":
      return NodeDocker.layer({ socketPath: decodeURIComponent(url.pathname), ...timeout })
    case "tcp:": {
      if (address === process.env.DOCKER_HOST) return NodeDocker.layer(timeout)
      const port = Number(url.port === "" ? 2375 : url.port)
      return NodeDocker.layer({ tcp: { host: url.hostname, port }, ...timeout })
    }
    case "ssh:":
      // One reused SSH connection, host keys checked against ~/.ssh/known_hosts (SshTransport.ts).
      return NodeDocker.layer({ address, ...timeout })
    default:
      return unusable(address, "not a Docker engine address (unix://, tcp:// or ssh://)")
  }
}

/**
 * Where the runtime of the engine at `address` copies images from: this
 * machine's engine (the local socket), unless `address` is that engine.
 */
export const imageSourceFor = (address: string): Layer.Layer<never, EngineUnavailable> =>
  address === LOCAL_ENGINE
    ? Layer.empty
    : Layer.effect(ImageSource, NodeDocker.make({ socketPath: new URL(LOCAL_ENGINE).pathname }))
