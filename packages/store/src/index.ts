export * as Migrations from "./Migrations.ts"
export * from "./SandboxRepo.ts"
export { DATABASE_FILE, layer, type Options } from "./SqliteSandboxRepo.ts"
