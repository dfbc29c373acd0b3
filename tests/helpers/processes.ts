/**
 * Processes of a test's own making, found with `ps`: a process's descendants (each named
 * by its pid and start time, so a reused pid is not mistaken for it) and a bounded wait until
 * they are gone.
 */

/** A process: pid, start time, argv. */
export interface Proc {
  pid: number;
  start: string;
  cmd: string;
}

/** Every live process: pid, parent pid, start time, argv (`ps`: /proc needs every permission). */
function table(): (Proc & { ppid: number })[] {
  const out = new Deno.Command("ps", {
    args: ["-e", "-o", "pid=", "-o", "ppid=", "-o", "lstart=", "-o", "args="],
    env: { LC_ALL: "C" },
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").flatMap((line) => {
    // lstart is five words: "Wed Dec  2 03:19:12 2026".
    const m = line.trim().match(/^(\d+)\s+(\d+)\s+(\S+\s+\S+\s+\d+\s+\S+\s+\d+)\s*(.*)$/);
    return m ? [{ pid: Number(m[1]), ppid: Number(m[2]), start: m[3], cmd: m[4] }] : [];
  });
}

/** Every live descendant of `root`. */
export function descendants(root: number): Proc[] {
  const all = table();
  const children = new Map<number, Proc[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const out: Proc[] = [];
  const todo = [...(children.get(root) ?? [])];
  while (todo.length > 0) {
    const p = todo.pop()!;
    out.push({ pid: p.pid, start: p.start, cmd: p.cmd });
    todo.push(...(children.get(p.pid) ?? []));
  }
  return out;
}

/** The processes of `procs` still alive (same pid, same start time). */
export function alive(procs: Proc[]): Proc[] {
  const now = new Map(table().map((p) => [p.pid, p.start]));
  return procs.filter((p) => now.get(p.pid) === p.start);
}

/**
 * Waits until none of `procs` is alive, looking every 100 ms, for at most `deadlineMs`: the
 * processes still alive then (an empty list as soon as they are gone).
 */
export async function gone(procs: Proc[], deadlineMs: number): Promise<Proc[]> {
  const until = Date.now() + deadlineMs;
  let left = alive(procs);
  while (left.length > 0 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    left = alive(left);
  }
  return left;
}
