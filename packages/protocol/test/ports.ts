import type { PortList, PortView } from "../src/index.ts"

/** A port of sandbox `abcdefghijkl` as the daemon lists it (previews on 47000): discovered, listening, private. */
export const portView = (port: number, fields: Partial<PortView> = {}): PortView => ({
  port,
  label: null,
  source: "discovered",
  onAutoForward: null,
  listening: true,
  public: false,
  url: `http://${port}.abcdefghijkl.localhost:47000/`,
  pathUrl: `http://localhost:47000/s/abcdefghijkl/${port}/`,
  ...fields
})

export const portList = (...ports: ReadonlyArray<PortView>): PortList => ({ previewPort: 47000, ports })
