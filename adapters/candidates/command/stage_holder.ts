/**
 * The staged mount namespace of a dvergr process run as root, held by one small root process
 * of ours (host_identity.ts says why sandboxes are staged): made at the first sandboxed attempt
 * that can use it, and entered by each attempt's launch (`nsenter --mount`) instead of an
 * `unshare --mount` and a `mount -a` of its own: two programs fewer per attempt.
 *
 * The holder is `setpriv --pdeathsig=KILL -- unshare --mount --propagation slave -- /bin/sh`:
 * in a mount namespace of its own (the host's mounts propagate into it, none of its own out),
 * it covers the stage mount point with a small tmpfs, binds the roots under it (`<stage>/0`,
 * `/1`…: the worlds directory, the gateway's temp dir, each `--mount` directory, the
 * supervisor's bin…, from one fstab), makes a directory named by 128 random bits (the token,
 * root's, 0700), detaches every mount the attempts do not reach, says `ready`, and reads its
 * stdin until EOF. It ends when dvergr closes that pipe, when dvergr ends (the kernel closes
 * it; the parent-death signal too), or when it is killed; the
 * namespace, and every staging mount with it, ends with its last process: the holder, or an
 * attempt's launch that entered it (whose own chain dies with dvergr: setpriv --pdeathsig,
 * bwrap --die-with-parent). Nothing of it is ever visible in the host's mount namespace.
 *
 * An attempt needing a root the holder lacks gets a new holder (a generation) with every root
 * of the last one that still exists and its own; the last one is closed once no attempt holds
 * it. A holder whose stage mount point was made anew (a temp cleaner removed it, which detaches
 * the holder's staging) or that ended is replaced the same way.
 *
 * Each bubblewrap re-reads /proc/self/mountinfo once per bind (~20 an attempt), and each read
 * lists every mount of the namespace: so the holder detaches, once, every mount that neither
 * holds nor lies under a path the attempts reach in it (`reached`: the system directories,
 * /proc, the /dev nodes bwrap's --dev binds, the programs' directories; the stage). On a VM
 * with cgroup v1 that is /sys and its 12 mounts, /dev/pts, /dev/shm and /mnt/* (20 mounts -> 3
 * here; 6 pairs of 200-case jobs took 7.73 s of CPU against 8.23 s, sys time lower in each
 * pair: every bwrap's mount namespace is also a copy of this one). The launch shell (fd
 * closing, ulimits, the cgroup join under /sys/fs/cgroup, the marks and seccomp descriptors)
 * therefore runs in the host's namespace, and only its last program enters the holder's:
 * `exec nsenter --mount … setpriv … bwrap …` (nsenter execs: no program more), or, where the
 * holder's probe found nsenter's own drop to the sandbox's uid as clean as setpriv's (no
 * group, no capability: dropsCleanly), `exec nsenter --mount … --setuid … --setgid … bwrap …`:
 * one program fewer (setpriv's exec cost ~0.9-1.2 ms of CPU here, each time).
 *
 * Entering a wrong namespace is refused by nsenter itself: after it opens the holder's
 * /proc/<pid>/ns/mnt it opens its working directory, `/proc/<pid>/root<stage>/<token>`, which
 * exists only in that holder's namespace while its staging is mounted. A holder that died and
 * whose pid another process took, or whose staging a removed mount point detached, so fails the
 * launch with nsenter's message before setpriv (no mark: a sandbox that did not start, a fault
 * of the host, never the candidate's). The token is in nsenter's argv alone (the exec of its
 * program replaces it), never in bwrap's, which the sandbox's pid 1 keeps and the candidate can read:
 * knowing it, a candidate could make the path in a namespace of its own.
 *
 * Why the holder does not start the attempts itself (saving Deno's spawn, setsid, nsenter and
 * the launch shell: ~4 ms of CPU an attempt, measured with `exec true`): Deno cannot pass it the
 * attempt's pipes (no descriptor passing), so they would be fifos, made by a program per
 * attempt or shared by a slot's attempts (a writer left by one could write into the next's);
 * a subshell it forks does not die with dvergr (a fork does not inherit the parent-death
 * signal; setpriv's would then watch the subshell), and a shell cannot both read requests and
 * wait for its children; a shell's `$?` cannot tell a signal from an exit status above 128,
 * which processEnding tells apart; and the host's kill of the attempt's group needs a session
 * of its own (setsid again).
 *
 * Permissions: --allow-run (setpriv, unshare, mount), --allow-write of the temp dir (the
 * holder's fstab, removed once it is read).
 */
import { dirname } from "node:path";
import { randomToken } from "./command_program.ts";
import { fstabField, type StagePoint, type StageRoot } from "./host_identity.ts";

