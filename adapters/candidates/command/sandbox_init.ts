/**
 * The host's signal to a sandbox's supervisor: the PID namespace's init (bwrap --as-pid-1),
 * found among the descendants of the attempt's process by its pid of 1 in its own namespace.
 * The host signals it at the time limit and at the grace's end (limits.ts, SUPERVISOR), so the
 * limit holds without a cgroup too: the supervisor's own timer is a process of the candidate's
 * uid, which the candidate can stop, but the init itself it can neither stop nor kill (the
 * kernel drops those signals from inside the namespace), and a signal from the host is not
 * the candidate's to intercept.
 *
 * Deno lets a program read /proc/<pid>/ only with every permission, so a shell of ours looks
 * (/proc/<pid>/task/<tid>/children, or every process's PPid where the kernel does not list
 * children) and sends the signal: one process, started only when a candidate is still running
 * at its limit. --allow-run (sh).
 */

/** How deep below the attempt's process the sandbox's init may be (setsid, unshare, sh, setpriv, bwrap). */
const MAX_DEPTH = 6;

/**
 * $1 the attempt's process, $2 the signal: breadth first from $1 (the sandbox's own init,
 * never one the candidate might make beneath it), the first process whose last NSpid is 1
 * gets the signal. Exits 0 when it sent it, 1 when there was none (the sandbox has ended).
 */
const SIGNAL_INIT = `
root=$1; sig=$2; level=$root; depth=0
while [ -n "$level" ] && [ "$depth" -le ${MAX_DEPTH} ]; do
  for p in $level; do
    while read -r key ids; do
      if [ "$key" = NSpid: ]; then
        set -- $ids
        for last; do :; done
        if [ $# -gt 1 ] && [ "$last" = 1 ]; then exec kill -s "$sig" "$p"; fi
        break
      fi
    done 2>/dev/null < /proc/$p/status
  done
  next=""
  for p in $level; do
    if [ -e /proc/$p/task/$p/children ]; then
      for t in /proc/$p/task/*; do
        # The list ends without a newline: read says false and has set kids all the same.
        kids=""; read -r kids 2>/dev/null < $t/children; next="$next $kids"
      done
    else
      for s in /proc/[0-9]*/status; do
        while read -r key v; do
          if [ "$key" = PPid: ]; then
            if [ "$v" = "$p" ]; then q=\${s#/proc/}; next="$next \${q%/status}"; fi
            break
          fi
        done 2>/dev/null < $s
      done
    fi
  done
  level=$next; depth=$((depth + 1))
done
exit 1
`;

/**
 * Sends `signal` (its name without SIG) to the PID-namespace init at or below `root`; true
 * when it was sent.
 */
export async function signalSandboxInit(root: number, signal: string): Promise<boolean> {
  try {
    const { success } = await new Deno.Command("/bin/sh", {
      args: ["-c", SIGNAL_INIT, "dvergr-signal-init", String(root), signal],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    return success;
  } catch {
    return false;
  }
}
