import * as NodeChildProcessSpawner from "@effect/platform-node/NodeChildProcessSpawner"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Layer } from "effect"
import { FetchHttpClient } from "effect/http"

/** The host services the engine's Node implementations run on: files, processes, HTTP. */
export const layer = Layer.mergeAll(
  NodeChildProcessSpawner.layer.pipe(Layer.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer))),
  NodeFileSystem.layer,
  FetchHttpClient.layer
)
