/**
 * Who a sandboxed candidate is on the host. bubblewrap maps the candidate's uid (SANDBOX_UID
 * inside) to the uid that starts bwrap. Started by an ordinary user, that is the user; started
 * by root it would be the host's root: without capabilities, but the kernel would still grant
 * it every file owned by root (a 0600 file under a `--mount` directory, say). So when dvergr
 * runs as root, bwrap is started as a host uid of its own that owns nothing on the host
 * (DEFAULT_SANDBOX_HOST_ID, or `DVERGR_SANDBOX_HOST_UID` / `DVERGR_SANDBOX_HOST_GID`): setpriv
 * drops to it, with no supplementary groups and no inheritable capabilities, just before bwrap.
 *
 * That uid cannot reach what lives behind root's private directories (the deno binary and the
 * agent CLIs under /root, the worlds and the attempt's files in 0700 directories). bubblewrap
 * 0.8 resolves every bind source, `--bind-fd` ones included, by its path as the calling uid,
 * so a descriptor opened by root does not help. Instead one staging bwrap per dvergr process,
 * run as root and dying with it, holds a private mount namespace with an empty tmpfs over a
 * directory of its own (`<stage>`). Each attempt enters it (nsenter, as root), mounts a small
 * tmpfs of its own there (`<stage>/a<N>`) and binds each host path the sandbox needs under it
 * (`<stage>/a<N>/0`, `<stage>/a<N>/1`…, read-only unless the sandbox writes it); then setpriv
 * drops to the sandbox uid, sets the parent-death signal again (the change of uid clears it),
 * and execs the sandbox's bwrap, which binds those: when dvergr dies, the sandbox's bwrap is
 * killed, and its --die-with-parent takes the sandbox's init and so its PID namespace. The
 * attempt's directory is unmounted (lazily) and removed after it. No permission on the host
 * changes, and nothing of the staging is visible outside that namespace. What the candidate
 * writes on the host (its
 * pack) is chowned to the sandbox uid for its attempt; dvergr, as root, reads it and removes it.
 *
 * One uid serves every attempt: attempts live in pid, mount, IPC and network namespaces of
 * their own (no process, file, socket or IPC object of one is reachable from another), ptrace
 * and keyrings are refused by seccomp, and each attempt's processes are bounded by its own
 * cgroup. Only where no cgroup is available do the attempts share the uid's RLIMIT_NPROC
 * backstop (root has cgroups nearly everywhere).
 *
 * Permissions: --allow-sys=uid, --allow-env, --allow-write (chown of the attempt's files),
 * --allow-run (/bin/sh tells the umask; bwrap and nsenter stage), --allow-read of /proc.
 */
import { lchown } from "node:fs/promises";
import { DvergrError } from "../../../core/errors.ts";

/** A host uid and gid of the sandbox. */
export interface HostIdentity {
  uid: number;
  gid: number;
}

/**
 * The sandbox's host uid and gid by default: outside the ranges accounts, systemd (dynamic
 * users, containers) and shadow's subordinate ids are given from, so no file or process of the
 * host has it.
 */
export const DEFAULT_SANDBOX_HOST_ID = 2_000_000_000;

function hostId(env: (name: string) => string | undefined, name: string, fallback: number) {
  const text = env(name);
  if (text === undefined || text === "") return fallback;
  const n = Number(text);
  if (!/^[0-9]+$/.test(text.trim()) || !Number.isSafeInteger(n) || n >= 0xffffffff) {
    throw new DvergrError("USAGE", `${name}="${text}" is not a uid/gid`, {
      hint:
        `Set ${name} to a number from 1 to 4294967294 that no account or file uses, or unset it`,
    });
  }
  if (n === 0) {
    throw new DvergrError("USAGE", `${name} is 0: the sandbox would run as the host's root`, {
      hint:
        `Set ${name} to a non-zero id that no account or file uses, or unset it (default ${DEFAULT_SANDBOX_HOST_ID})`,
    });
  }
  return n;
}

/**
 * The host identity sandboxed candidates get when dvergr runs as root (null otherwise: bwrap
 * then runs as the user, who is whom the candidate maps to). Throws for a bad setting.
 */
export function sandboxHostIdentity(
  env: (name: string) => string | undefined,
): HostIdentity | null {
  if (Deno.uid() !== 0) return null;
  const uid = hostId(env, "DVERGR_SANDBOX_HOST_UID", DEFAULT_SANDBOX_HOST_ID);
  return { uid, gid: hostId(env, "DVERGR_SANDBOX_HOST_GID", uid) };
}

