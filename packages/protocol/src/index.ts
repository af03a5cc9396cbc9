export * from "./Api.ts"
export * as Client from "./Client.ts"
export {
  type ClientError,
  DaemonUnreachable,
  IncompatibleDaemon,
  PrboxClient,
  type PrboxClientShape,
  ProtocolError
} from "./Client.ts"
export * from "./Errors.ts"
export * as Paths from "./Paths.ts"
export * from "./Wire.ts"