/** The holder's programs, by absolute path (its root shell never looks one up). */
export interface HolderPrograms {
  setpriv: string;
  unshare: string;
  mount: string;
  umount: string;
  mkdir: string;
  nsenter: string;
}

/** One attempt's hold on a holder (see the module's comment). */
export interface HeldStage {
  /**
   * The prefix of the launch's last program: nsenter into the holder's mount namespace, which
   * fails unless the holder's token is there (see the module's comment).
   */
  enter: string[];
  /**
   * `enter` with nsenter's own drop to the sandbox's uid and gid (`--setuid`, `--setgid`: no
   * supplementary groups), for a launch that then execs bwrap itself, without setpriv: null
   * when the attempt asked for no drop or the holder's probe found that nsenter's drop leaves
   * a group or a capability that setpriv's would not (see dropsCleanly).
   */
  enterAs: string[] | null;
  /** Where the root at host path `source` is bound in the namespace. */
  at(source: string): string;
  /** The attempt no longer needs the holder (its launch has ended). Once. */
  release(): void;
  /**
   * The attempt's sandbox did not start: no later attempt is given this holder (one that died,
   * or whose staging a removed mount point detached, is replaced instead of failing them all).
   */
  spoil(): void;
}

interface Holder {
  child: Deno.ChildProcess;
  token: string;
  point: StagePoint;
  roots: Map<string, StageRoot & { at: string }>;
  users: number;
  retired: boolean;
  ended: boolean;
  /** Whether nsenter's drop to a uid:gid was found clean in this holder (dropsCleanly). */
  drops: Map<string, Promise<boolean>>;
}

/** The sandbox's host uid and gid a launch drops to. */
export interface DropTo {
  uid: number;
  gid: number;
}

/** The holders of one stage mount point, made one at a time. */
interface Slot {
  current: Holder | null;
  queue: Promise<unknown>;
  /** Holders that failed to start in a row: from MAX_FAILURES on, none is tried again. */
  failures: number;
}

const slots = new Map<string, Slot>();

/** After this many failed starts in a row, attempts stage on their own (the old way). */
const MAX_FAILURES = 3;

/** How long a holder may take to say ready (as long as an attempt's own setup may). */
const START_LIMIT_MS = 120_000;

/** More roots than this: a new holder starts with only the attempt's own. */
const MAX_ROOTS = 64;

/**
 * The holder's shell: $1 the stage, $2 the token, $3 the fstab, $4 mount, $5 umount, $6 mkdir,
 * then the paths the attempts reach. A mount is kept when it holds one of them or the stage (an
 * ancestor: `/`, a separate /usr) or lies under one (/etc's binds, /proc's own, the staging);
 * every other one is detached (with its submounts), failures ignored: a mount that stays costs
 * time, never a guarantee. A mount point with an escape (`\040`…) is kept: it is not compared.
 */
const HOLDER_SCRIPT = `"$4" -a -T "$3" || exit 125
"$6" -m 0700 "$1/$2" || exit 125
stage=$1 umount=$5
shift 6
set -f
drop=
while read -r _ _ _ _ m _; do
  case "$m" in /|*\\\\*) continue ;; esac
  for p in "$stage" "$@"; do
    case "$p/" in "$m"/*) continue 2 ;; esac
    case "$m" in "$p"/*) continue 2 ;; esac
  done
  drop="$drop $m"
done < /proc/self/mountinfo
[ -z "$drop" ] || "$umount" -l $drop 2>/dev/null
echo ready
while read -r _; do :; done`;

/**
 * A hold on the holder of `point` that has `roots` bound, started (or replaced) when needed;
 * or why there is none (the attempt then stages on its own).
 */
export function holdStage(
  point: StagePoint,
  roots: StageRoot[],
  programs: HolderPrograms,
  reached: string[],
  as: DropTo | null = null,
): Promise<HeldStage | string> {
  let slot = slots.get(point.dir);
  if (slot === undefined) {
    slot = { current: null, queue: Promise.resolve(), failures: 0 };
    slots.set(point.dir, slot);
  }
  const s = slot;
  const run = s.queue.then(() => holdIn(s, point, roots, programs, reached, as));
  s.queue = run.catch(() => {});
  return run;
}

