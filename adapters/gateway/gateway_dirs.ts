/**
 * The per-attempt directories of the world gateway's sockets (`dvg-<pid>-<random>` in the
 * temp dir), and the sweep of those a killed dvergr left: a process killed with SIGKILL
 * cannot remove its own, and nothing else would. The pid in the name says whose it is; a
 * directory whose process is gone is removed by the next process's first gateway. A pid taken
 * again by another process keeps the directory until that one ends (harmless). Directories
 * of the older form (`dvg-<random>`, no pid) go once a day old.
 *
 * Deno reads /proc only with every permission, so one shell tells which pids are gone:
 * --allow-run (sh), --allow-read and --allow-write of the temp dir.
 */
import { join } from "../../core/path.ts";

/** The prefix of this process's gateway directories. */
export function gatewayDirPrefix(): string {
  return `dvg-${Deno.pid}-`;
}

const OLD_FORM_MS = 24 * 60 * 60 * 1000;

/** Prints each pid among its arguments that names no live process. */
const GONE = 'for p; do [ -d "/proc/$p" ] || echo "$p"; done';

/** Which of `pids` no longer run (none when the shell cannot be started). */
async function gone(pids: number[]): Promise<Set<number>> {
  if (pids.length === 0) return new Set();
  try {
    const out = await new Deno.Command("/bin/sh", {
      args: ["-c", GONE, "dvergr-sweep", ...pids.map(String)],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    if (!out.success) return new Set();
    return new Set(new TextDecoder().decode(out.stdout).split("\n").filter(Boolean).map(Number));
  } catch {
    return new Set();
  }
}

/**
 * Removes the gateway directories in `tmp` that a dead process left (best effort: what
 * cannot be read or removed stays). Resolves to how many went.
 */
export async function sweepGatewayDirs(tmp: string, now = Date.now()): Promise<number> {
  const owned = new Map<string, number>();
  const old: string[] = [];
  try {
    for await (const e of Deno.readDir(tmp)) {
      if (!e.isDirectory || !e.name.startsWith("dvg-")) continue;
      const m = /^dvg-([0-9]+)-/.exec(e.name);
      if (m) {
        const pid = Number(m[1]);
        if (pid !== Deno.pid) owned.set(e.name, pid);
      } else old.push(e.name);
    }
  } catch {
    return 0;
  }
  const dead = await gone([...new Set(owned.values())]);
  const doomed = [...owned].filter(([, pid]) => dead.has(pid)).map(([name]) => name);
  for (const name of old) {
    const info = await Deno.lstat(join(tmp, name)).catch(() => null);
    if (info?.mtime && now - info.mtime.getTime() > OLD_FORM_MS) doomed.push(name);
  }
  let removed = 0;
  for (const name of doomed) {
    await Deno.remove(join(tmp, name), { recursive: true }).then(() => removed++, () => {});
  }
  return removed;
}

let swept: Promise<unknown> | null = null;

/** Sweeps `tmp` once per process (the first gateway's start waits for it: a few ms). */
export function sweepGatewayDirsOnce(tmp: string): Promise<unknown> {
  swept ??= sweepGatewayDirs(tmp).catch(() => 0);
  return swept;
}
