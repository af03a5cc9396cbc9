export * from "./SandboxRepo.ts"
export { DATABASE_FILE, layer, type Options } from "./SqliteSandboxRepo.ts"
export * as Migrations from "./Migrations.ts"
