import { assert, describe, it } from "@effect/vitest"
import {
  type ChosenEngine,
  chooseEngine,
  type EngineSources,
  engineAddress,
  LOCAL_ENGINE,
  rowEngine
} from "@prbox/domain"
import { Result } from "effect"

const none: EngineSources = {
  configured: undefined,
  dockerHost: undefined,
  dockerContext: undefined,
  currentContext: undefined,
  contexts: new Map()
}
const contexts = new Map([
  ["buildbox", "ssh://me@buildbox"],
  ["other", "tcp://10.0.0.2:2375"],
  ["broken", "http://nowhere"]
])
const every: EngineSources = {
  configured: { host: "ssh://me@config-box" },
  dockerHost: "ssh://me@env-box",
  dockerContext: "buildbox",
  currentContext: "other",
  contexts
}

describe("chooseEngine: first match wins", () => {
  it.each<readonly [string, EngineSources, ChosenEngine]>([
    ["config.json's host over everything", every, { address: "ssh://me@config-box", source: "config" }],
    [
      "config.json's context over DOCKER_HOST",
      { ...every, configured: { context: "other" } },
      { address: "tcp://10.0.0.2:2375", source: "context other" }
    ],
    [
      "config.json's context `default` is the local socket",
      { ...every, configured: { context: "default" } },
      { address: LOCAL_ENGINE, source: "context default" }
    ],
    [
      "DOCKER_HOST over the contexts",
      { ...every, configured: undefined },
      { address: "ssh://me@env-box", source: "DOCKER_HOST" }
    ],
    [
      "an empty DOCKER_HOST is unset",
      { ...every, configured: undefined, dockerHost: "  " },
      { address: "ssh://me@buildbox", source: "context buildbox" }
    ],
    [
      "DOCKER_CONTEXT over Docker's currentContext",
      { ...every, configured: undefined, dockerHost: undefined },
      { address: "ssh://me@buildbox", source: "context buildbox" }
    ],
    [
      "Docker's currentContext",
      { ...none, currentContext: "other", contexts },
      { address: "tcp://10.0.0.2:2375", source: "context other" }
    ],
    [
      "currentContext `default` is the local socket",
      { ...none, currentContext: "default", contexts },
      { address: LOCAL_ENGINE, source: "default" }
    ],
    ["nothing set: the local socket", none, { address: LOCAL_ENGINE, source: "default" }],
    [
      "a unix socket elsewhere",
      { ...none, dockerHost: "unix:///run/user/1000/docker.sock" },
      { address: "unix:///run/user/1000/docker.sock", source: "DOCKER_HOST" }
    ]
  ])("%s", (_name, sources, expected) => {
    assert.deepStrictEqual(chooseEngine(sources), Result.succeed(expected))
  })
})

describe("chooseEngine: refuses rather than guess", () => {
  it.each<readonly [string, EngineSources, string]>([
    ["a configured context that does not exist", { ...none, configured: { context: "gone" } }, '"gone"'],
    ["DOCKER_CONTEXT naming no context", { ...none, dockerContext: "gone" }, "DOCKER_CONTEXT"],
    ["currentContext naming no context", { ...none, currentContext: "gone" }, "currentContext"],
    ["both host and context", { ...none, configured: { host: "ssh://a", context: "other" } }, "not both"],
    ["neither host nor context", { ...none, configured: {} }, "give `host`"],
    ["a host that is no engine address", { ...none, configured: { host: "buildbox" } }, "runtime.docker.host"],
    ["a DOCKER_HOST that is no engine address", { ...none, dockerHost: "http://x" }, "DOCKER_HOST"],
    ["a scheme with nothing after it", { ...none, dockerHost: "ssh://" }, "DOCKER_HOST"],
    ["a context whose endpoint is unusable", { ...none, currentContext: "broken", contexts }, 'context "broken"']
  ])("%s", (_name, sources, fragment) => {
    const chosen = chooseEngine(sources)
    assert.isTrue(Result.isFailure(chosen))
    if (Result.isFailure(chosen)) assert.include(chosen.failure, fragment)
  })

  it("a missing context's message lists the known ones", () => {
    const chosen = chooseEngine({ ...none, configured: { context: "gone" }, contexts })
    assert.deepStrictEqual(
      chosen,
      Result.fail(
        'runtime.docker.context names the Docker context "gone", which does not exist (known: default, buildbox, other, broken)'
      )
    )
  })
})

describe("the engine a row records", () => {
  it.each<readonly [string, string | null]>([
    [LOCAL_ENGINE, null],
    ["ssh://me@buildbox", "ssh://me@buildbox"],
    ["unix:///run/user/1000/docker.sock", "unix:///run/user/1000/docker.sock"]
  ])("%s → %s, and back", (address, engine) => {
    assert.strictEqual(rowEngine(address), engine)
    assert.strictEqual(engineAddress(engine), address)
  })
})
