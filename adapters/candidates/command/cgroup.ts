/**
 * A cgroup per attempt, where the host lets dvergr make one: the kernel then bounds the
 * memory and the number of processes of everything the candidate starts (however it
 * daemonises), reports when a limit was hit, and lets every process of the attempt be
 * killed at its end, with or without bubblewrap.
 *
 * cgroup v2 is used when dvergr's own cgroup can get a child with the memory and pids
 * controllers; else the cgroup v1 memory and pids hierarchies when they are mounted and
 * writable (as root in many containers). Otherwise there is no cgroup (null) and the
 * caller falls back to rlimits.
 *
 * A sandboxed attempt's candidate gets a cgroup of its own inside the attempt's (`candidate`):
 * the launch shell, still root, makes it and opens its `cgroup.procs` for writing on
 * CANDIDATE_CGROUP_FD; the sandbox's supervisor moves the candidate's first process into it
 * through that descriptor (the kernel checks a migration against the credentials the file was
 * opened with, since 5.16: root's) and closes it before the candidate's command runs. The
 * candidate cannot leave it: its uid can open no cgroup file for writing (root's, 0644), no
 * cgroupfs is mounted in the sandbox, and it cannot mount one. So the host keeps the time
 * limit on it (stopCandidate), whatever the candidate does to the supervisor, which runs as
 * its uid.
 *
 * Permissions: --allow-run (/bin/sh reaches /proc/self/cgroup and /sys/fs/cgroup, which Deno
 * opens only to --allow-all).
 */
import { join } from "node:path";
import { DEFAULT_PATH, hostProgram } from "./command_program.ts";
import { served } from "./shell_server.ts";

/** A cgroup an attempt's processes join (one directory per hierarchy). */
export interface AttemptCgroup {
  version: 1 | 2;
  /**
   * Shell lines that make the cgroup with its limits and move the shell running them into it
   * (exit 125 when they cannot): the first process of the attempt runs them before it execs
   * the rest, so the kernel counts and bounds every descendant. No process of dvergr's own
   * is started for it.
   */
  joinScript: string;
  /**
   * The limits the cgroup hit; then kills every process still in it and removes it. With
   * `removeLater`, that removal is started and not waited for (removingLater): for an attempt
   * whose processes have all ended already, as a sandbox's do with its PID namespace.
   */
  end(removeLater?: boolean): Promise<("memory" | "processes")[]>;
  /** Kills every process still in the cgroup, then removes it (after end(): nothing to do). */
  close(): Promise<void>;
  /**
   * Shell lines for the launch shell (after joinScript, as root, which makes the candidate's
   * cgroup inside this one beside it) that open its `cgroup.procs` for writing on
   * CANDIDATE_CGROUP_FD (exit 125 when they cannot).
   */
  candidateScript: string;
  /**
   * Kills every process of the candidate's cgroup (they cannot leave it; its fork limit is
   * the attempt's, so a bounded loop empties it), then sends SIGCONT to the attempt's other
   * processes (a supervisor the candidate stopped packs the world again). True when the
   * candidate's cgroup had a process.
   */
  stopCandidate(): Promise<boolean>;
}

/** The descriptor on which the sandbox's supervisor finds its candidate's `cgroup.procs`. */
export const CANDIDATE_CGROUP_FD = "7";

/** The candidate's cgroup, inside the attempt's. */
const CANDIDATE = "candidate";

/** A string as one word of a shell command line. */
export function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

const ROOT = "/sys/fs/cgroup";

/**
 * Runs a small shell script: Deno refuses /proc/self and /sys to anything but --allow-all,
 * so the cgroup files are reached through /bin/sh (--allow-run). Returns stdout, or null
 * when the script failed.
 */
