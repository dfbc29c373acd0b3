/**
 * Whether a process of this host still runs. Used to tell a crashed holder (kill -9) from a
 * live one: its worlds, its jobs, its cell leases. Needs --allow-run (/bin/sh): Deno refuses
 * reading /proc without --allow-all.
 */
import type { ProcessTable } from "../../core/ports/process_table.ts";

const ALIVE_SCRIPT = `
if kill -0 "$1" 2>/dev/null; then
  # A zombie (ended, not yet reaped by its parent) does not run.
  case "$(ps -o stat= -p "$1" 2>/dev/null)" in Z*) exit 1;; esac
  exit 0
fi
kill -0 "$1" 2>&1 | grep -qi "not permitted"`;

/**
 * True when process `pid` runs (also as another user), false when it ended or is a zombie.
 * When it cannot tell (no /bin/sh), it says true: nothing of a live process is ever taken.
 */
export async function processAlive(pid: number): Promise<boolean> {
  try {
    const out = await new Deno.Command("/bin/sh", {
      args: ["-c", ALIVE_SCRIPT, "sh", String(pid)],
      stdout: "null",
      stderr: "null",
    }).output();
    return out.success;
  } catch {
    return true;
  }
}

function hostName(): string {
  try {
    return Deno.hostname();
  } catch {
    return "unknown";
  }
}

/** This host's processes (--allow-sys=hostname for the host's name, else "unknown"). */
export const hostProcesses: ProcessTable = {
  self: () => ({ pid: Deno.pid, host: hostName() }),
  alive: processAlive,
};
