export { sshServerBundle } from "../ssh/node/SshBundle.ts"
export { dockerFor } from "./engines/EngineClient.ts"
export {
  type EngineLocation,
  type EngineReport,
  inspectEngine,
  probeLocation
} from "./engines/EngineProbe.ts"
export { engineOfHome, readEngineSources, resolveEngine } from "./engines/EngineSelection.ts"
export * as NodeAccountIdentity from "./NodeAccountIdentity.ts"
export * as NodeCodeServerHealth from "./NodeCodeServerHealth.ts"
export * as NodeConfig from "./NodeConfig.ts"
export * as NodeContainerRuntime from "./NodeContainerRuntime.ts"
export * as NodeEngine from "./NodeEngine.ts"
export * as NodeHooks from "./NodeHooks.ts"
export * as NodePlatform from "./NodePlatform.ts"
export * as NodeRegistryAuth from "./NodeRegistryAuth.ts"
export * as NodeSandboxTools from "./NodeSandboxTools.ts"
export * as CodeServerDistribution from "./tools/CodeServerDistribution.ts"
export * as DefaultImage from "./tools/DefaultImage.ts"
