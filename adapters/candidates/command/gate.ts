/**
 * One sandboxed attempt at a time where no attempt gets a cgroup of its own.
 *
 * Without a cgroup the only process limit of a `cmd:` candidate is RLIMIT_NPROC, which counts
 * every process of the user: a candidate that forks in a loop would make the next fork of
 * every other attempt running beside it fail (its sandbox cannot start, its program cannot
 * fork), and one candidate must never change another's outcome. So such attempts pass a gate
 * of one: the next starts once the previous one's sandbox (its PID namespace, and with it
 * every process it started) is gone. Attempts with a cgroup, and builtin and model
 * candidates, never pass it and keep running side by side.
 */
import { stderrLog } from "../../system/log.ts";

/** A semaphore of one, left in the order it was asked for. */
export class Gate {
  #held = false;
  #waiting: (() => void)[] = [];

  /**
   * Resolves, once the gate is ours, to the function that gives it back (more calls do
   * nothing); to null when `signal` is aborted before that (the gate is then not taken).
   */
  enter(signal: AbortSignal): Promise<(() => void) | null> {
    if (signal.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      const admit = () => {
        signal.removeEventListener("abort", onAbort);
        this.#held = true;
        let given = false;
        resolve(() => {
          if (given) return;
          given = true;
          this.#leave();
        });
      };
      const onAbort = () => {
        this.#waiting = this.#waiting.filter((w) => w !== admit);
        resolve(null);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      if (this.#held) this.#waiting.push(admit);
      else admit();
    });
  }

  /** How many wait for the gate. */
  get waiting(): number {
    return this.#waiting.length;
  }

  #leave(): void {
    this.#held = false;
    this.#waiting.shift()?.();
  }
}

/** The gate of this process's sandboxed attempts that have no cgroup. */
export const unboundedAttempts = new Gate();

let noted = false;

/** The note said once per process when attempts pass the gate: why, and what lifts it. */
export function serialNote(env: (name: string) => string | undefined): string {
  const why = env("DVERGR_CGROUP") === "none"
    ? "DVERGR_CGROUP=none turns the attempts' cgroups off"
    : "this host gives dvergr no cgroup for an attempt (no cgroup v2 delegated to it with " +
      "the memory and pids controllers, no writable cgroup v1 memory and pids hierarchies)";
  return `note: sandboxed command candidates run one attempt at a time, whatever --parallel ` +
    `says: ${why}, so their only process limit is RLIMIT_NPROC, which counts every process ` +
    `of the user and would let one candidate's forks fail another's attempts. Builtin and ` +
    `model candidates still run side by side. To run them in parallel, run dvergr as root, ` +
    `or in a cgroup v2 delegated to its user whose subtree_control enables memory and pids`;
}

/** Says serialNote() on stderr, the first time only. */
export function noteSerialOnce(env: (name: string) => string | undefined): void {
  if (noted) return;
  noted = true;
  stderrLog(serialNote(env));
}
