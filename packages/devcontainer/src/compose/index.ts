export * from "./CheckCompose.ts"
export * from "./ComposeSource.ts"
export * from "./ComposeTypes.ts"
export * from "./RenderedCompose.ts"
