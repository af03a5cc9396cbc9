// Docker's own formats for the values of its flags: sizes, addresses,
// host names and mount strings, read as `docker run` reads them.

/** `512m`, `1g`, `2GiB`, bytes: Docker's sizes, in whole MiB rounded up; undefined when not one. */
export const dockerSizeMb = (text: string): number | undefined => {
  const match = /^(\d+(?:\.\d+)?)\s*([bkmgt])?(?:i?b)?$/i.exec(text.trim())
  if (match === null) return undefined
  const scale = { b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }[(match[2] ?? "b").toLowerCase()] ?? 1
  const mb = Math.ceil((Number(match[1]) * scale) / 1024 ** 2)
  return mb > 0 ? mb : undefined
}

const ipv4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/
export const isIpv4 = (text: string) =>
  ipv4
    .exec(text)
    ?.slice(1)
    .every((part) => Number(part) <= 255) === true
export const isIpv6 = (text: string) => /^\[?[0-9a-f:.]+\]?$/i.test(text) && text.includes(":")
export const hostName = /^[A-Za-z0-9]([A-Za-z0-9.-]{0,62})$/

/** The host as a container reaches it: `host-gateway`, or a Docker bridge's gateway (x.y.0.1 in 172.16.0.0/12). */
export const isHostGateway = (address: string): boolean => {
  if (address === "host-gateway") return true
  const parts = ipv4.exec(address)?.slice(1).map(Number)
  if (parts === undefined) return false
  const [a, b, c, d] = parts
  return a === 172 && b !== undefined && b >= 16 && b <= 31 && c === 0 && d === 1
}

/** A mount string's fields (`type` defaults to volume, as Docker's); undefined without a target. */
export const parseMountString = (
  raw: string
):
  | { readonly type: string; readonly source: string | null; readonly target: string; readonly readOnly: boolean }
  | undefined => {
  const fields = new Map<string, string>()
  let readOnly = false
  for (const part of raw.split(",")) {
    const [key = "", ...value] = part.split("=")
    if (key === "readonly" || key === "ro") readOnly = value.length === 0 || value.join("=") !== "false"
    else fields.set(key, value.join("="))
  }
  const target = fields.get("target") ?? fields.get("dst") ?? fields.get("destination")
  if (target === undefined) return undefined
  const source = fields.get("source") ?? fields.get("src")
  return {
    type: fields.get("type") ?? "volume",
    source: source === undefined || source === "" ? null : source,
    target,
    readOnly
  }
}
