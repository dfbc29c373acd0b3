import { terminalSafe } from "../core/terminal_safe.ts";

/**
 * What a subcommand may touch: its output streams, environment and working
 * directory. Passed in (never read from globals) so commands are testable in-process.
 */
export interface CliContext {
  /**
   * Writes to stdout with control characters (but tab and newline) and bidi overrides shown
   * as escapes (terminalSafe()): what a candidate or a bundle wrote cannot drive the terminal.
   */
  stdout(text: string): void;
  /** Writes to stderr, filtered as stdout is. */
  stderr(text: string): void;
  /**
   * Writes as they are: a file's text that was asked for (`export` to stdout, `room read`)
   * and the progress bar's own terminal controls, which filters what it shows itself.
   */
  raw: { stdout(text: string): void; stderr(text: string): void };
  /** True when stdout is a terminal (colour). */
  isTerminal: boolean;
  /** True when stderr is a terminal: progress, which goes there, redraws a bar in place. */
  stderrIsTerminal: boolean;
  env(name: string): string | undefined;
  cwd: string;
}

/**
 * A subcommand module: help text as data, its flags (the parseArgs spec, so a test can
 * prove the help lists every flag), a pure parse() of its arguments (it throws usage errors
 * and touches nothing) and run(), which does the work and returns the exit status.
 */
export interface Command<O = unknown> {
  HELP: string;
  OPTIONS: Record<string, { type: "string" | "boolean"; multiple?: boolean; short?: string }>;
  parse(args: string[]): O;
  run(ctx: CliContext, opts: O): Promise<number>;
}

/**
 * Thrown by a write to a stdout that the reader closed (`dvergr cases … | head -1`): the
 * command stops, and main ends quietly, as a pipeline expects.
 */
export class StdoutClosed extends Error {
  constructor() {
    super("stdout was closed by its reader");
    this.name = "StdoutClosed";
  }
}

/** A context on the real process streams. */
export function processContext(): CliContext {
  const enc = new TextEncoder();
  let stdoutClosed = false;
  let stderrClosed = false;
  const raw: CliContext["raw"] = {
    stdout: (t) => {
      if (stdoutClosed) throw new StdoutClosed();
      try {
        writeAll(Deno.stdout, enc.encode(t));
      } catch (e) {
        if (!(e instanceof Deno.errors.BrokenPipe)) throw e;
        stdoutClosed = true;
        throw new StdoutClosed();
      }
    },
    stderr: (t) => {
      // Progress and errors to a closed stderr are dropped: nobody is there to read them.
      if (stderrClosed) return;
      try {
        writeAll(Deno.stderr, enc.encode(t));
      } catch (e) {
        if (!(e instanceof Deno.errors.BrokenPipe)) throw e;
        stderrClosed = true;
      }
    },
  };
  return {
    stdout: (t) => raw.stdout(terminalSafe(t)),
    stderr: (t) => raw.stderr(terminalSafe(t)),
    raw,
    isTerminal: Deno.stdout.isTerminal(),
    stderrIsTerminal: Deno.stderr.isTerminal(),
    env: (name) => Deno.env.get(name),
    cwd: Deno.cwd(),
  };
}

function writeAll(w: { writeSync(p: Uint8Array): number }, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += w.writeSync(bytes.subarray(off));
}

/** A context that collects output in memory, for tests. */
export function memoryContext(
  opts: { env?: Record<string, string>; cwd?: string } = {},
): CliContext & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (t) => out.push(terminalSafe(t)),
    stderr: (t) => err.push(terminalSafe(t)),
    raw: { stdout: (t) => out.push(t), stderr: (t) => err.push(t) },
    isTerminal: false,
    stderrIsTerminal: false,
    env: (name) => opts.env?.[name],
    cwd: opts.cwd ?? Deno.cwd(),
  };
}