async function holdIn(
  slot: Slot,
  point: StagePoint,
  roots: StageRoot[],
  programs: HolderPrograms,
  reached: string[],
  as: DropTo | null,
): Promise<HeldStage | string> {
  if (slot.failures >= MAX_FAILURES) return "its staging holder failed to start before";
  let h = slot.current;
  if (h !== null && (h.ended || h.point.made !== point.made)) {
    retire(h);
    slot.current = h = null;
  }
  if (h === null || !covers(h, roots)) {
    const made = await startHolder(point, wanted(h, roots), programs, reached);
    if (typeof made === "string") {
      slot.failures++;
      return made;
    }
    slot.failures = 0;
    if (h !== null) retire(h);
    slot.current = h = made;
  }
  const clean = as === null ? false : await dropsCleanly(h, programs, as);
  return lease(h, programs, clean ? as : null);
}

function covers(h: Holder, roots: StageRoot[]): boolean {
  return roots.every((r) => {
    const had = h.roots.get(r.source);
    return had !== undefined && (had.rw || !r.rw) && (had.recursive || !r.recursive);
  });
}

/** The roots of a new holder: the last one's that still exist, and `roots`. */
function wanted(h: Holder | null, roots: StageRoot[]): StageRoot[] {
  const all = new Map<string, StageRoot>();
  if (h !== null && h.roots.size + roots.length <= MAX_ROOTS) {
    for (const r of h.roots.values()) {
      if (isDir(r.source)) all.set(r.source, r);
    }
  }
  for (const r of roots) {
    const had = all.get(r.source);
    all.set(r.source, {
      source: r.source,
      rw: r.rw || (had?.rw ?? false),
      recursive: r.recursive || (had?.recursive ?? false),
    });
  }
  return [...all.values()];
}

function isDir(path: string): boolean {
  try {
    return Deno.lstatSync(path).isDirectory;
  } catch {
    return false;
  }
}

/**
 * nsenter into `h`'s namespace, then (`as`) drops to that uid and gid, before its program.
 * In this order: nsenter opens each when it reads it, and the token found after the namespace
 * was opened says the namespace was the holder's (a pid is not the holder's again once it was
 * another process's).
 */
function enterArgv(h: Holder, programs: HolderPrograms, as: DropTo | null): string[] {
  return [
    programs.nsenter,
    `--mount=/proc/${h.child.pid}/ns/mnt`,
    `--wd=/proc/${h.child.pid}/root${h.point.dir}/${h.token}`,
    ...(as ? [`--setuid=${as.uid}`, `--setgid=${as.gid}`] : []),
    "--",
  ];
}

/**
 * What the probe of nsenter's drop prints: the credentials of its program (/bin/sh, started
 * as the launch's bwrap would be), from its /proc/self/status.
 */
const DROP_PROBE = `while read -r k v; do
  case "$k" in Uid:|Gid:|Groups:|CapInh:|CapPrm:|CapEff:|CapAmb:) echo "$k $v" ;; esac
done < /proc/self/status`;

/**
 * Whether nsenter's own drop to `as` (`--setuid`, `--setgid`) leaves its program exactly what
 * setpriv's (`--reuid --regid --clear-groups --inh-caps=-all`) would: every uid and gid `as`'s,
 * no supplementary group and no capability in any set. Asked once per holder and uid:gid, by
 * one launch of the probe in the holder's namespace as an attempt's would be: nsenter does not
 * clear the inheritable set, and drops the groups with a setgroups() whose failure it ignores
 * outside a user namespace (denied where /proc/self/setgroups says `deny`, or by a filter).
 * Where it is not clean, launches keep setpriv. The parent-death signal setpriv also set needs
 * no replacement: bwrap sets its own (--die-with-parent) before its sandbox's init starts, and
 * a dvergr that died before that leaves the init no reader of its `started` mark, whose write
 * then ends it, and its PID namespace, before the candidate starts (sandbox_marks.ts), as
 * for a death before setpriv.
 */
