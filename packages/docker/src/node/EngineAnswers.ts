import type { ImageInfo } from "@prbox/domain"
import { Schema } from "effect"
import type { ContainerInfo, ContainerSummary } from "../DockerTypes.ts"

/* The parts of the engine's answers we use, and how they become our types. */

const Status = Schema.Literals(["created", "running", "paused", "restarting", "removing", "exited", "dead"])
const Labels = Schema.NullOr(Schema.Record(Schema.String, Schema.String))
const PortMap = Schema.NullOr(
  Schema.Record(
    Schema.String,
    Schema.NullOr(Schema.Array(Schema.Struct({ HostIp: Schema.String, HostPort: Schema.String })))
  )
)

export const VersionAnswer = Schema.Struct({ Version: Schema.String, ApiVersion: Schema.String })

export const InspectAnswer = Schema.Struct({
  Id: Schema.String,
  Name: Schema.String,
  Config: Schema.Struct({ Image: Schema.String, User: Schema.String, Labels }),
  State: Schema.Struct({
    Status,
    Running: Schema.Boolean,
    ExitCode: Schema.Number,
    StartedAt: Schema.String,
    FinishedAt: Schema.String
  }),
  HostConfig: Schema.Struct({ PortBindings: PortMap }),
  NetworkSettings: Schema.Struct({ Ports: PortMap })
})

export const ListAnswer = Schema.Array(
  Schema.Struct({ Id: Schema.String, Names: Schema.Array(Schema.String), State: Status, Labels, Image: Schema.String })
)

export const ExecAnswer = Schema.Struct({ Running: Schema.Boolean, ExitCode: Schema.NullOr(Schema.Number) })

// Docker reports "0001-01-01T00:00:00Z" for a time that has not happened.
const engineDate = (text: string): Date | undefined => {
  const date = new Date(text)
  return Number.isNaN(date.getTime()) || date.getTime() <= 0 ? undefined : date
}

// Docker names carry a leading "/".
const containerName = (name: string): string => name.replace(/^\//, "")

/**
 * Names the container port `hostPort` reports, on a container that publishes
 * more than one (Docker keeps its port maps unordered).
 */
export const EXPOSED_PORT_LABEL = "dev.prbox.docker.exposed-port"

// Only the 127.0.0.1 bindings count: those are the ones we ask for.
const loopbackBindings = (ports: typeof InspectAnswer.Type.NetworkSettings.Ports): Record<number, number> =>
  Object.fromEntries(
    Object.entries(ports ?? {}).flatMap(([key, bindings]) => {
      const binding = bindings?.find((candidate) => candidate.HostIp === "127.0.0.1")
      return binding === undefined ? [] : [[Number.parseInt(key, 10), Number(binding.HostPort)]]
    })
  )

export const toInfo = (answer: typeof InspectAnswer.Type): ContainerInfo => {
  const publishedPorts = loopbackBindings(answer.NetworkSettings.Ports)
  // Containers made before the label publish exactly one port.
  const exposed =
    answer.Config.Labels?.[EXPOSED_PORT_LABEL] ?? Object.keys(answer.HostConfig.PortBindings ?? {})[0] ?? ""
  return {
    id: answer.Id,
    name: containerName(answer.Name),
    image: answer.Config.Image,
    state: {
      status: answer.State.Status,
      running: answer.State.Running,
      exitCode: answer.State.ExitCode,
      startedAt: engineDate(answer.State.StartedAt),
      finishedAt: engineDate(answer.State.FinishedAt)
    },
    labels: answer.Config.Labels ?? {},
    hostPort: publishedPorts[Number.parseInt(exposed, 10)],
    publishedPorts,
    user: answer.Config.User
  }
}

export const toSummary = (container: (typeof ListAnswer.Type)[number]): ContainerSummary => ({
  id: container.Id,
  name: containerName(container.Names[0] ?? ""),
  state: container.State,
  labels: container.Labels ?? {},
  image: container.Image
})

export const ImageAnswer = Schema.Struct({
  Id: Schema.String,
  RepoDigests: Schema.NullOr(Schema.Array(Schema.String)),
  // An image imported without changes has no config at all.
  Config: Schema.NullOr(
    Schema.Struct({
      User: Schema.String,
      Env: Schema.NullOr(Schema.Array(Schema.String)),
      Labels,
      Entrypoint: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
      Cmd: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String)))
    })
  ),
  Os: Schema.String,
  Architecture: Schema.String,
  Size: Schema.Number
})

export const toImageInfo = (answer: typeof ImageAnswer.Type): ImageInfo => ({
  id: answer.Id,
  digest: answer.RepoDigests?.[0] ?? null,
  labels: answer.Config?.Labels ?? {},
  user: answer.Config?.User ?? "",
  env: Object.fromEntries(
    (answer.Config?.Env ?? []).map((entry) => {
      const at = entry.indexOf("=")
      return at < 0 ? [entry, ""] : [entry.slice(0, at), entry.slice(at + 1)]
    })
  ),
  entrypoint: answer.Config?.Entrypoint ?? [],
  cmd: answer.Config?.Cmd ?? [],
  os: answer.Os,
  architecture: answer.Architecture,
  size: answer.Size
})

// The engine answers `null` rather than `[]` when it has no volume.
export const NetworkListAnswer = Schema.Array(Schema.Struct({ Name: Schema.String, Labels }))

export const VolumeListAnswer = Schema.Struct({
  Volumes: Schema.NullOr(Schema.Array(Schema.Struct({ Name: Schema.String, Labels })))
})
