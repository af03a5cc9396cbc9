import { assert, describe, it } from "@effect/vitest"
import type { Prebuild } from "@prbox/domain"
import { Schema } from "effect"
import { PrboxConfig } from "../src/Config.ts"
import { poolKeyFor } from "../src/create/WarmPool.ts"
import type { EnvironmentChoice } from "../src/environment/ChooseEnvironment.ts"
import { worthPrebuilding } from "../src/prebuild/FindPrebuild.ts"
import type { OpenPath } from "../src/prebuild/PrebuildDecision.ts"

const configOf = (size: number) => Schema.decodeUnknownSync(PrboxConfig)({ warmPool: { size } })

const prebuild = (volume: string | null) => ({ id: "pb1", key: "k1", volume }) as Prebuild
const FROM_PREBUILD: OpenPath = { _tag: "Prebuild", prebuild: prebuild("prbox-prebuild-pb1") }
const LOCAL_IMAGE = { imageOnly: true, localEngine: true }

describe("poolKeyFor: which opens claim from the warm pool", () => {
  const rows: ReadonlyArray<[string, number, OpenPath | undefined, typeof LOCAL_IMAGE, string | undefined]> = [
    ["a ready prebuild of an image environment on this machine's engine", 1, FROM_PREBUILD, LOCAL_IMAGE, "k1"],
    ["the pool off (size 0)", 0, FROM_PREBUILD, LOCAL_IMAGE, undefined],
    ["a remote engine: today's path", 1, FROM_PREBUILD, { imageOnly: true, localEngine: false }, undefined],
    [
      "an environment built from the files (Dockerfile, Compose)",
      1,
      FROM_PREBUILD,
      { imageOnly: false, localEngine: true },
      undefined
    ],
    ["a prebuild with no volume", 1, { _tag: "Prebuild", prebuild: prebuild(null) }, LOCAL_IMAGE, undefined],
    ["the full path", 1, { _tag: "Full", reason: "x" }, LOCAL_IMAGE, undefined],
    ["prebuilds off", 1, { _tag: "Off" }, LOCAL_IMAGE, undefined],
    ["no prebuild lookup", 1, undefined, LOCAL_IMAGE, undefined]
  ]
  for (const [name, size, open, facts, expected] of rows)
    it(name, () => assert.strictEqual(poolKeyFor(configOf(size), open, facts), expected))
})

describe("worthPrebuilding: which environments get a prebuild", () => {
  const devcontainer = (source: string, config: Record<string, unknown>) =>
    ({ _tag: "Devcontainer", spec: { source: { _tag: source }, config } }) as unknown as EnvironmentChoice
  const rows: ReadonlyArray<[string, EnvironmentChoice, number, boolean]> = [
    ["onCreateCommand, pool off", devcontainer("Image", { onCreateCommand: "make" }), 0, true],
    ["updateContentCommand, pool off", devcontainer("Image", { updateContentCommand: "make" }), 0, true],
    ["no create-time steps, pool off: today's path", devcontainer("Image", { postCreateCommand: "x" }), 0, false],
    ["no create-time steps, pool on: pool containers start from it", devcontainer("Image", {}), 1, true],
    ["no devcontainer.json (the default image), pool on", { _tag: "Default" }, 1, true],
    ["config.json's image, pool off", { _tag: "Configured", image: "i" }, 0, false],
    ["a Dockerfile without steps, pool on: never pooled", devcontainer("Build", {}), 1, false],
    ["a Dockerfile with steps", devcontainer("Build", { onCreateCommand: "make" }), 0, true]
  ]
  for (const [name, choice, size, expected] of rows)
    it(name, () => assert.strictEqual(worthPrebuilding(choice, configOf(size)), expected))
})
