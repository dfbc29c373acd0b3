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
  /** cgroup.procs files the first process writes its pid into before it execs. */
  procsFiles: string[];
  /** The limits the cgroup hit during the attempt. */
  exceeded(): Promise<("memory" | "processes")[]>;
  /** Kills every process still in the cgroup, then removes it. */
  close(): Promise<void>;
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

/** Lines of /proc/self/cgroup (the shell's, which is ours): controllers and path. */
async function ownCgroups(): Promise<{ controllers: string[]; path: string }[]> {
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
 * Kills what is left in the cgroup directories (killing first when v2 can), then removes
 * them. A killed process leaves its cgroup only once reaped (by the container's init, which
 * may be slow): what cannot be removed within a second is kept and tried again later.
 */
async function removeAll(dirs: string[], v2Kill = false): Promise<void> {
  const done = await sh(
    `${v2Kill ? 'echo 1 > "$1/cgroup.kill" 2>/dev/null\n' : ""}` +
      "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do\n" +
      '  pids=""; for d in "$@"; do pids="$pids $(cat "$d/cgroup.procs" 2>/dev/null)"; done\n' +
      '  [ -n "$(echo $pids)" ] && kill -9 $pids 2>/dev/null\n' +
      '  ok=1; for d in "$@"; do [ -d "$d" ] && { rmdir "$d" 2>/dev/null || ok=0; }; done\n' +
      '  [ "$ok" = 1 ] && exit 0\n' +
      "  sleep 0.05\n" +
      "done\nexit 1",
    ...dirs,
  );
  if (done === null) { for (const d of dirs) leftOver.add(d); }
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

async function openV2(name: string, memory: number, processes: number) {
  const own = (await ownCgroups()).find((c) => c.controllers.length === 0);
  if (!own) return null;
  for (const mount of [ROOT, join(ROOT, "unified")]) {
    const parent = join(mount, own.path);
    const dir = join(parent, name);
    // The parent must hand memory and pids down; then a child with both limits.
    const made = await sh(
      'grep -qw memory "$1/cgroup.subtree_control" && grep -qw pids "$1/cgroup.subtree_control" &&\n' +
        'mkdir "$2" && echo "$3" > "$2/memory.max" && echo "$4" > "$2/pids.max" &&\n' +
        '{ echo 0 > "$2/memory.swap.max" 2>/dev/null; true; }',
      parent,
      dir,
      String(memory),
      String(processes),
    );
    if (made === null) {
      await sh('rmdir "$1" 2>/dev/null', dir);
      continue;
    }
    const cgroup: AttemptCgroup = {
      version: 2,
      procsFiles: [join(dir, "cgroup.procs")],
      async exceeded() {
        const text = await sh('cat "$1/memory.events"; echo ---; cat "$1/pids.events"', dir);
        const [mem, pids] = (text ?? "---").split("---");
        const out: ("memory" | "processes")[] = [];
        if (counter(mem, "oom_kill") > 0) out.push("memory");
        if (counter(pids, "max") > 0) out.push("processes");
        return out;
      },
      close: () => removeAll([dir], true),
    };
    return cgroup;
  }
  return null;
}

async function openV1(name: string, memory: number, processes: number) {
  const own = await ownCgroups();
  const at = (controller: string) => {
    const c = own.find((x) => x.controllers.includes(controller));
    return c ? join(ROOT, controller, c.path) : null;
  };
  const memParent = at("memory");
  const pidsParent = at("pids");
  if (memParent === null || pidsParent === null) return null;
  const mem = join(memParent, name);
  const pids = join(pidsParent, name);
  const made = await sh(
    'mkdir "$1" && mkdir "$2" && echo "$3" > "$1/memory.limit_in_bytes" &&\n' +
      'echo "$4" > "$2/pids.max" &&\n' +
      // Without swap accounting this file is absent; memory.limit_in_bytes still binds RAM.
      '{ echo "$3" > "$1/memory.memsw.limit_in_bytes" 2>/dev/null; true; }',
    mem,
    pids,
    String(memory),
    String(processes),
  );
  if (made === null) {
    await sh('rmdir "$1" "$2" 2>/dev/null', mem, pids);
    return null;
  }
  const cgroup: AttemptCgroup = {
    version: 1,
    procsFiles: [join(mem, "cgroup.procs"), join(pids, "cgroup.procs")],
    async exceeded() {
      const text = await sh(
        'cat "$1/memory.oom_control"; echo "failcnt $(cat "$1/memory.failcnt")"; echo ---; ' +
          'cat "$2/pids.events"',
        mem,
        pids,
      );
      const [memText, pidsText] = (text ?? "---").split("---");
      const out: ("memory" | "processes")[] = [];
      const kills = /oom_kill /.test(memText) ? counter(memText, "oom_kill") : null;
      if ((kills ?? counter(memText, "failcnt")) > 0) out.push("memory");
      if (counter(pidsText, "max") > 0) out.push("processes");
      return out;
    },
    close: () => removeAll([pids, mem]),
  };
  return cgroup;
}

let usable: Promise<1 | 2 | null> | null = null;
/** Leftovers of dead dvergr processes are swept once per process. */
let sweeping: Promise<void> | null = null;

/**
 * A fresh cgroup for one attempt with `memoryBytes` and `processes` as its limits, or null
 * when this host gives dvergr none (checked once per process; `DVERGR_CGROUP=none` turns
 * cgroups off).
 */
export async function openAttemptCgroup(
  memoryBytes: number,
  processes: number,
  env: (name: string) => string | undefined,
): Promise<AttemptCgroup | null> {
  if (env("DVERGR_CGROUP") === "none") return null;
  const name = () => `dvergr-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
  usable ??= (async () => {
    const probe = (await openV2(name(), memoryBytes, processes)) ??
      (await openV1(name(), memoryBytes, processes));
    if (probe === null) return null;
    await probe.close();
    return probe.version;
  })();
  const version = await usable;
  if (version === null) return null;
  sweeping ??= (async () => {
    const own = await ownCgroups();
    const parents = version === 2
      ? [ROOT, join(ROOT, "unified")].map((m) =>
        join(m, own.find((c) => c.controllers.length === 0)?.path ?? "/")
      )
      : ["memory", "pids"].map((k) =>
        join(ROOT, k, own.find((c) => c.controllers.includes(k))?.path ?? "/")
      );
    await sweep(parents);
  })();
  await sweeping;
  if (leftOver.size > 0) await sweep([]);
  if (version === 2) return await openV2(name(), memoryBytes, processes);
  return await openV1(name(), memoryBytes, processes);
}

/**
 * The argv prefix that moves the process into `cgroup` before it execs the rest (the
 * kernel then counts and bounds every descendant).
 */
export function joinCgroupArgv(cgroup: AttemptCgroup): string[] {
  const script = cgroup.procsFiles.map((_, i) => `echo $$ > "$${i + 1}" || exit 125`).join("\n") +
    `\nshift ${cgroup.procsFiles.length}\nexec "$@"`;
  return ["/bin/sh", "-c", script, "dvergr-cgroup", ...cgroup.procsFiles];
}
