"use strict"
/*
 * The sftp subsystem when the image has no OpenSSH sftp-server: ssh2's SFTP
 * server primitives over Node's fs, as the sandbox user (one connection per
 * process, so synchronous calls block no one else). A write is the one
 * asynchronous call: the disk works while this thread decrypts the next
 * packets; the requests after it wait for it.
 */
const fs = require("node:fs")
const path = require("node:path")
const { utils } = require("ssh2")

const { OPEN_MODE, STATUS_CODE } = utils.sftp

const codeOf = (error) =>
  error && error.code === "ENOENT"
    ? STATUS_CODE.NO_SUCH_FILE
    : error && (error.code === "EACCES" || error.code === "EPERM")
      ? STATUS_CODE.PERMISSION_DENIED
      : STATUS_CODE.FAILURE

const attrsOf = (stats) => ({
  mode: stats.mode,
  uid: stats.uid,
  gid: stats.gid,
  size: stats.size,
  atime: Math.floor(stats.atimeMs / 1000),
  mtime: Math.floor(stats.mtimeMs / 1000)
})

const READDIR_PAGE = 64

const TYPE = { 9604: "d", 21609: "l", 16807: "-" }
const longname = (name, stats) => {
  const kind = TYPE[stats.mode & 0o170000] || "?"
  const bits = "rwxrwxrwx"
    .split("")
    .map((c, i) => (stats.mode & (1 << (8 - i)) ? c : "-"))
    .join("")
  const when = new Date(stats.mtimeMs).toISOString().slice(0, 16).replace("T", " ")
  return `${kind}${bits} 1 ${stats.uid} ${stats.gid} ${stats.size} ${when} ${name}`
}

const openFlags = (flags) => {
  let mode =
    flags & OPEN_MODE.WRITE
      ? flags & OPEN_MODE.READ
        ? fs.constants.O_RDWR
        : fs.constants.O_WRONLY
      : fs.constants.O_RDONLY
  if (flags & OPEN_MODE.APPEND) mode |= fs.constants.O_APPEND
  if (flags & OPEN_MODE.CREAT) mode |= fs.constants.O_CREAT
  if (flags & OPEN_MODE.TRUNC) mode |= fs.constants.O_TRUNC
  if (flags & OPEN_MODE.EXCL) mode |= fs.constants.O_EXCL
  return mode
}

const applyAttrs = (target, attrs, byHandle) => {
  if (!attrs) return
  if (attrs.mode !== undefined) (byHandle ? fs.fchmodSync : fs.chmodSync)(target, attrs.mode & 0o7777)
  if (attrs.size !== undefined) (byHandle ? fs.ftruncateSync : fs.truncateSync)(target, attrs.size)
  if (attrs.atime !== undefined && attrs.mtime !== undefined)
    (byHandle ? fs.futimesSync : fs.utimesSync)(target, attrs.atime, attrs.mtime)
  if (attrs.uid !== undefined && attrs.gid !== undefined)
    (byHandle ? fs.fchownSync : fs.chownSync)(target, attrs.uid, attrs.gid)
}

