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
 * Permissions: --allow-run (/bin/sh reaches /proc/self/cgroup and /sys/fs/cgroup, which Deno
 * opens only to --allow-all).
 */
import { join } from "node:path";

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
  /** The limits the cgroup hit; then kills every process still in it and removes it. */
  end(): Promise<("memory" | "processes")[]>;
  /** Kills every process still in the cgroup, then removes it (after end(): nothing to do). */
  close(): Promise<void>;
}

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

async function readOwnCgroups(): Promise<OwnCgroup[]> {
  const text = (await sh("cat /proc/self/cgroup")) ?? "";
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
  return `${v2Kill ? 'echo 1 > "$1/cgroup.kill" 2>/dev/null\n' : ""}` +
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

/** Lines that print the file "$1" (shell builtins only). */
const PRINT = 'while IFS= read -r l; do echo "$l"; done <';

/**
 * Prints what `events` prints, then kills what is left in the cgroup directories (killing
 * first when v2 can) and removes them. A killed process leaves its cgroup only once reaped (by
 * the container's init, which may be slow): what cannot be removed within a second is kept
 * and tried again later. Returns what `events` printed ("" when it printed nothing).
 */
async function endAll(dirs: string[], events: string, v2Kill = false): Promise<string> {
  const out = await sh(
    `${events}\necho "---removed"\n${removeScript(v2Kill)}`,
    ...dirs,
  );
  const removed = out !== null;
  const text = out ?? "";
  if (!removed) { for (const d of dirs) leftOver.add(d); }
  const at = text.lastIndexOf("---removed");
  return at >= 0 ? text.slice(0, at) : text;
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
  await sh(
    'n=$1; shift; i=0\nfor d in "$@"; do i=$((i + 1))\n' +
      '  if [ "$i" -le "$n" ]; then rmdir "$d" 2>/dev/null; continue; fi\n' +
      '  for c in "$d"/dvergr-*; do [ -d "$c" ] || continue\n' +
      "    pid=${c##*/dvergr-}; pid=${pid%%-*}\n" +
      '    kill -0 "$pid" 2>/dev/null || rmdir "$c" 2>/dev/null\n' +
      "  done\ndone",
    String(own.length),
    ...own,
    ...parents,
  );
}

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
  for (const mount of [ROOT, join(ROOT, "unified")]) {
    const parent = join(mount, mine.path);
    const ok = await sh(
      'grep -qw memory "$1/cgroup.subtree_control" && grep -qw pids "$1/cgroup.subtree_control"',
      parent,
    );
    if (ok !== null) return parent;
  }
  return null;
}

function v2Cgroup(parent: string, name: string, memory: number, processes: number) {
  const dir = join(parent, name);
  const cgroup: AttemptCgroup = {
    version: 2,
    joinScript: [
      `mkdir ${shellQuote(dir)} || exit 125`,
      put(join(dir, "memory.max"), memory),
      put(join(dir, "pids.max"), processes),
      mayPut(join(dir, "memory.swap.max"), 0),
      put(join(dir, "cgroup.procs"), "$$"),
    ].join("\n"),
    async end() {
      const text = await endAll(
        [dir],
        `${PRINT} "$1/memory.events"; echo ---; ${PRINT} "$1/pids.events"`,
        true,
      );
      const [mem, pids] = (text || "---").split("---");
      const out: ("memory" | "processes")[] = [];
      if (counter(mem, "oom_kill") > 0) out.push("memory");
      if (counter(pids, "max") > 0) out.push("processes");
      return out;
    },
    close: async () => void await endAll([dir], "", true),
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

function v1Cgroup(
  parents: { mem: string; pids: string },
  name: string,
  memory: number,
  processes: number,
) {
  const mem = join(parents.mem, name);
  const pids = join(parents.pids, name);
  const cgroup: AttemptCgroup = {
    version: 1,
    joinScript: [
      `mkdir ${shellQuote(mem)} ${shellQuote(pids)} || exit 125`,
      put(join(mem, "memory.limit_in_bytes"), memory),
      put(join(pids, "pids.max"), processes),
      // Without swap accounting this file is absent; memory.limit_in_bytes still binds RAM.
      mayPut(join(mem, "memory.memsw.limit_in_bytes"), memory),
      put(join(mem, "cgroup.procs"), "$$"),
      put(join(pids, "cgroup.procs"), "$$"),
    ].join("\n"),
    async end() {
      const text = await endAll(
        [pids, mem],
        `${PRINT} "$2/memory.oom_control"; read -r f < "$2/memory.failcnt"; ` +
          `echo "failcnt $f"; echo ---; ${PRINT} "$1/pids.events"`,
      );
      const [memText, pidsText] = (text || "---").split("---");
      const out: ("memory" | "processes")[] = [];
      const kills = /oom_kill /.test(memText) ? counter(memText, "oom_kill") : null;
      if ((kills ?? counter(memText, "failcnt")) > 0) out.push("memory");
      if (counter(pidsText, "max") > 0) out.push("processes");
      return out;
    },
    close: async () => void await endAll([pids, mem], ""),
  };
  return cgroup;
}

/** Makes attempt cgroups of one kind. */
type CgroupMaker = (name: string, memory: number, processes: number) => AttemptCgroup;

/** A shell joins a cgroup of `make` and exits: whether that works here (one probe). */
async function works(make: CgroupMaker): Promise<boolean> {
  const probe = make(`dvergr-${Deno.pid}-probe-${crypto.randomUUID().slice(0, 8)}`, 64 << 20, 64);
  const ok = (await sh(`${probe.joinScript}\nexit 0`)) !== null;
  await probe.close();
  return ok;
}

/** The kind of cgroup this host gives dvergr: v2, else v1, else none. */
async function findMaker(): Promise<{ version: 1 | 2; make: CgroupMaker } | null> {
  const v2 = await v2Parent();
  if (v2 !== null) {
    const make: CgroupMaker = (n, m, p) => v2Cgroup(v2, n, m, p);
    if (await works(make)) return { version: 2, make };
  }
  const v1 = await v1Parents();
  if (v1 !== null) {
    const make: CgroupMaker = (n, m, p) => v1Cgroup(v1, n, m, p);
    if (await works(make)) return { version: 1, make };
  }
  return null;
}

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
  if (env("DVERGR_CGROUP") === "none") return null;
  usable ??= findMaker();
  const kind = await usable;
  if (kind === null) return null;
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
  })();
  await sweeping;
  if (leftOver.size > 0) await sweep([]);
  return kind.make(
    `dvergr-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`,
    memoryBytes,
    processes,
  );
}

/**
 * The argv prefix that makes `cgroup` and moves the process into it before it execs the rest
 * (the kernel then counts and bounds every descendant).
 */
export function joinCgroupArgv(cgroup: AttemptCgroup): string[] {
  return ["/bin/sh", "-c", `${cgroup.joinScript}\nexec "$@"`, "dvergr-cgroup"];
}
