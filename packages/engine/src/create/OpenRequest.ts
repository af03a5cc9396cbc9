/** What `prbox open` (and `prbox prebuild`) asks for: anything the PR reference parser accepts. */
export interface OpenRequest {
  readonly input: string
  readonly pr?: number
  readonly ref?: string
  /** Which of the PR's named devcontainer configurations (`.devcontainer/<name>/devcontainer.json`). */
  readonly devcontainer?: string
}
