/**
 * The host's end of a sandboxed attempt's marks: a FIFO in the attempt's own directory
 * (outside the sandbox) on which the supervisor says, in order, `started` (the sandbox and its
 * seeds are ready) and `go` (the candidate's own command is starting now). Only our processes
 * ever hold its descriptor: the supervisor closes it before the candidate runs, bwrap's init
 * closes it, and the candidate cannot open the host's file. So what the candidate does cannot
 * undo a mark (a truncated or replaced pack does not make a sandbox that never started), and
 * the marks tell the host when the candidate's time starts (dvergr's setup, the gateway's
 * forwarder and the capture are not charged to it).
 *
 * Permissions: --allow-run (mkfifo), --allow-read/--allow-write of the attempt's directory.
 */

/** The descriptor the sandbox's supervisor writes its marks to. */
export const MARKS_FD = "8";

/** What the supervisor said, as it says it. */
export interface SandboxMarks {
  /** The FIFO, for `withMarksFd`. */
  path: string;
  /** The supervisor ran (bwrap built the sandbox, the writable directories are seeded). */
  readonly started: boolean;
  /** When the candidate's own command started (performance.now()), else null. */
  readonly goAt: number | null;
  /** Calls `f` when the candidate's command starts (at once when it has). */
  onGo(f: () => void): void;
  /** Reads what is left, stops reading and removes the FIFO. */
  close(): Promise<void>;
}

/** At most this much of the FIFO is read: two short marks are all it should carry. */
const MAX_MARK_BYTES = 4096;

/** Makes the FIFO of one attempt in `dir` and starts reading it. */
export async function openSandboxMarks(dir: string): Promise<SandboxMarks> {
  const path = `${dir}/marks-${crypto.randomUUID()}`;
  const made = await new Deno.Command("mkfifo", { args: ["-m", "600", path], stderr: "piped" })
    .output();
  if (!made.success) {
    throw new Error(`mkfifo failed: ${new TextDecoder().decode(made.stderr).trim()}`);
  }
  // Opened read-write first, so that opening never blocks; read through a second handle, as a
  // handle does one operation at a time (our write of "end", which ends the reading, would
  // wait for the read it is meant to end).
  const writer = await Deno.open(path, { read: true, write: true });
  const fifo = await Deno.open(path, { read: true });
  let started = false;
  let goAt: number | null = null;
  const waiting: (() => void)[] = [];
  let text = "";
  let ended = false;
  let closed = false;
  const reading = (async () => {
    const buf = new Uint8Array(512);
    let total = 0;
    const decoder = new TextDecoder();
    while (!ended && total < MAX_MARK_BYTES) {
      let n: number | null;
      try {
        n = await fifo.read(buf);
      } catch {
        return;
      }
      if (n === null) return;
      total += n;
      text += decoder.decode(buf.subarray(0, n), { stream: true });
      let nl: number;
      while ((nl = text.indexOf("\n")) >= 0) {
        const line = text.slice(0, nl).trim();
        text = text.slice(nl + 1);
        if (line === "end") ended = true;
        else if (line === "started") started = true;
        else if (line === "go" && started && goAt === null) {
          goAt = performance.now();
          for (const f of waiting.splice(0)) f();
        }
      }
    }
  })();
  return {
    path,
    get started() {
      return started;
    },
    get goAt() {
      return goAt;
    },
    onGo(f) {
      if (goAt !== null) f();
      else waiting.push(f);
    },
    async close() {
      if (closed) return;
      closed = true;
      // Everything the sandbox wrote is ahead of our "end" in the FIFO.
      await writer.write(new TextEncoder().encode("\nend\n")).catch(() => {});
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([reading, new Promise((r) => timer = setTimeout(r, 1000))]);
      clearTimeout(timer);
      ended = true;
      for (const f of [fifo, writer]) {
        try {
          f.close();
        } catch {
          // Already closed.
        }
      }
      await reading;
      await Deno.remove(path).catch(() => {});
    },
  };
}

/**
 * Runs `argv` with the marks FIFO `path` open for writing on MARKS_FD (exit 125 when it cannot
 * be opened: no mark, so a sandbox that did not start).
 */
export function withMarksFd(path: string, argv: string[]): string[] {
  return [
    "/bin/sh",
    "-c",
    // `command` keeps a failed redirection from ending the shell before `exit 125`.
    `command exec ${MARKS_FD}>"$1" || exit 125; shift; exec "$@"`,
    "dvergr-marks",
    path,
    ...argv,
  ];
}
