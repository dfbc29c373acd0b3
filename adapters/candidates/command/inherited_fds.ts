/**
 * Descriptors dvergr inherited and would pass on to its candidates.
 *
 * Every descriptor dvergr opens itself is close-on-exec (Deno's runtime opens them so), but
 * what the process that started dvergr left open without that flag (a CI runner's pipe, a
 * shell's `exec 7</some/dir`) is passed to every program dvergr starts, and bubblewrap
 * passes its own open descriptors on to the sandboxed command by design. A candidate could
 * then read or write through them past every wall of its sandbox (a directory descriptor
 * from outside its mount namespace is a way out: `openat` relative to it). So the launch
 * shell closes them before anything of the sandbox starts.
 *
 * Which ones: a shell, dvergr's child, reads /proc/$PPID/fdinfo (Deno reads /proc only with
 * every permission) once per process and names each descriptor above stderr whose flags lack
 * O_CLOEXEC. dash closes only descriptors 0-9 (`exec 12>&-` is a command named 12 to it), so a
 * higher one is closed by a bash that then execs the launch; without bash a candidate is
 * refused before any cell.
 *
 * Permissions: --allow-run (/bin/sh, bash).
 */
import { DvergrError } from "../../../core/errors.ts";
import { hostProgram } from "./command_program.ts";

/** The flag in /proc/<pid>/fdinfo/<fd>'s octal `flags:` field. */
const O_CLOEXEC = 0o2000000;

const PROBE = `for f in /proc/$PPID/fdinfo/[0-9]*; do
  n=\${f##*/}
  [ "$n" -gt 2 ] || continue
  while read -r k v; do
    if [ "$k" = flags: ]; then
      [ $(( 0$v & ${O_CLOEXEC} )) -eq 0 ] && echo "$n"
      break
    fi
  done < "$f" 2>/dev/null
done
exit 0`;

let probe: Promise<number[]> | null = null;

/** This process's descriptors above stderr that an exec passes on (read once per process). */
export function inheritedFds(): Promise<number[]> {
  probe ??= (async () => {
    const failed = (why: string) =>
      new DvergrError(
        "IO",
        "Cannot tell which open descriptors dvergr would pass to its candidates: " +
          `reading /proc/${Deno.pid}/fdinfo failed (${why})`,
        { hint: "dvergr needs /bin/sh and /proc to sandbox command candidates" },
      );
    let out: Deno.CommandOutput;
    try {
      out = await new Deno.Command("/bin/sh", {
        args: ["-c", PROBE, "dvergr-fds"],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
    } catch (e) {
      throw failed(`/bin/sh: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (!out.success) {
      throw failed(new TextDecoder().decode(out.stderr).trim() || `exit ${out.code}`);
    }
    const text = new TextDecoder().decode(out.stdout);
    return text.split("\n").filter((l) => /^[0-9]+$/.test(l)).map(Number);
  })();
  return probe;
}

/**
 * How the launch closes `fds`: a first line of its /bin/sh script (descriptors 3-9), or a bash
 * that closes them all and execs the launch (null line), so that the launch's shell, and what
 * it says, are the same whichever descriptors dvergr was started with.
 */
export interface FdClosing {
  /** Put before the launch shell's argv. */
  prefix: string[];
  /** The launch shell's first line. */
  line: string | null;
}

/** How to close `fds` (see FdClosing). Throws when one is above 9 and there is no bash. */
export function fdClosing(fds: number[], shell: string | null): FdClosing {
  if (fds.length === 0) return { prefix: [], line: null };
  const line = `exec ${fds.map((n) => `${n}>&-`).join(" ")}`;
  if (fds.every((n) => n <= 9)) return { prefix: [], line };
  if (shell === null) {
    throw new DvergrError(
      "USAGE",
      `dvergr was started with open descriptors ${fds.join(", ")} that its sandboxed ` +
        "candidates would inherit, and without bash it cannot close those above 9",
      {
        hint: `Start dvergr without them (in the shell that starts it: ${
          fds.map((n) => `exec ${n}>&-`).join("; ")
        } in bash), or install bash`,
        details: { fds },
      },
    );
  }
  return { prefix: [shell, "-c", `${line}\nexec "$@"`, "dvergr-fds"], line: null };
}

/** fdClosing() of this process's inherited descriptors, with bash from `path` (dvergr's PATH). */
export async function launchFdClosing(path: string): Promise<FdClosing> {
  const bash = hostProgram("bash", path);
  return fdClosing(await inheritedFds(), bash.startsWith("/") ? bash : null);
}
