/**
 * The host's end of a sandboxed attempt's marks: on MARKS_FD, a copy of the attempt's stderr
 * pipe that the launch shell makes (`exec 8>&2`), the supervisor says, in order, `started` (the
 * sandbox and its seeds are ready) and `go` (the candidate's own command is starting now),
 * each as a line ending in MARK and the word. The host reads them out of the stderr it reads
 * anyway (no FIFO, no reader process of ours per attempt: two fewer processes, ~3.4 MiB, per
 * concurrent attempt) and takes them out of what it keeps of stderr.
 *
 * Only our processes write to that pipe before `go`: bwrap, the supervisor, its seeding and
 * the gateway's forwarder; the candidate's command starts after `go` and closes nothing of
 * ours. So the candidate cannot make or undo a mark (lines after `go` are its output, whatever
 * they say; a mark is never read twice), and the marks tell the host when the candidate's time
 * starts (dvergr's setup, the gateway's forwarder and the capture are not charged to it).
 * Marks are in the pipe before anything the candidate writes, so they are read whatever the
 * machine's load.
 *
 * Permissions: none.
 */

/** The descriptor the sandbox's supervisor writes its marks to. */
export const MARKS_FD = "8";

/** What ends a mark's line, before its word: `dvergr-sandbox-mark started`. */
export const MARK = "dvergr-sandbox-mark";

/** The launch shell's line that opens MARKS_FD: the attempt's stderr pipe. */
export const OPEN_MARKS_FD = `exec ${MARKS_FD}>&2`;

/** What the supervisor said, as it says it. */
export interface SandboxMarks {
  /** The supervisor ran (bwrap built the sandbox, the writable directories are seeded). */
  readonly started: boolean;
  /** When the candidate's own command started (performance.now()), else null. */
  readonly goAt: number | null;
  /** Calls `f` when the candidate's command starts (at once when it has). */
  onGo(f: () => void): void;
  /** Resolves once `go` was heard or the stream ended (every mark there was is read). */
  settled(): Promise<void>;
}

/** A line before `go` longer than this is no mark: it goes to the output as it is. */
const MAX_LINE = 4096;

const encoder = new TextEncoder();
const STARTED = encoder.encode(`${MARK} started`);
const GO = encoder.encode(`${MARK} go`);
const NL = 0x0a;

function endsWith(bytes: Uint8Array, end: number, suffix: Uint8Array): boolean {
  if (end < suffix.length) return false;
  for (let i = 0; i < suffix.length; i++) {
    if (bytes[end - suffix.length + i] !== suffix[i]) return false;
  }
  return true;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/**
 * The marks of one attempt, read from its stderr: `feed()` each chunk of the stream and keep
 * what it returns (the stream without the marks' lines); `end()` at the stream's end.
 */
export class StderrMarks implements SandboxMarks {
  private _started = false;
  private _goAt: number | null = null;
  /** The bytes before `go` not yet ending in a newline. */
  private pending: Uint8Array = new Uint8Array(0);
  private done = false;
  private readonly waiting: (() => void)[] = [];
  private settle!: () => void;
  private readonly whenSettled = new Promise<void>((r) => this.settle = r);

  get started(): boolean {
    return this._started;
  }

  get goAt(): number | null {
    return this._goAt;
  }

  onGo(f: () => void): void {
    if (this._goAt !== null) f();
    else this.waiting.push(f);
  }

  settled(): Promise<void> {
    return this.whenSettled;
  }

  /** Reads the marks in `chunk`; returns the rest of it (the output to keep). */
  feed(chunk: Uint8Array): Uint8Array {
    if (this.done) return chunk;
    const bytes = concat(this.pending, chunk);
    const kept: Uint8Array[] = [];
    let at = 0;
    for (let nl = bytes.indexOf(NL, at); nl >= 0 && !this.done; nl = bytes.indexOf(NL, at)) {
      const mark = endsWith(bytes, nl, STARTED) ? STARTED : endsWith(bytes, nl, GO) ? GO : null;
      if (mark === null) kept.push(bytes.subarray(at, nl + 1));
      else {
        // What stood before the mark on its line (another writer's text) is output.
        const before = nl - mark.length;
        if (before > at) kept.push(bytes.subarray(at, before), encoder.encode("\n"));
        this.hear(mark === GO ? "go" : "started");
      }
      at = nl + 1;
    }
    let rest = bytes.subarray(at);
    if (!this.done && rest.length > MAX_LINE) {
      kept.push(rest);
      rest = new Uint8Array(0);
    }
    if (this.done) {
      kept.push(rest);
      this.pending = new Uint8Array(0);
    } else this.pending = rest.slice();
    return kept.length === 1 ? kept[0] : kept.reduce(concat, new Uint8Array(0));
  }

  /** The stream ended: what was held back is output; every mark there was is read. */
  end(): Uint8Array {
    const rest = this.pending;
    this.pending = new Uint8Array(0);
    this.done = true;
    this.settle();
    return rest;
  }

  private hear(word: "started" | "go"): void {
    if (word === "started") this._started = true;
    else if (this._started && this._goAt === null) {
      this._goAt = performance.now();
      // Everything after go is the candidate's: no line of it is read as a mark.
      this.done = true;
      this.settle();
      for (const f of this.waiting.splice(0)) f();
    }
  }
}
