import * as Domain from "@prbox/domain"
import { SandboxNotFound } from "@prbox/domain"
import * as Engine from "@prbox/engine"
import { PullRequestMissing, RuntimeError } from "@prbox/engine"
import { DockerUnavailable, ExitCode, exitCodeOf, Internal, NotFound } from "@prbox/protocol"
import { describe, expect, it } from "vitest"
import { apiErrorOf, type EngineFailureTag, internalOnPurpose, toApiError } from "../src/Mapping.ts"

/** The modules whose error classes the engine fails with. */
const errorModules: ReadonlyArray<Record<string, unknown>> = [Engine, Domain]

/** Errors that end inside the engine and never reach a service's caller, with where they end. */
const endInsideTheEngine: Record<string, string> = {
  StopWon: "a worker that lost to a stop ends quietly",
  SetupFailed: "a create or restart step's failure is recorded on the row by its worker",
  ContainerExited: "the start step records it on the row as 'its container exited' (StartContainer.ts)",
  PortTaken: "the start step moves the sandbox to a new port; a second refusal is recorded on the row by its worker",
  HookFailed: "a hook's failure is logged, never fatal",
  PrebuildFailed: "a prebuild's failure is recorded on its row (MakePrebuild.ts); an open then takes today's path",
  PrebuildRefused:
    "prbox prebuild's refusal ends its event stream as a Failed event with its reason (PrebuildsHandlers.ts)",
  ImageBuildFailed: "a failed image build is recorded on the row by its worker",
  InvalidTransition: "the store's refusal reaches callers as StoreFailure",
  CwdRefused: "the runtime's refusal of a working folder reaches callers as InvalidPath (CommandPlace.ts)"
}

/** The tag of a schema error class, read from its `_tag` field. */
const tagOf = (value: unknown): string | undefined => {
  if (typeof value !== "function" || !(value.prototype instanceof Error)) return undefined
  const literal = (value as { readonly fields?: { readonly _tag?: { readonly ast?: { readonly literal?: unknown } } } })
    .fields?._tag?.ast?.literal
  return typeof literal === "string" ? literal : undefined
}

const engineErrorTags = [
  ...new Set(errorModules.flatMap((module) => Object.values(module).flatMap((value) => tagOf(value) ?? [])))
].sort()

const isMapped = (tag: string): tag is EngineFailureTag => Object.hasOwn(apiErrorOf, tag)

describe("engine errors at the API boundary", () => {
  it("finds the engine's error classes", () => {
    expect(engineErrorTags).toEqual(expect.arrayContaining(["SandboxNotFound", "RuntimeError", "StoreFailure"]))
    expect(engineErrorTags).toEqual(expect.arrayContaining(Object.keys(endInsideTheEngine)))
  })

  it("maps every engine error to an API error that says what happened (Internal only on purpose)", () => {
    const unmapped = engineErrorTags.filter((tag) => !(tag in endInsideTheEngine) && !isMapped(tag))
    expect(unmapped).toEqual([])
    const internal = engineErrorTags.filter((tag) => isMapped(tag) && apiErrorOf[tag] === Internal)
    expect(internal.sort()).toEqual([...internalOnPurpose].sort())
  })

  it("keeps the engine's message and picks the class by tag", () => {
    const notFound = toApiError(new SandboxNotFound({ id: "abcdefghijkl" }))
    expect(notFound).toBeInstanceOf(NotFound)
    expect(notFound.message).toBe("no sandbox with id abcdefghijkl")
    const runtime = toApiError(new RuntimeError({ operation: "container.start", detail: "engine down" }))
    expect(runtime).toBeInstanceOf(DockerUnavailable)
    expect(runtime.message).toBe("container.start: engine down")
  })

  it("a pull request the hosting service says does not exist is exit code 3, with the service's answer", () => {
    const missing = toApiError(new PullRequestMissing({ pullRequest: "o/r#9", detail: "Not Found" }))
    expect(missing).toBeInstanceOf(NotFound)
    expect(missing.message).toContain('"Not Found"')
    expect(exitCodeOf(missing._tag)).toBe(ExitCode.notFound)
  })

  it("does not type-check a table that leaves an engine error out", () => {
    const { StoreFailure: _left, ...rest } = apiErrorOf
    // @ts-expect-error StoreFailure has no API error: `pnpm typecheck` fails if this compiles.
    const incomplete: typeof apiErrorOf = rest
    expect(Object.keys(incomplete)).not.toContain("StoreFailure")
  })
})
