import type Dockerode from "dockerode"
import type { ContainerSpec } from "../DockerTypes.ts"
import { EXPOSED_PORT_LABEL } from "./EngineAnswers.ts"

// The typings ask for every volume option; the engine takes any of them alone.
const NO_COPY = { NoCopy: true } as Dockerode.MountSettings["VolumeOptions"]

/** The engine's create request for `spec`, its environment already checked into `env` (KEY=value). */
export const containerCreateOptions = (spec: ContainerSpec, env: Array<string>): Dockerode.ContainerCreateOptions => {
  const port = `${spec.exposedPort}/tcp`
  // Docker picks the host port of each extra port at every start.
  const extra = (spec.extraPorts ?? []).map((extraPort) => `${extraPort}/tcp`)
  return {
    name: spec.name,
    Image: spec.image,
    Entrypoint: spec.entrypoint === undefined ? undefined : [...spec.entrypoint],
    Cmd: spec.cmd === undefined ? undefined : [...spec.cmd],
    Env: env,
    Labels: { ...spec.labels, [EXPOSED_PORT_LABEL]: String(spec.exposedPort) },
    User: spec.user,
    WorkingDir: spec.workingDir,
    Hostname: spec.hostname,
    ...(spec.network === "none" ? {} : { ExposedPorts: Object.fromEntries([port, ...extra].map((key) => [key, {}])) }),
    HostConfig: {
      ...(spec.network === "none"
        ? { NetworkMode: "none" }
        : {
            // Never on all interfaces: the ports serve this machine only.
            PortBindings: {
              ...Object.fromEntries(extra.map((key) => [key, [{ HostIp: "127.0.0.1", HostPort: "" }]])),
              [port]: [{ HostIp: "127.0.0.1", HostPort: spec.hostPort === undefined ? "" : String(spec.hostPort) }]
            }
          }),
      // Mounts rather than Binds: a missing host path fails instead of being created as root.
      Mounts: [
        ...spec.binds.map((bind) => ({
          Type: "bind" as const,
          Source: bind.hostPath,
          Target: bind.containerPath,
          ReadOnly: bind.readOnly
        })),
        // Unless it says so, never seeded from the image: what a volume holds is what prbox put
        // there (an image could ship the fill marker, or its own "code-server" for every later sandbox).
        ...(spec.volumes ?? []).map((mount) => ({
          Type: "volume" as const,
          Source: mount.volume,
          Target: mount.containerPath,
          ReadOnly: mount.readOnly,
          ...(mount.seed === true ? {} : { VolumeOptions: NO_COPY })
        }))
      ],
      NanoCpus: spec.cpus === undefined ? undefined : Math.round(spec.cpus * 1e9),
      Memory: spec.memoryBytes,
      CpuShares: spec.cpuShares,
      PidsLimit: spec.pidsLimit,
      Privileged: spec.privileged,
      CapAdd: spec.capAdd === undefined ? undefined : [...spec.capAdd],
      SecurityOpt: spec.securityOpt === undefined ? undefined : [...spec.securityOpt],
      CapDrop: spec.capDrop === undefined ? undefined : [...spec.capDrop],
      Init: spec.init,
      ExtraHosts: spec.extraHosts === undefined ? undefined : [...spec.extraHosts],
      ShmSize: spec.shmSizeBytes
    }
  }
}
