import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { Cleanup } from "../src/index.ts"

/**
 * The branching of plan → confirm → act, over a recording stand-in for the
 * daemon's dry run and act (the real daemon's gc runs in
 * test/Daemon.test.ts and in the CLI's Maintenance test).
 */
interface Plan {
  readonly ids: ReadonlyArray<string>
}
interface Report {
  readonly plan: Plan
  readonly failures: ReadonlyArray<{ readonly sandboxId: string; readonly detail: string }>
}

const recorder = (planned: ReadonlyArray<string>, failing: ReadonlyArray<string> = []) => {
  const calls: Array<string> = []
  const cleanup: Cleanup.Cleanup<Plan, Report> = {
    plan: Effect.sync(() => {
      calls.push("plan")
      return { plan: { ids: planned }, failures: [] }
    }),
    isEmpty: (plan) => plan.ids.length === 0,
    act: (shown) =>
      Effect.sync(() => {
        calls.push(`act ${shown.ids.join(",")}`)
        return { plan: shown, failures: failing.map((sandboxId) => ({ sandboxId, detail: "busy" })) }
      }),
    failures: (report) => report.failures
  }
  return { calls, cleanup }
}

const run = (
  planned: ReadonlyArray<string>,
  options: { readonly dryRun?: boolean; readonly answer: boolean; readonly failing?: ReadonlyArray<string> }
) => {
  const { calls, cleanup } = recorder(planned, options.failing)
  const outcome = Effect.runSync(
    Cleanup.planConfirmAct(cleanup, {
      dryRun: options.dryRun ?? false,
      show: (shown) => Effect.sync(() => calls.push(`show ${shown.plan.ids.length}`)),
      confirm: (shown) =>
        Effect.sync(() => {
          calls.push(`confirm ${shown.plan.ids.join(",")}`)
          return options.answer
        })
    })
  )
  return { calls, outcome }
}

describe("plan → confirm → act", () => {
  const cases = [
    {
      name: "nothing planned: shown, never asked, never acted",
      planned: [],
      options: { answer: true },
      tag: "Nothing",
      calls: ["plan", "show 0"]
    },
    {
      name: "a dry run: shown, never asked, never acted",
      planned: ["a"],
      options: { dryRun: true, answer: true },
      tag: "DryRun",
      calls: ["plan", "show 1"]
    },
    {
      name: "declined: asked, never acted",
      planned: ["a", "b"],
      options: { answer: false },
      tag: "Declined",
      calls: ["plan", "show 2", "confirm a,b"]
    },
    {
      name: "confirmed: acts on exactly the plan that was shown",
      planned: ["a", "b"],
      options: { answer: true },
      tag: "Done",
      calls: ["plan", "show 2", "confirm a,b", "act a,b"]
    }
  ] as const
  for (const entry of cases) {
    it(entry.name, () => {
      const { calls, outcome } = run(entry.planned, entry.options)
      expect(outcome._tag).toBe(entry.tag)
      expect(calls).toEqual(entry.calls)
    })
  }

  it("hands back each failed action", () => {
    const { outcome } = run(["a", "b"], { answer: true, failing: ["b"] })
    expect(outcome).toMatchObject({ _tag: "Done", failures: [{ sandboxId: "b", detail: "busy" }] })
  })
})
