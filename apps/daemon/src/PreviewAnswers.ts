import type { Socket } from "node:net"
import { PREVIEW_COOKIE } from "@prbox/domain"
import { header, type RequestHead } from "./PreviewHead.ts"

/** The preview server's own answers; each closes the connection. */
export type AnswerTag =
  | "BadRequest"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "HeadersTooLarge"
  | "Busy"
  | "Unavailable"
  | "BadGateway"

const STATUS: Readonly<Record<AnswerTag, readonly [number, string]>> = {
  BadRequest: [400, "Bad Request"],
  Unauthorized: [401, "Unauthorized"],
  Forbidden: [403, "Forbidden"],
  NotFound: [404, "Not Found"],
  HeadersTooLarge: [431, "Request Header Fields Too Large"],
  Busy: [503, "Service Unavailable"],
  Unavailable: [503, "Service Unavailable"],
  BadGateway: [502, "Bad Gateway"]
}

/** The login page's path on every preview host (outside any app's usual routes). */
export const LOGIN_PATH = "/.prbox/login"

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c)

/** A browser loading a page (not a script): it gets HTML and, when it may log in, the login page. */
export const wantsHtml = (head: RequestHead | undefined): boolean =>
  head !== undefined &&
  (head.method === "GET" || head.method === "HEAD") &&
  (header(head, "accept") ?? "").includes("text/html")

const write = (
  socket: Socket,
  head: RequestHead | undefined,
  status: readonly [number, string],
  headers: Readonly<Record<string, string>>,
  body: string
) => {
  const lines = [
    `HTTP/1.1 ${status[0]} ${status[1]}`,
    ...Object.entries({
      ...headers,
      "Content-Length": String(Buffer.byteLength(body)),
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
      Connection: "close"
    }).map(([name, value]) => `${name}: ${value}`)
  ]
  socket.resume()
  socket.end(`${lines.join("\r\n")}\r\n\r\n${head?.method === "HEAD" ? "" : body}`)
}

const page = (title: string, inner: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body style="font-family:sans-serif;max-width:36em;margin:4em auto">${inner}</body></html>`

/** An error: a small HTML page for a browser, `{"_tag","message"}` for a script. */
export const refuse = (
  socket: Socket,
  head: RequestHead | undefined,
  tag: AnswerTag,
  message: string,
  extra: Readonly<Record<string, string>> = {}
) =>
  wantsHtml(head)
    ? write(
        socket,
        head,
        STATUS[tag],
        { "Content-Type": "text/html; charset=utf-8", ...extra },
        page("prbox preview", `<h1>prbox preview</h1><p>${escapeHtml(message)}</p>`)
      )
    : write(
        socket,
        head,
        STATUS[tag],
        { "Content-Type": "application/json", ...extra },
        JSON.stringify({ _tag: tag, message })
      )

/** Only a local path: `/x`, never `//host` or `/\host` (no open redirect). */
export const safeNext = (next: string | null | undefined): string =>
  next !== null && next !== undefined && /^\/(?![/\\])/.test(next) ? next : "/"

export const redirectToLogin = (socket: Socket, head: RequestHead) =>
  write(
    socket,
    head,
    [302, "Found"],
    { Location: `${LOGIN_PATH}?next=${encodeURIComponent(safeNext(head.target))}` },
    ""
  )

export const loginPage = (
  socket: Socket,
  head: RequestHead,
  options: { readonly sandboxId: string; readonly next: string; readonly wrong: boolean }
) =>
  write(
    socket,
    head,
    options.wrong ? STATUS.Unauthorized : [200, "OK"],
    { "Content-Type": "text/html; charset=utf-8" },
    page(
      "prbox preview login",
      `<h1>Preview of sandbox ${escapeHtml(options.sandboxId)}</h1>` +
        `<p>Enter the sandbox's password (<code>prbox password ${escapeHtml(options.sandboxId)}</code>).</p>` +
        (options.wrong ? `<p role="alert">Wrong password.</p>` : "") +
        `<form method="post" action="${LOGIN_PATH}">` +
        `<input type="hidden" name="next" value="${escapeHtml(safeNext(options.next))}">` +
        `<input type="password" name="password" autofocus required aria-label="password">` +
        `<button type="submit">Open</button></form>`
    )
  )

/** Logged in: the cookie covers every port of this sandbox (`<id>.localhost`) and no other. */
export const loggedIn = (socket: Socket, head: RequestHead, sandboxId: string, token: string, next: string) =>
  write(
    socket,
    head,
    [303, "See Other"],
    {
      Location: safeNext(next),
      "Set-Cookie": `${PREVIEW_COOKIE}=${token}; Domain=${sandboxId}.localhost; Path=/; Max-Age=604800; HttpOnly; SameSite=Lax`
    },
    ""
  )
