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
 * Permissions: --allow-run (/bin/sh: mkfifo, cat), --allow-read and --allow-write of the
 * attempt's directory.
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

/**
 * The reader's shell: makes the FIFO, opens it for reading and writing (an open that never
 * waits, and keeps the FIFO open for the sandbox's writer, whose own open then never waits
 * either), has `cat` copy it to the shell's stdout, says `made`, and then waits on its stdin,
 * a pipe only dvergr holds the other end of. When that pipe ends — dvergr closed it, or dvergr
 * died, however (kill -9 included) — the shell kills `cat` and exits: no process of ours
 * reading marks outlives dvergr.
 */
const READER = `mkfifo -m 600 "$1" || exit 1
exec 4<>"$1"
cat <&4 4<&- &
c=$!
exec 4<&-
echo made
read -r _
kill -9 "$c" 2>/dev/null
exit 0`;

/** The line close() writes after the sandbox's marks: when it comes back, all have. */
const END = "end";

/**
 * Makes the FIFO of one attempt in `dir` and starts reading it. A small process of ours makes
 * it and copies what the sandbox writes to a pipe this process reads: a read of the FIFO itself
 * would hold one of Deno's few blocking threads for the whole attempt, and a few dozen attempts
 * at once would hold them all (every file operation of dvergr would then wait). That process
 * cannot outlive dvergr (READER).
 */
export async function openSandboxMarks(dir: string): Promise<SandboxMarks> {
  const path = `${dir}/marks-${crypto.randomUUID()}`;
  const reader = new Deno.Command("/bin/sh", {
    args: ["-c", READER, "dvergr-marks", path],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lifeline = reader.stdin.getWriter();
  let started = false;
  let goAt: number | null = null;
  const waiting: (() => void)[] = [];
  let made: (ok: boolean) => void = () => {};
  const ready = new Promise<boolean>((r) => made = r);
  let heardEnd: () => void = () => {};
  const ended = new Promise<void>((r) => heardEnd = r);
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
          } else if (line === END && closed) heardEnd();
          else if (line === "started") started = true;
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
      heardEnd();
    }
  })();
  const stderr = new Response(reader.stderr).text();
  /** Ends the lifeline: the shell kills `cat` and exits. */
  const stop = async () => {
    await lifeline.close().catch(() => {});
    await reader.status;
    await reading;
  };
  if (!(await ready)) {
    await stop();
    throw new Error(`mkfifo failed: ${(await stderr).trim()}`);
  }
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
      // The sandbox has ended, so what it wrote is in the FIFO before END: once `cat` has
      // copied END back every mark has been read, however long the machine takes to run it
      // (no timer decides it). Read and write: an open that never waits, even were the
      // reader gone (then the reading has ended too).
      const written = await Deno.open(path, { read: true, write: true }).then(async (f) => {
        try {
          await f.write(new TextEncoder().encode(`\n${END}\n`));
          return true;
        } finally {
          f.close();
        }
      }).catch(() => false);
      if (written) await ended;
      await stop();
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
