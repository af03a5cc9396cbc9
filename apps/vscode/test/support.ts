import type { SandboxId } from "@prbox/domain"
import type { DiffSide, PickItem, PortPickItem, TerminalSpec, Ui } from "../src/Handlers.ts"
import type { LogSink } from "../src/Logs.ts"

export { viewOf } from "../../../packages/protocol/test/sandboxes.ts"

/**
 * The editor, recorded: what the handlers showed and asked, with scripted
 * answers. Only the UI is faked; every handler test talks to a real daemon.
 */
export class RecordingUi implements Ui {
  readonly infos: Array<string> = []
  readonly errors: Array<string> = []
  readonly confirms: Array<{ readonly message: string; readonly detail: string }> = []
  readonly prompts: Array<string> = []
  readonly picks: Array<ReadonlyArray<PickItem>> = []
  readonly portPicks: Array<ReadonlyArray<PortPickItem>> = []
  readonly notifications: Array<{ readonly title: string; readonly messages: Array<string> }> = []
  readonly copied: Array<string> = []
  readonly opened: Array<string> = []
  readonly terminals: Array<TerminalSpec> = []

  /** Answers to input boxes, in order; `undefined` is Escape. */
  inputs: Array<string | undefined> = []
  confirmAnswer = false
  infoChoice: string | undefined = undefined
  pickSandbox: SandboxId | undefined = undefined
  pickPortNumber: number | undefined = undefined
  /** Presses Cancel on the progress notification once a reported message matches. */
  cancelWhen: ((message: string) => boolean) | undefined = undefined

  readonly info = async (message: string) => {
    this.infos.push(message)
    return this.infoChoice
  }

  readonly error = (message: string) => {
    this.errors.push(message)
  }

  readonly confirm = async (message: string, detail: string) => {
    this.confirms.push({ message, detail })
    return this.confirmAnswer
  }

  readonly input = async (options: { readonly prompt: string }) => {
    this.prompts.push(options.prompt)
    return this.inputs.shift()
  }

  readonly pick = async (items: ReadonlyArray<PickItem>) => {
    this.picks.push(items)
    return items.find((item) => item.view.id === this.pickSandbox)
  }

  readonly pickPort = async (items: ReadonlyArray<PortPickItem>) => {
    this.portPicks.push(items)
    return items.find((item) => item.port.port === this.pickPortNumber)
  }

  readonly progress = async <A>(
    title: string,
    task: (report: (message: string) => void, signal: AbortSignal) => Promise<A>
  ): Promise<A> => {
    const messages: Array<string> = []
    this.notifications.push({ title, messages })
    const controller = new AbortController()
    return task((message) => {
      messages.push(message)
      if (this.cancelWhen?.(message) === true) controller.abort()
    }, controller.signal)
  }

  readonly copy = async (text: string) => {
    this.copied.push(text)
  }

  readonly openExternal = async (url: string) => {
    this.opened.push(url)
  }

  readonly terminal = (spec: TerminalSpec) => {
    this.terminals.push(spec)
  }

  readonly diffs: Array<{ readonly left: DiffSide; readonly right: DiffSide; readonly title: string }> = []
  readonly diff = async (left: DiffSide, right: DiffSide, title: string) => {
    this.diffs.push({ left, right, title })
  }
}

/** An output channel, recorded. */
export class RecordingSink implements LogSink {
  readonly lines: Array<string> = []
  shown = 0
  disposed = false
  readonly name: string
  constructor(name: string) {
    this.name = name
  }
  readonly append = (line: string) => {
    this.lines.push(line)
  }
  readonly show = () => {
    this.shown++
  }
  readonly dispose = () => {
    this.disposed = true
  }
}
