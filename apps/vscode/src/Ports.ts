import { type PortsState, portToAutoOpen } from "./PortNodes.ts"
import type { PortList, SandboxId } from "./Protocol.ts"

/** How often the ports of running sandboxes are asked for while the view shows. */
export const PORTS_POLL_MS = 2000

export interface PortWatchOptions {
  /** The running sandboxes (the daemon's last list). */
  readonly running: () => ReadonlyArray<SandboxId>
  /** The daemon's `ports` call. Asking is watching: the daemon discovers only while someone asks. */
  readonly fetch: (id: SandboxId) => Promise<PortList>
  /** `onAutoForward: openBrowser`: opens a port's preview in the browser. */
  readonly open: (url: string) => Promise<void>
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * The ports of the running sandboxes, for the tree: asked for every 2 s only
 * while the view is visible (the daemon watches a sandbox's ports only while
 * someone asks), and opened in the browser once per sandbox and port when one
 * marked `openBrowser` starts listening.
 */
export class PortWatch {
  readonly #options: PortWatchOptions
  readonly #states = new Map<SandboxId, PortsState>()
  /** Per sandbox, the ports already opened automatically (each at most once). */
  readonly #opened = new Map<SandboxId, Set<number>>()
  readonly #listeners = new Set<() => void>()
  #timer: ReturnType<typeof setInterval> | undefined
  #polling: Promise<void> | undefined

  constructor(options: PortWatchOptions) {
    this.#options = options
  }

  /** The last answer about `id`'s ports (none before the first poll, or once it no longer runs). */
  state(id: SandboxId): PortsState | undefined {
    return this.#states.get(id)
  }

  onDidChange(listener: () => void): { dispose: () => void } {
    this.#listeners.add(listener)
    return { dispose: () => this.#listeners.delete(listener) }
  }

  /** Polls while `visible`: at once when the view appears, then every 2 s; nothing while it is hidden. */
  setVisible(visible: boolean): void {
    if (visible && this.#timer === undefined) {
      this.#timer = setInterval(() => void this.poll(), PORTS_POLL_MS)
      void this.poll()
    } else if (!visible && this.#timer !== undefined) {
      clearInterval(this.#timer)
      this.#timer = undefined
    }
  }

  get visible(): boolean {
    return this.#timer !== undefined
  }

  /** One round over the running sandboxes; a round still under way is not started twice. */
  poll(): Promise<void> {
    this.#polling ??= this.#round().finally(() => {
      this.#polling = undefined
    })
    return this.#polling
  }

  async #round(): Promise<void> {
    const before = JSON.stringify([...this.#states])
    const running = this.#options.running()
    for (const id of this.#states.keys()) if (!running.includes(id)) this.#states.delete(id)
    await Promise.all(running.map((id) => this.#pollOne(id)))
    // The tree redraws only when something it shows changed.
    if (JSON.stringify([...this.#states]) !== before) for (const listener of this.#listeners) listener()
  }

  async #pollOne(id: SandboxId): Promise<void> {
    let list: PortList
    try {
      list = await this.#options.fetch(id)
    } catch (error) {
      // Not "no ports": an answer that did not come is shown as such.
      this.#states.set(id, { _tag: "unavailable", message: messageOf(error) })
      return
    }
    const previous = this.#states.get(id)
    this.#states.set(id, { _tag: "ports", list })
    const opened = this.#opened.get(id) ?? new Set<number>()
    this.#opened.set(id, opened)
    const port = portToAutoOpen(previous?._tag === "ports" ? previous.list : undefined, list, opened)
    if (port === undefined) return
    opened.add(port.port)
    await this.#options.open(port.url).catch(() => undefined)
  }

  dispose(): void {
    this.setVisible(false)
    this.#listeners.clear()
  }
}
