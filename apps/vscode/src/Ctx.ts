import type * as vscode from "vscode"
import type { CommandId } from "./Model.ts"

/**
 * The extension's context object: it owns every disposable the extension
 * makes (VS Code disposes them on deactivation, in reverse order) and
 * registers the command table.
 */
export class Ctx {
  readonly #extension: vscode.ExtensionContext
  readonly #vscode: typeof vscode

  constructor(extension: vscode.ExtensionContext, api: typeof vscode) {
    this.#extension = extension
    this.#vscode = api
  }

  /** Keeps `disposable` until the extension deactivates; returns it. */
  own<D extends { dispose(): unknown }>(disposable: D): D {
    this.#extension.subscriptions.push(disposable)
    return disposable
  }

  registerCommands(table: ReadonlyArray<readonly [CommandId, (argument?: unknown) => Promise<void>]>): void {
    for (const [id, run] of table) this.own(this.#vscode.commands.registerCommand(id, run))
  }
}
