export * from "./Api.ts"
export * from "./Errors.ts"
export * from "./Wire.ts"
export * from "./Workspace.ts"
