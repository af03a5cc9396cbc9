export * as Backoff from "./Backoff.ts"
export * as Cleanup from "./Cleanup.ts"
export * as Client from "./Client.ts"
export {
  type ClientError,
  DaemonUnreachable,
  IncompatibleDaemon,
  PrboxClient,
  type PrboxClientShape,
  ProtocolError
} from "./Client.ts"
export * from "./DaemonProcess.ts"
export * from "./Follow.ts"
export * from "./Format.ts"
export * from "./Home.ts"
export type { DaemonLauncher } from "./Launch.ts"
export * as Launch from "./Launch.ts"
export * from "./OpenInput.ts"
