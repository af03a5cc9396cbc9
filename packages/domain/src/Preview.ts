import { Schema } from "effect"

/** Where a port of a sandbox's preview list comes from. */
export const PortSource = Schema.Literals(["devcontainer", "config", "discovered"])
export type PortSource = typeof PortSource.Type

/**
 * One port of a sandbox, as `prbox ports` and the extension show it: declared
 * (devcontainer.json `forwardPorts`, config.json `ports`) or discovered
 * listening inside the container, and whether it is open without auth.
 */
export const PreviewPort = Schema.Struct({
  port: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 65535 })),
  label: Schema.NullOr(Schema.String),
  source: PortSource,
  /** devcontainer.json's `portsAttributes[port].onAutoForward` (`openBrowser`, `notify`, ...), or config.json's. */
  onAutoForward: Schema.NullOr(Schema.String),
  /** Something listens on it inside the container now. */
  listening: Schema.Boolean,
  /** Opened without auth (`prbox ports --public`) until the sandbox stops. */
  public: Schema.Boolean
})
export type PreviewPort = typeof PreviewPort.Type

export const previewUrl = (id: string, port: number, previewPort: number): string =>
  `http://${port}.${id}.localhost:${previewPort}/`
export const previewPathUrl = (id: string, port: number, previewPort: number): string =>
  `http://localhost:${previewPort}/s/${id}/${port}/`
