import { Schema } from "effect"
import { RawLifecycleCommand } from "./Commands.ts"

// Every property of the devcontainer.json reference (image, Dockerfile and
// Docker Compose forms). Decoding with excess properties as errors finds an
// unknown property by name (Parse.ts makes it a warning, as VS Code ignores
// it); what prbox does with each known one is decided by Policy.ts and
// Resolve.ts, not here.

const strings = Schema.Array(Schema.String)
const env = Schema.Record(Schema.String, Schema.String)
const size = Schema.String.check(Schema.isPattern(/^\d+([tgmk]b)?$/i, { expected: 'a size such as "4gb" or "512mb"' }))
const port = Schema.Union([Schema.Int, Schema.String]).annotate({ expected: 'a port number or "host:port"' })

/** A mount in string (`source=…,target=…,type=bind`) or object form. */
export const RawMount = Schema.Union([
  Schema.String,
  Schema.Struct({
    type: Schema.Literals(["bind", "volume"]),
    source: Schema.optionalKey(Schema.String),
    target: Schema.String
  })
]).annotate({ expected: "a mount string or a {type, source, target} object" })
export type RawMount = typeof RawMount.Type

const Build = Schema.Struct({
  dockerfile: Schema.optionalKey(Schema.String),
  context: Schema.optionalKey(Schema.String),
  args: Schema.optionalKey(env),
  target: Schema.optionalKey(Schema.String),
  cacheFrom: Schema.optionalKey(Schema.Union([Schema.String, strings])),
  options: Schema.optionalKey(strings)
})

const HostRequirements = Schema.Struct({
  cpus: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
  memory: Schema.optionalKey(size),
  storage: Schema.optionalKey(size),
  gpu: Schema.optionalKey(
    Schema.Union([
      Schema.Boolean,
      Schema.Literal("optional"),
      Schema.Struct({ cores: Schema.optionalKey(Schema.Int), memory: Schema.optionalKey(size) })
    ])
  )
})

// Tools keep their own settings under customizations; only VS Code's extension list matters here.
const VsCode = Schema.StructWithRest(Schema.Struct({ extensions: Schema.optionalKey(strings) }), [
  Schema.Record(Schema.String, Schema.Unknown)
])
const Customizations = Schema.StructWithRest(Schema.Struct({ vscode: Schema.optionalKey(VsCode) }), [
  Schema.Record(Schema.String, Schema.Unknown)
])

const lifecycle = Schema.optionalKey(RawLifecycleCommand)

/** devcontainer.json as decoded (and, with excess properties ignored, an image metadata label entry). */
export const DevcontainerConfig = Schema.Struct({
  $schema: Schema.optionalKey(Schema.String),
  name: Schema.optionalKey(Schema.String),
  // image / Dockerfile
  image: Schema.optionalKey(Schema.String),
  build: Schema.optionalKey(Build),
  dockerFile: Schema.optionalKey(Schema.String),
  context: Schema.optionalKey(Schema.String),
  // Docker Compose
  dockerComposeFile: Schema.optionalKey(Schema.Union([Schema.String, strings])),
  service: Schema.optionalKey(Schema.String),
  runServices: Schema.optionalKey(strings),
  // ports
  appPort: Schema.optionalKey(Schema.Union([port, Schema.Array(port)])),
  forwardPorts: Schema.optionalKey(Schema.Array(port)),
  portsAttributes: Schema.optionalKey(Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown))),
  otherPortsAttributes: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  // environment and users; a remoteEnv value of null unsets the variable
  containerEnv: Schema.optionalKey(env),
  remoteEnv: Schema.optionalKey(Schema.Record(Schema.String, Schema.NullOr(Schema.String))),
  containerUser: Schema.optionalKey(Schema.String),
  remoteUser: Schema.optionalKey(Schema.String),
  updateRemoteUserUID: Schema.optionalKey(Schema.Boolean),
  userEnvProbe: Schema.optionalKey(
    Schema.Literals(["none", "loginShell", "loginInteractiveShell", "interactiveShell"])
  ),
  // the container
  overrideCommand: Schema.optionalKey(Schema.Boolean),
  shutdownAction: Schema.optionalKey(Schema.Literals(["none", "stopContainer", "stopCompose"])),
  init: Schema.optionalKey(Schema.Boolean),
  privileged: Schema.optionalKey(Schema.Boolean),
  capAdd: Schema.optionalKey(strings),
  securityOpt: Schema.optionalKey(strings),
  mounts: Schema.optionalKey(Schema.Array(RawMount)),
  workspaceMount: Schema.optionalKey(Schema.String),
  workspaceFolder: Schema.optionalKey(Schema.String),
  runArgs: Schema.optionalKey(strings),
  features: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  overrideFeatureInstallOrder: Schema.optionalKey(strings),
  customizations: Schema.optionalKey(Customizations),
  hostRequirements: Schema.optionalKey(HostRequirements),
  secrets: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  // lifecycle
  waitFor: Schema.optionalKey(
    Schema.Literals([
      "initializeCommand",
      "onCreateCommand",
      "updateContentCommand",
      "postCreateCommand",
      "postStartCommand"
    ])
  ),
  initializeCommand: lifecycle,
  onCreateCommand: lifecycle,
  updateContentCommand: lifecycle,
  postCreateCommand: lifecycle,
  postStartCommand: lifecycle,
  postAttachCommand: lifecycle,
  // legacy top-level VS Code properties, since moved under customizations.vscode
  extensions: Schema.optionalKey(strings),
  settings: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  devPort: Schema.optionalKey(Schema.Int)
})
export type DevcontainerConfig = typeof DevcontainerConfig.Type