/** Bind sources the sandbox uid reaches itself: the system's directories and /proc. */
function reachable(source: string, systemDirs: string[]): boolean {
  return systemDirs.includes(source) || source.startsWith("/proc/");
}

/** bwrap's bind options: option → the outer (root) bwrap's option that stages its source. */
const BINDS: Record<string, string> = {
  "--bind": "--bind",
  "--bind-try": "--bind-try",
  "--ro-bind": "--ro-bind",
  "--ro-bind-try": "--ro-bind-try",
  "--dev-bind": "--ro-bind",
  "--dev-bind-try": "--ro-bind-try",
};

/** How many arguments bwrap's other options take (those not listed take none). */
const ARITY: Record<string, number> = {
  "--symlink": 2,
  "--setenv": 2,
  "--file": 2,
  "--bind-data": 2,
  "--ro-bind-data": 2,
  "--bind-fd": 2,
  "--ro-bind-fd": 2,
  "--tmpfs": 1,
  "--dir": 1,
  "--size": 1,
  "--perms": 1,
  "--proc": 1,
  "--dev": 1,
  "--mqueue": 1,
  "--chdir": 1,
  "--seccomp": 1,
  "--add-seccomp-fd": 1,
  "--uid": 1,
  "--gid": 1,
  "--hostname": 1,
  "--remount-ro": 1,
  "--unsetenv": 1,
  "--chmod": 2,
  "--args": 1,
  "--userns": 1,
  "--userns2": 1,
  "--pidns": 1,
  "--sync-fd": 1,
  "--block-fd": 1,
  "--userns-block-fd": 1,
  "--info-fd": 1,
  "--json-status-fd": 1,
  "--lock-file": 1,
  "--exec-label": 1,
  "--file-label": 1,
  "--cap-add": 1,
  "--cap-drop": 1,
};

/** One attempt's place in the staging namespace (see the module's comment). */
export interface Stage {
  /** The host pid of the staging namespace's init, whose namespaces the attempt enters. */
  pid: number;
  /** The attempt's directory in the staging /tmp. */
  dir: string;
  /** Unmounts and removes the directory (nothing when the staging namespace is gone). */
  close(): Promise<void>;
}

/** This process's staging bwrap: its init's host pid, the staging tmpfs's place, its end. */
interface Staging {
  pid: number;
  root: string;
  stop(): void;
}

let staging: Promise<Staging> | null = null;
let stages = 0;

/**
 * The shell that prints the temp dir and the start time of its parent (dvergr: field 22 of
 * /proc/PID/stat, in clock ticks since boot), after it has removed the staging directories,
 * in that temp dir, of dvergr processes that are gone: those named
 * `dvergr-stage-<pid>-<start time>-…` whose pid no longer runs or runs with another start time
 * (reused). A live process's is never removed (its pid and start time match), nor a directory
 * without both in its name, nor one that is not empty (rmdir).
 */
const SWEEP_STAGES = `st() { { read -r s < "/proc/$1/stat"; } 2>/dev/null || return 1
  s=\${s##*) }; set -- $s; echo "\${20}"; }
tmp=\${TMPDIR:-/tmp}
for d in "$tmp"/dvergr-stage-*-*-*; do
  [ -d "$d" ] || continue
  rest=\${d##*/dvergr-stage-}; pid=\${rest%%-*}; rest=\${rest#*-}; t=\${rest%%-*}
  case "$pid:$t" in *[!0-9:]* | :* | *:) continue ;; esac
  [ "$(st "$pid")" = "$t" ] || rmdir "$d" 2>/dev/null
done
echo "$tmp"
st "$PPID"`;

/**
 * The staging directory's name: dvergr's pid and start time, so that the next dvergr process
 * that stages removes it once dvergr is gone (a `kill -9` leaves it behind, empty), and never
 * while it lives. The directories of processes that are gone are removed first.
 */
async function stagingRoot(): Promise<string> {
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", SWEEP_STAGES, "dvergr-stage"],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  const [tmp, start] = new TextDecoder().decode(out.stdout).split("\n");
  if (!out.success || !/^\d+$/.test(start ?? "") || !tmp) {
    throw new Error("the start time of dvergr's process cannot be read from /proc");
  }
  return await Deno.makeTempDir({ dir: tmp, prefix: `dvergr-stage-${Deno.pid}-${start}-` });
}

