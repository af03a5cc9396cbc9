import type { PortView, SandboxView } from "./Protocol.ts"

export interface TerminalSpec {
  readonly name: string
  readonly shellPath: string
  readonly shellArgs: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
}

/** One side of a PR's changed file: its merge-base's (`base`) or its head's. */
export interface DiffSide {
  readonly sandboxId: SandboxView["id"]
  readonly side: "base" | "head"
  readonly path: string
}

export interface PickItem {
  readonly label: string
  readonly description: string
  readonly view: SandboxView
}

export interface PortPickItem {
  readonly label: string
  readonly description: string
  readonly port: PortView
}

/**
 * Everything a command handler needs from the editor. `extension.ts`
 * implements it with the VS Code API; tests pass a recorder.
 */
export interface Ui {
  /** An information message; resolves with the action the user chose, if any. */
  readonly info: (message: string, ...actions: ReadonlyArray<string>) => Promise<string | undefined>
  readonly error: (message: string) => void
  /** A modal question; true only when the user chose `action`. */
  readonly confirm: (message: string, detail: string, action: string) => Promise<boolean>
  readonly input: (options: {
    readonly prompt: string
    readonly placeHolder: string
    readonly value?: string
  }) => Promise<string | undefined>
  readonly pick: (items: ReadonlyArray<PickItem>, placeHolder: string) => Promise<PickItem | undefined>
  readonly pickPort: (items: ReadonlyArray<PortPickItem>, placeHolder: string) => Promise<PortPickItem | undefined>
  /** A progress notification with a Cancel button; `signal` aborts when the user presses it. */
  readonly progress: <A>(
    title: string,
    task: (report: (message: string) => void, signal: AbortSignal) => Promise<A>
  ) => Promise<A>
  readonly copy: (text: string) => Promise<void>
  readonly openExternal: (url: string) => Promise<void>
  readonly terminal: (spec: TerminalSpec) => void
  /** A diff editor of two sides of a PR's file. */
  readonly diff: (left: DiffSide, right: DiffSide, title: string) => Promise<void>
}
