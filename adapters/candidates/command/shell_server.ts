/**
 * One long-lived /bin/sh of dvergr's that runs small scripts on request, each in a subshell
 * of its own (a fork, no exec), instead of a /bin/sh spawned for each: the cgroup events an
 * attempt's end reads (cgroup.ts), which Deno cannot read itself (it opens /sys only to
 * --allow-all). Measured here, a spawned shell per read cost ~1 ms of dvergr's CPU more than a
 * request to this one.
 *
 * For scripts that only read and print: they share one queue (a slow one would hold the others
 * up), and `$$` in them is the server's pid, not theirs. The server is started at the first
 * request and again after it ended; it ends when dvergr closes its stdin (at dvergr's end too:
 * the kernel closes it). A request is lines on its stdin: the script's number, its line count
 * and its lines (the first time: the server defines it as a function of that number; 0 and none
 * after), the arguments' count, one argument a line; its answer is what the script printed,
 * then a line with a token of 128 random bits and `ok` or `fail` (its exit status). The shell's
 * `read` takes a byte a system call, so a script is sent once: an attempt's end sent ~475 bytes,
 * its cgroup events script and their paths, where its name alone is ~30 now (cgroup.ts). An
 * argument with a newline in it, or a server that cannot start or ended mid-answer, is answered
 * `undefined`: the caller then spawns a shell as before.
 *
 * Permissions: --allow-run (/bin/sh).
 */

import { randomToken } from "./command_program.ts";

/**
 * The server: $1 its token (its own variables and functions are named _dvg_…). A script is
 * defined as the function _dvg_f<number> in the server's shell, its body the script in a
 * subshell (`( … )`), so its variables and its exit stay its own; or, asked `inShell`, in
 * braces: run by the server's shell itself, no fork (see served()).
 */
const SERVER = `_dvg_t=$1
while IFS= read -r _dvg_k; do
  IFS= read -r _dvg_n || exit 0
  if [ "$_dvg_n" -gt 0 ]; then
    _dvg_s=
    while [ "$_dvg_n" -gt 0 ] && IFS= read -r _dvg_l; do _dvg_s="$_dvg_s$_dvg_l
"; _dvg_n=$((_dvg_n - 1)); done
    eval "_dvg_f$_dvg_k() $_dvg_s"
  fi
  IFS= read -r _dvg_n || exit 0
  set --
  while [ "$_dvg_n" -gt 0 ] && IFS= read -r _dvg_l; do set -- "$@" "$_dvg_l"; _dvg_n=$((_dvg_n - 1)); done
  if "_dvg_f$_dvg_k" "$@" </dev/null 2>/dev/null; then _dvg_r=ok; else _dvg_r=fail; fi
  printf '\\n%s %s\\n' "$_dvg_t" "$_dvg_r"
done`;

interface Server {
  child: Deno.ChildProcess;
  writer: WritableStreamDefaultWriter<Uint8Array>;
  reader: ReadableStreamDefaultReader<Uint8Array>;
  token: string;
  /** The scripts it has defined, by their number. */
  defined: Map<string, number>;
}

/** Bytes of requests written to servers (tests: a script is sent once). */
let sent = 0;
export function sentBytes(): number {
  return sent;
}

let server: Server | null = null;
let queue: Promise<unknown> = Promise.resolve();
const encoder = new TextEncoder();

/**
 * What `script` printed run with `args` ($1…) by the server, or null when it failed (a
 * non-zero status); undefined when the server cannot answer it (see the module's comment).
 * `inShell`: run by the server's own shell, without the subshell's fork and exit (an attempt's
 * end read its cgroup events in one: ~0.35 ms of CPU an attempt, 200-case job here), for a
 * script that only reads files and prints with builtins, sets no variable named _dvg_… and
 * never exits (dash does not exit on a redirection that fails, nor on a `read` that does).
 */
export function served(
  script: string,
  args: string[],
  inShell = false,
): Promise<string | null | undefined> {
  const run = queue.then(() => ask(script, args, inShell));
  queue = run.catch(() => {});
  return run;
}

function start(): Server | null {
  const token = randomToken();
  try {
    const child = new Deno.Command("/bin/sh", {
      args: ["-c", SERVER, "dvergr-shell", token],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    // dvergr does not wait for it: it ends with its stdin.
    child.unref();
    return {
      child,
      writer: child.stdin.getWriter(),
      reader: child.stdout.getReader(),
      token,
      defined: new Map(),
    };
  } catch {
    return null;
  }
}

function stop(s: Server): void {
  if (server === s) server = null;
  s.writer.close().catch(() => {});
  s.reader.cancel().catch(() => {});
}

async function ask(
  script: string,
  args: string[],
  inShell: boolean,
): Promise<string | null | undefined> {
  if (args.some((a) => a.includes("\n"))) return undefined;
  const s = server ??= start();
  if (s === null) return undefined;
  const body = inShell ? `{\n${script}\n}` : `(\n${script}\n)`;
  let id = s.defined.get(body);
  const define = id === undefined ? body.split("\n") : [];
  if (id === undefined) s.defined.set(body, id = s.defined.size);
  const request = [String(id), String(define.length), ...define, String(args.length), ...args]
    .join("\n");
  sent += request.length + 1;
  // Waited for while it answers (unref'd, its pipes would not keep dvergr's loop alive).
  s.child.ref();
  try {
    await s.writer.write(encoder.encode(request + "\n"));
    const decoder = new TextDecoder();
    let text = "";
    for (;;) {
      const { value, done } = await s.reader.read();
      if (done) throw new Error("the shell server ended");
      text += decoder.decode(value, { stream: true });
      for (const r of ["ok", "fail"]) {
        const end = `\n${s.token} ${r}\n`;
        if (text.endsWith(end)) return r === "ok" ? text.slice(0, -end.length) : null;
      }
    }
  } catch {
    stop(s);
    return undefined;
  } finally {
    s.child.unref();
  }
}
