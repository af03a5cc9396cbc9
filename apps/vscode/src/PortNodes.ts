import { accessOf, portName } from "@prbox/client"
import { portKey } from "@prbox/domain"
import type { NoteNode, PortNode } from "./Model.ts"
import type { PortList, PortView, SandboxId } from "./Protocol.ts"

/** A running sandbox's ports as the tree, the picker and auto-open see them. */

/** The last answer about a running sandbox's ports: the list, or why it could not be had. */
export type PortsState =
  | { readonly _tag: "ports"; readonly list: PortList }
  | { readonly _tag: "unavailable"; readonly message: string }

export const portNode = (sandboxId: SandboxId, port: PortView): PortNode => ({
  kind: "port",
  // Another Compose service's port may share the number of one of the app's.
  id: `${sandboxId}/port/${portKey(port.port, port.service)}`,
  sandboxId,
  port,
  label: portName(port),
  description: `${accessOf(port)} · ${port.listening ? "listening" : "not listening"}`,
  tooltip: [
    `${portName(port)}: ${port.listening ? "listening" : "nothing listens yet"} (${port.source})`,
    port.public
      ? "public: opens without a password until the sandbox stops"
      : "private: the browser asks for the sandbox's password once",
    port.url,
    `scripts: ${port.pathUrl} with Authorization: Bearer $(prbox preview-token ${sandboxId})`
  ].join("\n"),
  icon: port.listening ? { id: "radio-tower", color: "charts.green" } : { id: "circle-outline" },
  contextValue: port.listening ? "port.listening" : "port.closed"
})

/** A running sandbox's ports in the tree (declared first, then discovered, as the daemon orders them). */
export const portNodes = (sandboxId: SandboxId, state: PortsState | undefined): Array<PortNode | NoteNode> => {
  if (state === undefined) return []
  if (state._tag === "unavailable") {
    return [
      {
        kind: "note",
        id: `${sandboxId}/ports-unavailable`,
        label: "Ports unavailable",
        tooltip: state.message,
        icon: { id: "warning", color: "charts.yellow" }
      }
    ]
  }
  return state.list.ports.map((port) => portNode(sandboxId, port))
}

/**
 * `onAutoForward: openBrowser`: the first port so marked that listens now but
 * did not at the previous look (no previous look: the first answer is only
 * the baseline), and was never opened before.
 */
export const portToAutoOpen = (
  previous: PortList | undefined,
  next: PortList,
  opened: ReadonlySet<number>
): PortView | undefined => {
  if (previous === undefined) return undefined
  const wasListening = new Set(previous.ports.filter((port) => port.listening).map((port) => port.port))
  return next.ports.find(
    (port) =>
      port.onAutoForward === "openBrowser" && port.listening && !wasListening.has(port.port) && !opened.has(port.port)
  )
}

/** What the port picker shows. */
export const portPickItem = (port: PortView) => ({
  label: portName(port),
  description: `${accessOf(port)} · ${port.url}`,
  port
})
