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
 * Permissions: --allow-run (/bin/sh: mkfifo, cat), --allow-write of the attempt's directory.
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

/**
 * How long close() waits for the reader past the sandbox's end: only a process of the sandbox
 * that outlived it (none should) keeps the FIFO open that long.
 */
const CLOSE_BACKSTOP_MS = 60_000;

/** At most this much of the FIFO is read: two short marks are all it should carry. */
const MAX_MARK_BYTES = 4096;

/**
 * Makes the FIFO of one attempt in `dir` and starts reading it. A small process of ours makes
 * it and copies what the sandbox writes to a pipe this process reads: a read of the FIFO itself
 * would hold one of Deno's few blocking threads for the whole attempt, and a few dozen attempts
 * at once would hold them all (every file operation of dvergr would then wait).
 */
export async function openSandboxMarks(dir: string): Promise<SandboxMarks> {
  const path = `${dir}/marks-${crypto.randomUUID()}`;
  const reader = new Deno.Command("/bin/sh", {
    args: ["-c", 'mkfifo -m 600 "$1" || exit 1; echo made; exec cat "$1"', "dvergr-marks", path],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let started = false;
  let goAt: number | null = null;
  const waiting: (() => void)[] = [];
  let made: (ok: boolean) => void = () => {};
  const ready = new Promise<boolean>((r) => made = r);
  let closed = false;
  const reading = (async () => {
    let text = "";
    let total = 0;
    let first = true;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of reader.stdout) {
        total += chunk.length;
        if (total > MAX_MARK_BYTES + 5) break;
        text += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = text.indexOf("\n")) >= 0) {
          const line = text.slice(0, nl).trim();
          text = text.slice(nl + 1);
          if (first) {
            first = false;
            made(line === "made");
          } else if (line === "started") started = true;
          else if (line === "go" && started && goAt === null) {
            goAt = performance.now();
            for (const f of waiting.splice(0)) f();
          }
        }
      }
    } catch {
      // The reader was killed: what was read is kept.
    } finally {
      made(false);
    }
  })();
  const stderr = new Response(reader.stderr).text();
  if (!(await ready)) {
    try {
      reader.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await reader.status;
    throw new Error(`mkfifo failed: ${(await stderr).trim()}`);
  }
  const stop = () => {
    try {
      reader.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  };
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
      // Once the sandbox's processes are gone the reader sees the FIFO's end and exits after
      // copying every mark, however long the machine takes to run it: no timer decides it.
      // A sandbox that never opened the FIFO leaves the reader waiting in its open; a writer
      // of ours that opens and closes the FIFO ends that wait (and, should the reader have
      // exited meanwhile, is itself stopped once it has).
      let exited = false;
      const status = reader.status.finally(() => exited = true);
      await Promise.resolve();
      if (!exited) {
        const opener = new Deno.Command("/bin/sh", {
          args: ["-c", ': > "$1"', "dvergr-marks", path],
          stdin: "null",
          stdout: "null",
          stderr: "null",
        }).spawn();
        // A process of the sandbox that outlived it holding the FIFO: a bug of ours, bounded.
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([status, new Promise((r) => timer = setTimeout(r, CLOSE_BACKSTOP_MS))]);
        clearTimeout(timer);
        try {
          opener.kill("SIGKILL");
        } catch {
          // Already gone.
        }
        await opener.status;
      }
      stop();
      await reader.status;
      await reading;
      await stderr.catch(() => "");
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