async function sh(script: string, ...args: string[]): Promise<string | null> {
  try {
    const out = await new Deno.Command("/bin/sh", {
      args: ["-c", script, "dvergr-cgroup", ...args],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    return out.success ? new TextDecoder().decode(out.stdout) : null;
  } catch {
    return null;
  }
}

type OwnCgroup = { controllers: string[]; path: string };
let own: Promise<OwnCgroup[]> | null = null;

/** Lines of /proc/self/cgroup (the shell's, which is ours): controllers and path. Read once. */
function ownCgroups(): Promise<OwnCgroup[]> {
  own ??= readOwnCgroups();
  return own;
}

/**
 * Prints the file "$1" and, for each further directory, whether its cgroup.subtree_control
 * lists both memory and pids (`yes`/`no` a line), with shell builtins only: asked of the shell
 * server, one request instead of a shell and cat, and a shell and grep or two a directory
 * (this process's start waited for them one after another, ~30 ms of wall here).
 */
const OWN_SCRIPT = `while IFS= read -r l; do echo "$l"; done < "$1"; shift; echo ---
for d in "$@"; do
  c=; { read -r c < "$d/cgroup.subtree_control"; } 2>/dev/null
  case " $c " in *" memory "*) case " $c " in *" pids "*) echo yes; continue;; esac;; esac
  echo no
done`;

/** The answer of OWN_SCRIPT: by the shell server, else by a shell of its own. */
async function askOwn(args: string[]): Promise<string | null> {
  const answer = await served(OWN_SCRIPT, args, true);
  return answer === undefined ? await sh(OWN_SCRIPT, ...args) : answer;
}

async function readOwnCgroups(): Promise<OwnCgroup[]> {
  // The shell server is dvergr's child: in its cgroups, as the subshell that reads /proc/self.
  const text = (await askOwn(["/proc/self/cgroup"]))?.split("---\n")[0] ?? "";
  return text.split("\n").filter((l) => l.includes(":")).map((l) => {
    const [, controllers, ...rest] = l.split(":");
    return { controllers: controllers.split(",").filter((c) => c !== ""), path: rest.join(":") };
  });
}

function counter(text: string | null, key: string): number {
  const m = text?.match(new RegExp(`^${key} (\\d+)$`, "m"));
  return m ? Number(m[1]) : 0;
}

/** Cgroups whose processes had not all been reaped when their attempt ended. */
const leftOver = new Set<string>();

/**
 * Lines that kill what is left in the cgroup directories "$@" and remove them (exit 1: not
 * all within a second), with shell builtins but for rmdir.
 */
function removeScript(v2Kill: boolean): string {
  return `${
    v2Kill ? 'for d in "$@"; do [ -d "$d" ] && echo 1 > "$d/cgroup.kill"; done 2>/dev/null\n' : ""
  }` +
    "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do\n" +
    '  pids=""\n' +
    '  for d in "$@"; do\n' +
    '    [ -f "$d/cgroup.procs" ] || continue\n' +
    '    while read -r p; do pids="$pids $p"; done < "$d/cgroup.procs"\n' +
    "  done\n" +
    '  [ -n "$pids" ] && kill -9 $pids 2>/dev/null\n' +
    '  rmdir "$@" 2>/dev/null\n' +
    '  ok=1; for d in "$@"; do [ -d "$d" ] && ok=0; done\n' +
    '  [ "$ok" = 1 ] && exit 0\n' +
    "  sleep 0.05\n" +
    "done\nexit 1";
}

/**
 * Lines that kill every process of the cgroup directory "$1" until it is empty (a bounded
 * loop: a killed process cannot fork, and the attempt's pids.max bounds what it forked before)
 * — with cgroup.kill first where v2 has it — then send SIGCONT to the processes of the cgroup
 * directories after it. Print 1 when "$1" had a process, else 0.
 */
function stopScript(v2Kill: boolean): string {
  return "c=$1; shift; had=0; i=0\n" +
    'while [ "$i" -lt 200 ]; do\n' +
    '  pids=""\n' +
    '  if [ -f "$c/cgroup.procs" ]; then\n' +
    '    while read -r p; do pids="$pids $p"; done < "$c/cgroup.procs"\n' +
    "  fi\n" +
    '  [ -z "$pids" ] && break\n' +
    (v2Kill ? '  [ "$had" = 0 ] && { echo 1 > "$c/cgroup.kill"; } 2>/dev/null\n' : "") +
    "  had=1\n" +
    "  kill -9 $pids 2>/dev/null\n" +
    "  sleep 0.01\n" +
    "  i=$((i + 1))\n" +
    "done\n" +
    'for d in "$@"; do\n' +
    '  [ -f "$d/cgroup.procs" ] || continue\n' +
    '  while read -r p; do kill -CONT "$p" 2>/dev/null; done < "$d/cgroup.procs"\n' +
    "done\n" +
    'echo "$had"';
}

/** stopCandidate() of an attempt cgroup: `child` the candidate's, `rest` the attempt's. */
async function stopIn(child: string, rest: string[], v2Kill: boolean): Promise<boolean> {
  const out = await sh(stopScript(v2Kill), child, ...rest);
  return out?.trim() === "1";
}

/**
 * The launch shell's line that opens the procs file of the candidate's cgroup `child` (made
 * with the attempt's, by the same mkdir: one process fewer).
 */
function candidateLines(child: string): string {
  // `command` keeps a failed redirection from ending the shell before `exit 125`.
  return `command exec ${CANDIDATE_CGROUP_FD}>${
    shellQuote(join(child, "cgroup.procs"))
  } || exit 125`;
}

/** Lines that print the file "$1" (shell builtins only). */
const PRINT = 'while IFS= read -r l; do echo "$l"; done <';

/**
 * Prints what `events` prints (given `eventArgs`, by default the directories), then removes
 * the cgroup directories: from here when they are
 * empty, as the attempt's end nearly always leaves them (rmdir needs no shell: one process
 * fewer per attempt), else by a shell that kills what is left in them (killing first when v2
 * can) and removes them. A killed process leaves its cgroup only once reaped (by the
 * container's init, which may be slow): what cannot be removed within a second is kept and
 * tried again later. Returns what `events` printed ("" when it printed nothing).
 */
async function endAll(
  dirs: string[],
  events: string,
  v2Kill = false,
  removeLater = false,
  eventArgs = dirs,
): Promise<string> {
  const text = events === "" ? "" : (await readEvents(events, eventArgs)) ?? "";
  const removal = removeAll(dirs, v2Kill);
  if (removeLater) removingLater(dirs, removal);
  else await removal;
  return text;
}

/** Removes the cgroup directories `dirs`, killing what is left in them (see endAll). */
async function removeAll(dirs: string[], v2Kill: boolean): Promise<void> {
  if (removeEmpty(dirs)) return;
  if ((await sh(removeScript(v2Kill), ...dirs)) === null) {
    for (const d of dirs) leftOver.add(d);
  }
}

/** The directories of removals not waited for, until each has ended. */
const pendingRemovals = new Set<string[]>();

/**
 * Lets the removal of `dirs` run on without its attempt: its empty cgroups go at once (the
 * synchronous rmdirs of removeEmpty), but one not empty yet (a process the kernel has not
 * reaped) takes a shell that kills and retries for up to a second. Awaited, the removal held
 * each sandboxed attempt ~6 ms (mean, 200-case job, 4 at a time) after its end, when its rmdirs
 * were asynchronous. Those still under way when the process exits are removed then, as the
 * spare ones are; what cannot be stays for the next process's sweep.
 */
function removingLater(dirs: string[], removal: Promise<void>): void {
  if (pendingRemovals.size === 0 && !removalsAtExit) {
    removalsAtExit = true;
    globalThis.addEventListener("unload", () => {
      for (const d of [...pendingRemovals].flat()) {
        try {
          Deno.removeSync(d);
        } catch {
          // Gone meanwhile, or busy: the sweep of a later start removes it.
        }
      }
    });
  }
  pendingRemovals.add(dirs);
  removal.catch(() => {}).finally(() => pendingRemovals.delete(dirs));
}
let removalsAtExit = false;

/** Resolves once every removal not waited for has ended (tests). */
export async function cgroupRemovalsSettled(): Promise<void> {
  while (pendingRemovals.size > 0) await new Promise((r) => setTimeout(r, 5));
}

/**
 * What the events script prints for `dirs`: by dvergr's shell server (shell_server.ts: no
 * process per attempt), else by a shell of its own.
 */
async function readEvents(events: string, dirs: string[]): Promise<string | null> {
  // Builtins that read and print, no exit: run by the server's shell itself.
  const answer = await served(events, dirs, true);
  return answer === undefined ? await sh(events, ...dirs) : answer;
}

/**
 * Removes the cgroup directories `dirs` (innermost first); false when one is not empty. With
 * synchronous calls: an rmdir of an empty cgroup waits on nothing a candidate controls, and an
 * asynchronous one costs a thread's hand-off more (three cost ~250 us of CPU against ~100 us,
 * measured here on cgroup v1).
 */
function removeEmpty(dirs: string[]): boolean {
  for (const d of dirs) {
    try {
      Deno.removeSync(d);
    } catch (e) {
      // Busy (a process still in it), or refused: the shell's loop kills and removes.
      if (!(e instanceof Deno.errors.NotFound)) return false;
    }
  }
  return true;
}

/**
 * Removes the empty cgroups earlier attempts left: the given ones (this module's own
 * leftovers) and, under the given parents, those of dvergr processes that no longer run
 * (named dvergr-<pid>-…). A cgroup named for a live process, this one included, is never
 * swept: it is empty between its creation and the attempt's process joining it, and
 * another module instance of this process (a `deno test --parallel` worker shares the
 * pid) may be about to use it — removing it would fail that attempt's start.
 */
async function sweep(parents: string[]): Promise<void> {
  const own = [...leftOver];
  leftOver.clear();
  await sh(SWEEP, String(own.length), String(SWEEP_MAX), ...own, ...parents);
}

/** Cgroup directories one sweep removes at most (the next process's sweep takes the rest). */
const SWEEP_MAX = 4000;

/**
 * The sweep's shell: $1 how many of the directories after $2 are this module's own leftovers,
 * $2 how many directories it removes at most, then those leftovers and the parents. It lists
 * what goes (each candidate cgroup before its attempt's) and removes them all with one rmdir:
 * one process, not one per cgroup (300 cgroups a test run's killed processes left cost the
 * next start ~0.5 s of CPU with one each here). `for` lists its words once, so each argument
 * shifted out as it is handled leaves only the list, appended after them.
 */
const SWEEP = `n=$1 max=$2; shift 2; i=0 k=0 all=$#
for d in "$@"; do
  shift
  i=$((i + 1))
  if [ "$i" -le "$n" ]; then set -- "$@" "$d"; k=$((k + 1)); continue; fi
  for c in "$d"/dvergr-*; do [ -d "$c" ] || continue
    pid=\${c##*/dvergr-}; pid=\${pid%%-*}
    kill -0 "$pid" 2>/dev/null && continue
    [ "$k" -ge "$max" ] && { shift $((all - i)); break 2; }
    set -- "$@" "$c/${CANDIDATE}" "$c"
    k=$((k + 2))
  done
done
[ "$#" -eq 0 ] || rmdir -- "$@" 2>/dev/null
exit 0`;

/** The shell lines that write `value` into `file`, failing the script (exit 125) when they cannot. */
function put(file: string, value: string | number): string {
  return `echo ${value} > ${shellQuote(file)} || exit 125`;
}

/** The same, where the file may be absent (swap accounting off): its failure is ignored. */
function mayPut(file: string, value: string | number): string {
  return `{ echo ${value} > ${shellQuote(file)}; } 2>/dev/null`;
}

/** Where this process's cgroup v2 can get children with the memory and pids controllers. */
async function v2Parent(): Promise<string | null> {
  const mine = (await ownCgroups()).find((c) => c.controllers.length === 0);
  if (!mine) return null;
  const parents = [ROOT, join(ROOT, "unified")].map((mount) => join(mount, mine.path));
  const said = (await askOwn(["/dev/null", ...parents]))?.split("---\n")[1]?.split("\n") ?? [];
  return parents.find((_, i) => said[i] === "yes") ?? null;
}

/** The directories of the v2 attempt cgroup `name` under `parent`, in the order they are made. */
function v2Dirs(parent: string, name: string): string[] {
  return [join(parent, name), join(parent, name, CANDIDATE)];
}

function v2Cgroup(parent: string, name: string, memory: number, processes: number, mkdir?: string) {
  const [dir, child] = v2Dirs(parent, name);
  const cgroup: AttemptCgroup = {
    version: 2,
    joinScript: [
      mkdir ?? mkdirLine(v2Dirs(parent, name)),
      put(join(dir, "memory.max"), memory),
      put(join(dir, "pids.max"), processes),
      mayPut(join(dir, "memory.swap.max"), 0),
      put(join(dir, "cgroup.procs"), "$$"),
    ].join("\n"),
    async end(removeLater = false) {
      // One script for every attempt, given the cgroup's name: the shell server is sent it once.
      const text = await endAll(
        [child, dir],
        `d=${shellQuote(parent)}/"$1"; c=$d/${CANDIDATE}\n` +
          `${PRINT} "$d/memory.events"; echo ---; ${PRINT} "$d/pids.events"; echo ---; ` +
          `[ -f "$c/pids.events" ] && ${PRINT} "$c/pids.events"`,
        true,
        removeLater,
        [name],
      );
      const [mem, pids, childPids] = (text || "------").split("---");
      const out: ("memory" | "processes")[] = [];
      if (counter(mem, "oom_kill") > 0) out.push("memory");
      if (counter(pids, "max") + counter(childPids, "max") > 0) out.push("processes");
      return out;
    },
    close: async () => void await endAll([child, dir], "", true),
    candidateScript: candidateLines(child),
    stopCandidate: () => stopIn(child, [dir], true),
  };
  return cgroup;
}

/** Where this process's cgroup v1 memory and pids hierarchies are (null: not both). */
async function v1Parents(): Promise<{ mem: string; pids: string } | null> {
  const mine = await ownCgroups();
  const at = (controller: string) => {
    const c = mine.find((x) => x.controllers.includes(controller));
    return c ? join(ROOT, controller, c.path) : null;
  };
  const mem = at("memory");
  const pids = at("pids");
  return mem === null || pids === null ? null : { mem, pids };
}

/**
 * The directories of the v1 attempt cgroup `name`, in the order they are made: the candidate's
 * cgroup is in the pids hierarchy, which lists and bounds its processes; in the memory
 * hierarchy it stays in the attempt's.
 */
function v1Dirs(parents: { mem: string; pids: string }, name: string): string[] {
  return [join(parents.mem, name), join(parents.pids, name), join(parents.pids, name, CANDIDATE)];
}

function v1Cgroup(
  parents: { mem: string; pids: string },
  name: string,
  memory: number,
  processes: number,
  mkdir?: string,
) {
  const [mem, pids, child] = v1Dirs(parents, name);
  const cgroup: AttemptCgroup = {
    version: 1,
    joinScript: [
      mkdir ?? mkdirLine(v1Dirs(parents, name)),
      put(join(mem, "memory.limit_in_bytes"), memory),
      put(join(pids, "pids.max"), processes),
      // Without swap accounting this file is absent; memory.limit_in_bytes still binds RAM.
      mayPut(join(mem, "memory.memsw.limit_in_bytes"), memory),
      put(join(mem, "cgroup.procs"), "$$"),
      put(join(pids, "cgroup.procs"), "$$"),
    ].join("\n"),
    async end(removeLater = false) {
      // One script for every attempt, given the cgroup's name: the shell server is sent it once.
      const text = await endAll(
        [child, pids, mem],
        `m=${shellQuote(parents.mem)}/"$1"; p=${shellQuote(parents.pids)}/"$1"; ` +
          `c=$p/${CANDIDATE}\n` +
          `${PRINT} "$m/memory.oom_control"; read -r f < "$m/memory.failcnt"; ` +
          `echo "failcnt $f"; echo ---; ${PRINT} "$p/pids.events"; echo ---; ` +
          `[ -f "$c/pids.events" ] && ${PRINT} "$c/pids.events"`,
        false,
        removeLater,
        [name],
      );
      const [memText, pidsText, childPids] = (text || "------").split("---");
      const out: ("memory" | "processes")[] = [];
      const kills = /oom_kill /.test(memText) ? counter(memText, "oom_kill") : null;
      if ((kills ?? counter(memText, "failcnt")) > 0) out.push("memory");
      // A fork refused at the attempt's pids.max counts where the forking process is.
      if (counter(pidsText, "max") + counter(childPids, "max") > 0) out.push("processes");
      return out;
    },
    close: async () => void await endAll([child, pids, mem], ""),
    candidateScript: candidateLines(child),
    stopCandidate: () => stopIn(child, [pids], false),
  };
  return cgroup;
}

/** The line of a join script that makes the cgroup directories `dirs` (exit 125 when it cannot). */
function mkdirLine(dirs: string[]): string {
  return `mkdir ${dirs.map(shellQuote).join(" ")} || exit 125`;
}

/**
 * Makes attempt cgroups of one kind: `mkdir` the join script's line that makes its
 * directories (default: one mkdir of them).
 */
type CgroupMaker = (
  name: string,
  memory: number,
  processes: number,
  mkdir?: string,
) => AttemptCgroup;

/** A kind of attempt cgroup: its version, its maker, and the directories of a name. */
interface CgroupKind {
  version: 1 | 2;
  make: CgroupMaker;
  dirs: (name: string) => string[];
}

/** A shell joins a cgroup of `make` and exits: whether that works here (one probe). */
async function works(make: CgroupMaker): Promise<boolean> {
  const probe = make(`dvergr-${Deno.pid}-probe-${crypto.randomUUID().slice(0, 8)}`, 64 << 20, 64);
  const ok = (await sh(`${probe.joinScript}\nexit 0`)) !== null;
  await probe.close();
  return ok;
}

/** The kind of cgroup this host gives dvergr: v2, else v1, else none. */
async function findMaker(): Promise<CgroupKind | null> {
  const v2 = await v2Parent();
  if (v2 !== null) {
    const make: CgroupMaker = (n, m, p, k) => v2Cgroup(v2, n, m, p, k);
    if (await works(make)) return { version: 2, make, dirs: (n) => v2Dirs(v2, n) };
  }
  const v1 = await v1Parents();
  if (v1 !== null) {
    const make: CgroupMaker = (n, m, p, k) => v1Cgroup(v1, n, m, p, k);
    if (await works(make)) return { version: 1, make, dirs: (n) => v1Dirs(v1, n) };
  }
  return null;
}

/**
 * Cgroups an attempt's launch makes ahead for the next attempts, with the same mkdir as its
 * own (one process for SPARE_CGROUPS + 1 attempts instead of one each).
 */
export const SPARE_CGROUPS = 7;
/** Names of cgroups made (or being made) ahead and not yet used. */
const spareNames: string[] = [];

/** Removes the spare cgroups left when the process ends (the next start sweeps them otherwise). */
function removeSparesAtExit(kind: CgroupKind): void {
  globalThis.addEventListener("unload", () => {
    for (const name of spareNames.splice(0)) {
      for (const d of kind.dirs(name).reverse()) {
        try {
          Deno.removeSync(d);
        } catch {
          // Not made, or refused: the sweep of a later start removes it.
        }
      }
    }
  });
}

/**
 * The cgroup of the next attempt: a spare an earlier launch made ahead, its directories made
 * again only where they are missing (that launch may not have run yet: both use mkdir -p);
 * else a fresh one whose launch also makes SPARE_CGROUPS more. `mkdir`: the program's path
 * (the launch shell, root, then looks nothing up on the attempt's PATH, whose relative entries
 * would name files of the world).
 */
function nextCgroup(
  kind: CgroupKind,
  memory: number,
  processes: number,
  mkdir: string,
): AttemptCgroup {
  const fresh = () => `dvergr-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
  const spare = spareNames.pop();
  if (spare !== undefined) {
    const own = kind.dirs(spare).map(shellQuote);
    return kind.make(
      spare,
      memory,
      processes,
      `[ -d ${own.at(-1)} ] || ${mkdir} -p ${own.join(" ")} || exit 125`,
    );
  }
  if (!spareSweeper) {
    spareSweeper = true;
    removeSparesAtExit(kind);
  }
  const name = fresh();
  const ahead = Array.from({ length: SPARE_CGROUPS }, fresh);
  spareNames.push(...ahead);
  const own = kind.dirs(name).map(shellQuote);
  const all = [...own, ...ahead.flatMap((n) => kind.dirs(n).map(shellQuote))];
  return kind.make(
    name,
    memory,
    processes,
    `${mkdir} -p ${all.join(" ")}; [ -d ${own.at(-1)} ] || exit 125`,
  );
}
let spareSweeper = false;

let usable: ReturnType<typeof findMaker> | null = null;
/** Leftovers of dead dvergr processes are swept once per process. */
let sweeping: Promise<void> | null = null;

/**
 * A cgroup for one attempt with `memoryBytes` and `processes` as its limits, made by the
 * attempt's first process as it joins (joinScript), or null when this host gives dvergr none
 * (checked once per process; `DVERGR_CGROUP=none` turns cgroups off).
 */
export async function openAttemptCgroup(
  memoryBytes: number,
  processes: number,
  env: (name: string) => string | undefined,
): Promise<AttemptCgroup | null> {
  const kind = await readyKind(env);
  if (kind === null) return null;
  if (leftOver.size > 0) await sweep([]);
  const mkdir = shellQuote(hostProgram("mkdir", env("PATH") ?? DEFAULT_PATH));
  return nextCgroup(kind, memoryBytes, processes, mkdir);
}

/**
 * The kind of cgroup this host gives dvergr (null: none, or `DVERGR_CGROUP=none`), found once
 * per process, and the leftovers of dead dvergr processes swept once it is known.
 */
async function readyKind(env: (name: string) => string | undefined): Promise<CgroupKind | null> {
  if (env("DVERGR_CGROUP") === "none") return null;
  usable ??= findMaker();
  const kind = await usable;
  if (kind === null) return null;
  // Not awaited: attempts make cgroups of names of their own, which the sweep never takes;
  // the leftovers of other processes need not be gone before they start (hundreds after a
  // test run's killed processes cost a first attempt ~0.6 s of wall when they had to be).
  sweeping ??= (async () => {
    const mine = await ownCgroups();
    const parents = kind.version === 2
      ? [ROOT, join(ROOT, "unified")].map((m) =>
        join(m, mine.find((c) => c.controllers.length === 0)?.path ?? "/")
      )
      : ["memory", "pids"].map((k) =>
        join(ROOT, k, mine.find((c) => c.controllers.includes(k))?.path ?? "/")
      );
    await sweep(parents);
  })().catch(() => {});
  return kind;
}

/** Resolves once the sweep of dead processes' cgroups this process started has ended. */
export function cgroupsSwept(): Promise<void> {
  return sweeping ?? Promise.resolve();
}

/**
 * Starts finding the cgroup kind and sweeping (readyKind) without waiting: a run's preflight
 * starts it beside its own preparation, so that its first attempts do not wait for the probe's
 * processes one after another. A failure is the first attempt's to meet, as it was.
 */
export function warmAttemptCgroups(env: (name: string) => string | undefined): void {
  readyKind(env).catch(() => {});
}

/**
 * The argv prefix that makes `cgroup` and moves the process into it before it execs the rest
 * (the kernel then counts and bounds every descendant).
 */
export function joinCgroupArgv(cgroup: AttemptCgroup): string[] {
  return ["/bin/sh", "-c", `${cgroup.joinScript}\nexec "$@"`, "dvergr-cgroup"];
}
