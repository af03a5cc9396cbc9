export * as Migrations from "./Migrations.ts"
export * from "./SandboxRepo.ts"
export * from "./Settings.ts"
export { layer, type Options } from "./SqliteSandboxRepo.ts"
