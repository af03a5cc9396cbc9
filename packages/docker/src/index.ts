export * from "./Docker.ts"
export * from "./DockerError.ts"
export * as NodeDocker from "./NodeDocker.ts"