exports.serveSftp = (sftp) => {
  const handles = new Map()
  let next = 0
  const newHandle = (entry) => {
    const buffer = Buffer.alloc(4)
    buffer.writeUInt32BE(next++)
    handles.set(buffer.toString("hex"), entry)
    return buffer
  }
  const entryOf = (handle) => handles.get(Buffer.from(handle).toString("hex"))
  const home = process.env.HOME || "/"
  const resolved = (name) => path.resolve(home, name || ".")
  const failure = (id, error) => sftp.status(id, codeOf(error), error.code || "failure")
  // Answered in the order they came (as the protocol asks of requests on one file), a thrown
  // error as its status: a write is asynchronous, and whatever follows it waits for it.
  let queue = Promise.resolve()
  const on = (event, answer) =>
    sftp.on(event, (id, ...args) => {
      queue = queue.then(() => answer(id, ...args)).catch((error) => failure(id, error))
    })
  /** A request on an open file's handle. */
  const onFile = (event, answer) =>
    on(event, (id, handle, ...args) => {
      const entry = entryOf(handle)
      if (!entry || entry.fd === undefined) return sftp.status(id, STATUS_CODE.FAILURE, "bad handle")
      return answer(id, entry, ...args)
    })
  on("OPEN", (id, name, flags, attrs) => {
    const fd = fs.openSync(
      resolved(name),
      openFlags(flags),
      attrs && attrs.mode !== undefined ? attrs.mode & 0o7777 : 0o666
    )
    sftp.handle(id, newHandle({ fd }))
  })
  onFile("READ", (id, entry, offset, length) => {
    // At most what the server offers (limits@openssh.com): its answer fits a packet.
    const buffer = Buffer.allocUnsafe(Math.min(length, 255 * 1024))
    const read = fs.readSync(entry.fd, buffer, 0, buffer.length, offset)
    if (read === 0) return sftp.status(id, STATUS_CODE.EOF)
    sftp.data(id, buffer.subarray(0, read))
  })
  onFile(
    "WRITE",
    (id, entry, offset, data) =>
      new Promise((resolve, reject) =>
        fs.write(entry.fd, data, 0, data.length, offset, (error) => {
          if (error) return reject(error)
          sftp.status(id, STATUS_CODE.OK)
          resolve()
        })
      )
  )
  onFile("FSTAT", (id, entry) => sftp.attrs(id, attrsOf(fs.fstatSync(entry.fd))))
  onFile("FSETSTAT", (id, entry, attrs) => {
    applyAttrs(entry.fd, attrs, true)
    sftp.status(id, STATUS_CODE.OK)
  })
  on("CLOSE", (id, handle) => {
    const key = Buffer.from(handle).toString("hex")
    const entry = handles.get(key)
    if (!entry) return sftp.status(id, STATUS_CODE.FAILURE, "bad handle")
    handles.delete(key)
    if (entry.fd !== undefined) fs.closeSync(entry.fd)
    sftp.status(id, STATUS_CODE.OK)
  })
  on("OPENDIR", (id, name) => {
    const dir = resolved(name)
    const names = fs.readdirSync(dir)
    sftp.handle(id, newHandle({ dir, names: [".", "..", ...names] }))
  })
  on("READDIR", (id, handle) => {
    const entry = entryOf(handle)
    if (!entry || entry.dir === undefined) return sftp.status(id, STATUS_CODE.FAILURE, "bad handle")
    if (entry.names.length === 0) return sftp.status(id, STATUS_CODE.EOF)
    // A page at a time: one answer must fit in a packet.
    const listed = []
    for (const name of entry.names.splice(0, READDIR_PAGE)) {
      try {
        const stats = fs.lstatSync(path.join(entry.dir, name))
        listed.push({ filename: name, longname: longname(name, stats), attrs: attrsOf(stats) })
      } catch {
        // Gone since the listing.
      }
    }
    sftp.name(id, listed)
  })
  on("STAT", (id, name) => sftp.attrs(id, attrsOf(fs.statSync(resolved(name)))))
  on("LSTAT", (id, name) => sftp.attrs(id, attrsOf(fs.lstatSync(resolved(name)))))
  on("SETSTAT", (id, name, attrs) => {
    applyAttrs(resolved(name), attrs, false)
    sftp.status(id, STATUS_CODE.OK)
  })
  on("REMOVE", (id, name) => {
    fs.unlinkSync(resolved(name))
    sftp.status(id, STATUS_CODE.OK)
  })
  on("RMDIR", (id, name) => {
    fs.rmdirSync(resolved(name))
    sftp.status(id, STATUS_CODE.OK)
  })
  on("MKDIR", (id, name, attrs) => {
    fs.mkdirSync(resolved(name), attrs && attrs.mode !== undefined ? attrs.mode & 0o7777 : 0o777)
    sftp.status(id, STATUS_CODE.OK)
  })
  on("RENAME", (id, from, to) => {
    if (fs.existsSync(resolved(to))) return sftp.status(id, STATUS_CODE.FAILURE, "target exists")
    fs.renameSync(resolved(from), resolved(to))
    sftp.status(id, STATUS_CODE.OK)
  })
  on("REALPATH", (id, name) => {
    const full = resolved(name)
    let real = full
    try {
      real = fs.realpathSync(full)
    } catch {
      // A path that does not exist yet is answered as named.
    }
    sftp.name(id, [{ filename: real, longname: real, attrs: {} }])
  })
  on("READLINK", (id, name) => {
    const target = fs.readlinkSync(resolved(name))
    sftp.name(id, [{ filename: target, longname: target, attrs: {} }])
  })
  on("SYMLINK", (id, linkPath, targetPath) => {
    // OpenSSH's client sends (target, link) in the order its server reads them.
    fs.symlinkSync(linkPath, resolved(targetPath))
    sftp.status(id, STATUS_CODE.OK)
  })
  // The client's EOF ends the subsystem, as sftp-server exits 0 at the end of its
  // stdin: scp fails when the channel closes without an exit status.
  sftp.on("end", () => {
    queue = queue.then(() => {
      if (sftp.outgoing.state === "open") sftp._protocol.exitStatus(sftp.outgoing.id, 0)
      sftp.end()
    })
  })
  sftp.on("close", () => {
    queue = queue.then(() => {
      for (const entry of handles.values()) if (entry.fd !== undefined) fs.closeSync(entry.fd)
      handles.clear()
    })
  })
}
