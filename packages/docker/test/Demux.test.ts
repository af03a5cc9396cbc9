import { PassThrough, Writable } from "node:stream"
import { assert, describe, it } from "@effect/vitest"
import { demuxStream, makeFrameReader, type Piece } from "../src/node/Demux.ts"

/** One frame of the engine's multiplexed stream. */
const frame = (stream: number, payload: string): Buffer => {
  const header = Buffer.alloc(8)
  header[0] = stream
  header.writeUInt32BE(Buffer.byteLength(payload), 4)
  return Buffer.concat([header, Buffer.from(payload)])
}

/** What the reader makes of `wire` cut at `cuts`, joined per output ("raw" for the rest after a non-header). */
const readCut = (wire: Buffer, cuts: ReadonlyArray<number>) => {
  const read = makeFrameReader()
  const out: Record<string, string> = { stdout: "", stderr: "", raw: "" }
  const bounds = [0, ...cuts, wire.length]
  const pieces: Array<Piece> = []
  for (let i = 0; i + 1 < bounds.length; i++) pieces.push(...read(wire.subarray(bounds[i], bounds[i + 1])))
  for (const piece of pieces) {
    const key = piece._tag === "Raw" ? "raw" : piece.name
    out[key] += Buffer.from(piece.data).toString("latin1")
  }
  return out
}

const WIRE = Buffer.concat([frame(1, "hello "), frame(2, "oops\n"), frame(1, ""), frame(1, "world"), frame(0, "in")])

describe("makeFrameReader", () => {
  const rows: ReadonlyArray<{
    readonly name: string
    readonly wire: Buffer
    readonly expected: Record<string, string>
  }> = [
    { name: "frames of each stream", wire: WIRE, expected: { stdout: "hello world", stderr: "oops\nin", raw: "" } },
    {
      name: "the engine's own error (3) is stderr",
      wire: frame(3, "engine"),
      expected: { stdout: "", stderr: "engine", raw: "" }
    },
    {
      name: "not a header (a TTY's stream): all of it raw, the bytes that looked like one included",
      wire: Buffer.from("$ ls -la\r\ntotal 0\r\n"),
      expected: { stdout: "", stderr: "", raw: "$ ls -la\r\ntotal 0\r\n" }
    },
    {
      name: "frames, then a header whose padding is not zero: raw from there",
      wire: Buffer.concat([frame(1, "ok"), Buffer.from([1, 0, 7, 0, 0, 0, 0, 1]), Buffer.from("x")]),
      expected: { stdout: "ok", stderr: "", raw: "\x01\x00\x07\x00\x00\x00\x00\x01x" }
    }
  ]
  for (const row of rows) {
    it(`${row.name}: the same cut at every byte, and at every pair of bytes`, () => {
      assert.deepStrictEqual(readCut(row.wire, []), row.expected)
      for (let a = 1; a < row.wire.length; a++) {
        assert.deepStrictEqual(readCut(row.wire, [a]), row.expected, `cut at ${a}`)
        for (let b = a + 1; b < row.wire.length; b++) {
          assert.deepStrictEqual(readCut(row.wire, [a, b]), row.expected, `cut at ${a} and ${b}`)
        }
      }
    })
  }

  it("hands a payload on as views into the chunk it came in, never a copy", () => {
    const wire = frame(1, "x".repeat(16 * 1024))
    const [piece] = makeFrameReader()(wire)
    assert.strictEqual(piece?._tag, "Output")
    assert.strictEqual(piece?.data.buffer, wire.buffer)
    assert.strictEqual(piece?.data.byteOffset, wire.byteOffset + 8)
  })
})

describe("demuxStream", () => {
  it("pauses its source while a target asks to wait, and resumes it when that target drains", async () => {
    const source = new PassThrough()
    let release: () => void = () => undefined
    const received: Array<string> = []
    // A target that takes one chunk, then holds the next until released.
    const slow = new Writable({
      highWaterMark: 1,
      write(chunk: Buffer, _encoding, done) {
        received.push(chunk.toString("latin1"))
        if (received.length === 1) release = done
        else done()
      }
    })
    const stderr = new PassThrough()
    demuxStream(source, slow, stderr)
    source.write(frame(1, "first"))
    await new Promise((resolve) => setImmediate(resolve))
    assert.isTrue(source.isPaused(), "paused while the target is full")
    source.write(frame(1, "second"))
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepStrictEqual(received, ["first"])
    const drained = new Promise((resolve) => slow.once("drain", resolve))
    release()
    await drained
    await new Promise((resolve) => setImmediate(resolve))
    assert.isFalse(source.isPaused(), "flowing again once drained")
    assert.deepStrictEqual(received, ["first", "second"])
  })

  it("waits for both targets when both ask to wait, and flows again only once both drained", async () => {
    const source = new PassThrough()
    const held: Array<() => void> = []
    const holding = () =>
      new Writable({
        highWaterMark: 1,
        write(_chunk, _encoding, done) {
          held.push(done)
        }
      })
    const [out, err] = [holding(), holding()]
    demuxStream(source, out, err)
    source.write(Buffer.concat([frame(1, "o"), frame(2, "e")]))
    await new Promise((resolve) => setImmediate(resolve))
    assert.strictEqual(held.length, 2)
    assert.isTrue(source.isPaused())
    const outDrained = new Promise((resolve) => out.once("drain", resolve))
    held[0]?.()
    await outDrained
    await new Promise((resolve) => setImmediate(resolve))
    assert.isTrue(source.isPaused(), "stderr still full")
    const errDrained = new Promise((resolve) => err.once("drain", resolve))
    held[1]?.()
    await errDrained
    await new Promise((resolve) => setImmediate(resolve))
    assert.isFalse(source.isPaused())
  })

  it("drops what is meant for a target that is gone, and never waits on it: the source reaches its end", async () => {
    const source = new PassThrough()
    const stuck = new Writable({
      highWaterMark: 1,
      write() {
        // Never done: only its destruction ends the wait.
      }
    })
    const out: Array<string> = []
    const stderr = new Writable({
      write(chunk: Buffer, _encoding, done) {
        out.push(chunk.toString("latin1"))
        done()
      }
    })
    demuxStream(source, stuck, stderr)
    const ended = new Promise((resolve) => source.once("end", resolve))
    source.write(frame(1, "first"))
    await new Promise((resolve) => setImmediate(resolve))
    assert.isTrue(source.isPaused())
    stuck.destroy()
    source.end(Buffer.concat([frame(1, "dropped"), frame(2, "kept")]))
    await ended
    assert.deepStrictEqual(out, ["kept"])
  })

  it("a stream that is not multiplexed goes to stdout whole", async () => {
    const source = new PassThrough()
    const sink = () => {
      const got: Array<string> = []
      const writable = new Writable({
        write(chunk: Buffer, _encoding, done) {
          got.push(chunk.toString("latin1"))
          done()
        }
      })
      return { got, writable }
    }
    const [out, err] = [sink(), sink()]
    demuxStream(source, out.writable, err.writable)
    const ended = new Promise((resolve) => source.once("end", resolve))
    source.end("$ tty output\r\n")
    await ended
    assert.deepStrictEqual([out.got.join(""), err.got.join("")], ["$ tty output\r\n", ""])
  })
})