/**
 * Starts this process's staging bwrap: its init's host pid once its namespaces are set up (its
 * own child, the holder, runs), and the staging tmpfs's place. That is an empty directory of
 * dvergr's own (in the temp dir, named for dvergr's process and removed when dvergr exits, or
 * by the next dvergr that stages when dvergr was killed: stagingRoot), so that no source a
 * sandbox binds is hidden under it (the worlds are in the temp dir too). The child is unref'd:
 * it never keeps dvergr alive, and dies with it (--die-with-parent).
 */
async function startStaging(): Promise<Staging> {
  const root = await stagingRoot();
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(root);
    } catch {
      // already gone, or the process is past removing it
    }
  });
  // bwrap says its init's pid on stderr (--info-fd 2), the holder says on stdout when the
  // mounts are made (Deno may not read other processes' /proc entries).
  const child = new Deno.Command("bwrap", {
    args: ["--die-with-parent", "--unshare-pid", "--info-fd", "2", "--dev-bind", "/", "/"]
      .concat(["--tmpfs", root, "/bin/sh", "-c", "echo dvergr-staged; exec sleep infinity"]),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  child.unref();
  const stop = () => {
    try {
      child.kill("SIGKILL");
    } catch {
      // already ended
    }
  };
  // The promise this start is (set by currentStaging before the first await above).
  const self = staging;
  child.status.then(() => {
    if (staging === self) staging = null;
  });
  // Bounded by time, not by a count of reads: a loaded host may take seconds to start it.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((r) => timer = setTimeout(() => r(null), 60_000));
  const ready = await readUntil(child.stdout, /dvergr-staged\n/, late);
  const info = await readUntil(child.stderr, /"child-pid"\s*:\s*(\d+)/, late);
  clearTimeout(timer);
  const pid = Number(info?.[1]);
  if (ready && Number.isSafeInteger(pid) && pid > 0) return { pid, root, stop };
  stop();
  await Deno.remove(root).catch(() => {});
  throw new Error("the staging bubblewrap did not start");
}

/** Reads `stream` until its text matches `pattern` (null: it ended or `late` came first). */
async function readUntil(
  stream: ReadableStream<Uint8Array>,
  pattern: RegExp,
  late: Promise<null>,
): Promise<RegExpExecArray | null> {
  const reader = stream.getReader();
  let text = "";
  try {
    for (;;) {
      const found = pattern.exec(text);
      if (found) return found;
      const got = await Promise.race([reader.read(), late]);
      if (got === null || got.done) return null;
      text += new TextDecoder().decode(got.value);
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** The shell that makes an attempt's staging directory and binds, then execs the rest. */
const STAGE_SCRIPT = `d=$1; n=$2; shift 2
mkdir -m 0755 "$d" && mount -t tmpfs -o size=64k,mode=0755 dvergr-stage "$d" || exit 1
i=0
while [ "$i" -lt "$n" ]; do
  how=$1; src=$2; shift 2
  if [ -e "$src" ]; then
    if [ -d "$src" ]; then mkdir "$d/$i"; else : > "$d/$i"; fi || exit 1
    if [ "$how" = ro ]; then mount --rbind -o ro -- "$src" "$d/$i" || exit 1
    else mount --rbind -- "$src" "$d/$i" || exit 1; fi
  fi
  i=$((i + 1))
done
exec "$@"`;

/** This process's staging, started on first use. */
function currentStaging(): Promise<Staging> {
  if (staging) return staging;
  const started: Promise<Staging> = startStaging().catch((e) => {
    if (staging === started) staging = null;
    throw e;
  });
  staging = started;
  return started;
}

/**
 * A place for one attempt in this process's staging namespace (started on first use). When
 * the staging directory is gone from the host (a temp cleaner removed it: the kernel then
 * detaches the staging namespace's tmpfs too, and no attempt could stage there), a new staging
 * is started in a new directory: the old one's running attempts keep what they bound.
 */
export async function openStage(): Promise<Stage> {
  let current = currentStaging();
  let found = await current;
  if (!(await Deno.stat(found.root).then(() => true, () => false))) {
    if (staging === current) {
      staging = null;
      found.stop();
    }
    current = currentStaging();
    found = await current;
  }
  const { pid, root } = found;
  const dir = `${root}/a${++stages}`;
  return {
    pid,
    dir,
    async close() {
      const [program, ...args] = inStage(pid, 'umount -l "$1"; rmdir "$1"', "sh", dir);
      await new Deno.Command(program, {
        args,
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).output().catch(() => {});
    },
  };
}

/**
 * The argv that runs `bwrap options… command…` as `id` (see the module's comment): the
 * attempt enters the staging namespaces, stages every bind source that is not a system
 * directory at <stage>/N, then setpriv drops to `id` and execs the sandbox's bwrap with those
 * sources. Only `options` are rewritten, never the command's own arguments. Descriptors pass
 * through (the marks, the filter).
 */
export function stagedBwrapArgv(
  id: HostIdentity,
  stage: Pick<Stage, "pid" | "dir">,
  options: string[],
  command: string[],
  systemDirs: string[],
): string[] {
  const outer: string[] = [];
  const inner: string[] = [];
  for (let i = 0; i < options.length; i++) {
    const o = options[i];
    const how = BINDS[o];
    if (how === undefined || i + 2 >= options.length) {
      // Another option: copied with its arguments (one of which may read like an option).
      const n = Math.min(ARITY[o] ?? 0, options.length - i - 1);
      inner.push(...options.slice(i, i + 1 + n));
      i += n;
      continue;
    }
    const source = options[i + 1];
    const dest = options[i + 2];
    i += 2;
    if (reachable(source, systemDirs)) {
      inner.push(o, source, dest);
      continue;
    }
    const staged = `${stage.dir}/${outer.length / 2}`;
    outer.push(how.startsWith("--ro-") ? "ro" : "rw", source);
    inner.push(o, staged, dest);
  }
  return [
    ...inStage(stage.pid, STAGE_SCRIPT, "dvergr-stage", stage.dir),
    String(outer.length / 2),
    ...outer,
    "setpriv",
    `--reuid=${id.uid}`,
    `--regid=${id.gid}`,
    "--clear-groups",
    "--inh-caps=-all",
    // Set after the change of uid, which clears it: the sandbox's bwrap dies with dvergr, and
    // its --die-with-parent takes the sandbox's init, and so its PID namespace, with it.
    "--pdeathsig=KILL",
    "--",
    "bwrap",
    ...inner,
    ...command,
  ];
}

/**
 * Gives `path` (an object the attempt itself made: its pack, the gateway's directory and
 * socket) to `id` for the attempt, never following a symlink.
 */
export async function giveTo(id: HostIdentity, path: string): Promise<void> {
  await lchown(path, id.uid, id.gid);
}

let umask: Promise<number> | null = null;

/** dvergr's umask, as a shell it starts reports it (once; Deno.umask needs --allow-sys=umask). */
function processUmask(): Promise<number> {
  umask ??= new Deno.Command("/bin/sh", { args: ["-c", "umask"], stdin: "null", stderr: "null" })
    .output()
    .then((o) => parseInt(new TextDecoder().decode(o.stdout).trim(), 8))
    // Unknown: as if it kept the world from others (the walk is then all the cost).
    .then((n) => Number.isInteger(n) ? n : 0o077, () => 0o077);
  return umask;
}

/**
 * Makes the world at `dir` readable to the sandbox's uid where dvergr's umask kept its files
 * from others (a hardened 027 or 077): the candidate reads the world as "others". Only the
 * world's own entries (made by dvergr for this attempt, under its 0700 directory, so no other
 * host user reaches them) get o+r, and directories o+rx; links are never followed. Nothing to do
 * under the usual umask 022.
 */
export async function readableWorld(dir: string): Promise<void> {
  if (((await processUmask()) & 0o005) === 0) return;
  const walk = async (path: string): Promise<void> => {
    for await (const e of Deno.readDir(path)) {
      const child = `${path}/${e.name}`;
      const info = await Deno.lstat(child);
      if (info.isSymlink) continue;
      if (info.isDirectory) {
        await Deno.chmod(child, ((info.mode ?? 0) & 0o7777) | 0o005);
        await walk(child);
      } else if (info.isFile) await Deno.chmod(child, ((info.mode ?? 0) & 0o7777) | 0o004);
    }
  };
  await walk(dir);
}

/**
 * A shell `script` (with `args`, the first its $0) run in the staging bubblewrap's mount
 * namespace, as root, at that bubblewrap's root: not the namespace's first one, which its
 * pivot_root left.
 */
function inStage(pid: number, script: string, ...args: string[]): string[] {
  return [
    "nsenter",
    `--target=${pid}`,
    "--mount",
    "--root",
    "--wd",
    "--",
    "/bin/sh",
    "-c",
    script,
    ...args,
  ];
}