function dropsCleanly(h: Holder, programs: HolderPrograms, as: DropTo): Promise<boolean> {
  const key = `${as.uid}:${as.gid}`;
  let known = h.drops.get(key);
  if (known === undefined) {
    const argv = [...enterArgv(h, programs, as), "/bin/sh", "-c", DROP_PROBE];
    known = new Deno.Command(argv[0], {
      args: argv.slice(1),
      clearEnv: true,
      env: { LANG: "C" },
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output().then(
      (out) => out.success && cleanDrop(new TextDecoder().decode(out.stdout), as),
      () => false,
    );
    h.drops.set(key, known);
  }
  return known;
}

/** Whether /proc/self/status lines `text` (DROP_PROBE's) are those of a clean drop to `as`. */
export function cleanDrop(text: string, as: DropTo): boolean {
  const fields = new Map<string, string[]>();
  for (const line of text.split("\n")) {
    const [key, ...values] = line.trim().split(/\s+/);
    if (key) fields.set(key, values);
  }
  const all = (key: string, want: (v: string) => boolean, count: number) => {
    const v = fields.get(key);
    return v !== undefined && v.length === count && v.every(want);
  };
  return all("Uid:", (v) => v === String(as.uid), 4) &&
    all("Gid:", (v) => v === String(as.gid), 4) &&
    all("Groups:", () => false, 0) &&
    ["CapInh:", "CapPrm:", "CapEff:", "CapAmb:"].every((k) => all(k, (v) => /^0+$/.test(v), 1));
}

function lease(h: Holder, programs: HolderPrograms, as: DropTo | null): HeldStage {
  h.users++;
  let released = false;
  return {
    enter: enterArgv(h, programs, null),
    enterAs: as ? enterArgv(h, programs, as) : null,
    at: (source) => {
      const root = h.roots.get(source);
      if (root === undefined) throw new Error(`"${source}" is not a root of the stage`);
      return root.at;
    },
    spoil() {
      h.ended = true;
    },
    release() {
      if (released) return;
      released = true;
      h.users--;
      if (h.retired && h.users === 0) close(h);
    },
  };
}

/** No attempt will hold `h` again: it ends once the last one that does lets it go. */
function retire(h: Holder): void {
  h.retired = true;
  if (h.users === 0) close(h);
}

function close(h: Holder): void {
  // EOF on its stdin ends its shell; attempts already in its namespace keep it.
  h.child.stdin.close().catch(() => {});
}

/** The holder's fstab: the stage's tmpfs, then each root at <stage>/N. */
function holderFstab(dir: string, roots: StageRoot[]): {
  text: string;
  at: Map<string, StageRoot & { at: string }>;
} {
  const lines = [`dvergr-stage ${fstabField(dir)} tmpfs size=64k,mode=0755 0 0`];
  const at = new Map<string, StageRoot & { at: string }>();
  roots.forEach((r, n) => {
    const staged = `${dir}/${n}`;
    at.set(r.source, { ...r, at: staged });
    const how = `${r.recursive ? "rbind" : "bind"}${r.rw ? "" : ",ro"}`;
    lines.push(`${fstabField(r.source)} ${fstabField(staged)} none ${how},X-mount.mkdir 0 0`);
  });
  return { text: lines.join("\n") + "\n", at };
}

/** Starts a holder of `roots` at `point`; why it could not when it did not say ready. */
async function startHolder(
  point: StagePoint,
  roots: StageRoot[],
  programs: HolderPrograms,
  reached: string[],
): Promise<Holder | string> {
  const { text, at } = holderFstab(point.dir, roots);
  const token = randomToken();
  let fstab: string | null = null;
  try {
    // Beside the stage mount point, root's, 0600; removed once the holder has read it.
    fstab = Deno.makeTempFileSync({ dir: dirname(point.dir), prefix: "dvergr-stage-" });
    Deno.writeTextFileSync(fstab, text);
    const child = new Deno.Command(programs.setpriv, {
      args: [
        "--pdeathsig=KILL",
        "--",
        programs.unshare,
        "--mount",
        "--propagation",
        "slave",
        "--",
        "/bin/sh",
        "-c",
        HOLDER_SCRIPT,
        "dvergr-stage",
        point.dir,
        token,
        fstab,
        programs.mount,
        programs.umount,
        programs.mkdir,
        ...reached,
      ],
      clearEnv: true,
      env: { LANG: "C" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    // A mount that hangs (a root on a dead network file system) stops it: the attempt then
    // stages on its own, under its launch's own setup limit.
    const limit = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {
        // Ended already.
      }
    }, START_LIMIT_MS);
    const said = await firstLine(child.stdout).finally(() => clearTimeout(limit));
    if (said !== "ready") {
      await child.stdin.close().catch(() => {});
      const err = await new Response(child.stderr).text().catch(() => "");
      await child.status;
      return `its staging holder did not start: ${err.trim().split("\n").pop() || "no message"}`;
    }
    // dvergr does not wait for it: it ends with dvergr's end of its stdin.
    child.unref();
    const h: Holder = {
      child,
      token,
      point,
      roots: at,
      users: 0,
      retired: false,
      ended: false,
      drops: new Map(),
    };
    child.status.then(() => h.ended = true, () => h.ended = true);
    return h;
  } catch (e) {
    return `its staging holder did not start: ${e instanceof Error ? e.message : String(e)}`;
  } finally {
    if (fstab !== null) {
      try {
        Deno.removeSync(fstab);
      } catch {
        // Gone already.
      }
    }
  }
}

/** The first line of `stream` (null at its end without one); the stream is let go after. */
async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string | null> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return null;
      text += decoder.decode(value, { stream: true });
      const nl = text.indexOf("\n");
      if (nl >= 0) return text.slice(0, nl);
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
