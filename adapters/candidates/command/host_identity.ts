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
 * so a descriptor opened by root does not help. Instead the launch, as root, runs in a mount
 * namespace where a small tmpfs covers a mount point in the temp dir (`<stage>`, root's, 0755,
 * empty on the host) and binds under it (`<stage>/0`, `<stage>/1`…) what the sandbox needs;
 * then setpriv drops to the sandbox uid, sets the parent-death signal again (the change of uid
 * clears it), and execs the sandbox's bwrap, which binds those: when dvergr dies, the
 * sandbox's bwrap is killed, and its --die-with-parent takes the sandbox's init and so its
 * PID namespace. That namespace is, where it can be:
 *
 * - held (stage_holder.ts): one per dvergr process, made at the first sandboxed attempt and
 *   kept by a small root process of ours that ends with dvergr; each attempt's launch enters it
 *   (`nsenter --mount`, its last program before setpriv), which fails unless the holder's token
 *   directory is there. Where the holder found nsenter's own drop (`--setuid --setgid`) as
 *   clean as setpriv's, nsenter drops to the uid and execs bwrap itself (stage_holder.ts). Its roots are bound once: the parent of each of the attempt's own
 *   directories (the worlds directory, the temp dir of the gateway's socket directory; not
 *   their submounts), and every other source whole (a `--mount` directory, the supervisor's
 *   bin, read-only). The sandbox uid then passes from a
 *   parent to the attempt's own files by their own modes: the pack's directory is 0711, the
 *   gateway's directory is the sandbox uid's, and the world's directory (0700) gets the
 *   sandbox's gid, with g+x only (passWorldTo: no host user has that gid). A source that cannot
 *   be reached so (a parent the uid cannot pass, a file elsewhere) stages the attempt on its own.
 * - the attempt's own (`unshare --mount`, which execs: no process of it stays): its fstab,
 *   written for it, binds each source the sandbox needs at <stage>/N with one `mount -a`,
 *   read-only unless the sandbox writes it.
 *
 * Either namespace, and every staging mount with it, ends with its last process (the holder,
 * the launches in it): nothing to unmount, and nothing of the staging is ever visible outside
 * it. No permission on the host changes but the world directory's group. What the candidate
 * writes on the host (its pack) is chowned to the sandbox uid for its attempt; dvergr, as root,
 * reads it and removes it.
 *
 * One uid serves every attempt: attempts live in pid, mount, IPC and network namespaces of
 * their own (no process, file, socket or IPC object of one is reachable from another), ptrace
 * and keyrings are refused by seccomp, and each attempt's processes are bounded by its own
 * cgroup. Only where no cgroup is available do the attempts share the uid's RLIMIT_NPROC
 * backstop (root has cgroups nearly everywhere).
 *
 * Permissions: --allow-sys=uid, --allow-env, --allow-write (chown of the attempt's files, the
 * world directory's group), --allow-run (/bin/sh tells the umask; unshare and mount stage),
 * --allow-read of the temp dir.
 */
import { lchownSync } from "node:fs";
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

/**
 * Where an attempt stages its bind sources: the mount point its own mount namespace covers
 * with a tmpfs, and the host file its fstab is written to before the launch.
 */
export interface Stage {
  /** The mount point: STAGE_DIR in the temp dir (the same for every attempt). */
  dir: string;
  /** The attempt's fstab (a file of its own, 0600, beside its world). */
  fstab: string;
  /**
   * The attempt's own directory (made for it, holding only its files: the pack, the fstab):
   * a file source in it is staged by binding the directory, a line of the fstab, instead of a
   * `mount` process of its own. The sandbox's bwrap then binds only the file.
   */
  own?: string;
}

/**
 * A root bound in the holder's namespace: a host directory, whether the sandbox writes under
 * it, and whether its submounts come with it (`rbind`: a `--mount` directory's) or not (a
 * parent of the attempts' own directories, such as the temp dir, which holds the stage itself).
 */
export interface StageRoot {
  source: string;
  rw: boolean;
  recursive: boolean;
}

/**
 * The stage mount point, and who it is when the attempt found it: its inode and change time (a
 * point removed and made anew is another directory, whatever inode it got).
 */
export interface StagePoint {
  dir: string;
  made: string;
}

/** The mount point's name in the temp dir. */
const STAGE_DIR = "dvergr-stage";

/**
 * The mount point every attempt's private mount namespace covers with its staging tmpfs: a
 * directory of root's, 0755, in the temp dir, empty on the host and shared by every dvergr
 * process (nothing is mounted on it outside a staging namespace, so nothing is left to clean
 * when dvergr is killed). Made when missing (a temp cleaner may remove it); refused
 * when it is not root's own directory (a link or another user's directory in /tmp would
 * decide where the staging tmpfs lands). The temp dir is `env`'s TMPDIR (the run's environment).
 */
export async function stageDir(
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): Promise<string> {
  return (await stagePoint(env)).dir;
}

function lstatOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch {
    return null;
  }
}

/**
 * stageDir(), with who the mount point is: one made anew (a temp cleaner removed the last,
 * detaching a held namespace's staging from it) is another (stage_holder.ts).
 */
export async function stagePoint(
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): Promise<StagePoint> {
  const dir = `${(env("TMPDIR") || "/tmp").replace(/\/+$/, "")}/${STAGE_DIR}`;
  // Looked at synchronously (every attempt as root does): a local directory's lstat waits on
  // nothing, where an asynchronous one costs a thread's hand-off more (~45 us of CPU here).
  let info = lstatOrNull(dir);
  if (info === null) {
    await Deno.mkdir(dir, { mode: 0o755 }).catch((e) => {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    });
    info = await Deno.lstat(dir);
  }
  if (!info.isDirectory || info.uid !== 0) {
    throw new Error(
      `"${dir}" is not a directory of root's (uid ${info.uid}): remove it, dvergr makes it`,
    );
  }
  if (((info.mode ?? 0) & 0o7777) !== 0o755) await Deno.chmod(dir, 0o755);
  return { dir, made: `${info.ino}:${info.ctime?.getTime()}:${info.birthtime?.getTime()}` };
}

/** A path as one field of an fstab line (libmount reads back \ooo escapes of any byte). */
export function fstabField(path: string): string {
  let out = "";
  for (const b of new TextEncoder().encode(path)) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9/._+,:=@%-]/.test(c) && b < 0x80 ? c : `\\${b.toString(8).padStart(3, "0")}`;
  }
  return out;
}

/** An attempt's staging: shell lines, its fstab, and the sandbox's argv from setpriv on. */
export interface StagedBwrap {
  /**
   * Shell lines run as root in the attempt's own mount namespace (the launch runs under
   * unshareMount()): one `mount -a` of the fstab (the tmpfs, then every directory source bound
   * at <stage>/N, read-only unless the sandbox writes it) and one bind per file source. Exit
   * 125 when they fail: no mark, a sandbox that did not start.
   */
  script: string;
  /** What to write at the stage's fstab before the launch. */
  fstab: string;
  /** setpriv … bwrap options… command…: what the launch execs once staged. */
  argv: string[];
}

/**
 * The launch's prefix when it stages: a mount namespace of the attempt's own, private
 * (`unshare`: the program's path).
 */
export function unshareMount(unshare = "unshare"): string[] {
  return [unshare, "--mount", "--propagation", "private"];
}

/**
 * Where the staged launch finds setpriv and mount, and setpriv (as the sandbox's uid) bwrap:
 * by absolute path, so that the root shell of the launch never looks one up on the attempt's
 * PATH (a relative entry there would name a file of the world).
 */
export interface StagedPrograms {
  setpriv: string;
  bwrap: string;
  mount?: string;
}

/**
 * The staging of `bwrap options… command…` run as `id` (see the module's comment): every bind
 * source that is not a system directory is bound at <stage>/N in the attempt's own mount
 * namespace, then setpriv drops to `id` and execs the sandbox's bwrap with those sources. Only
 * `options` are rewritten, never the command's own arguments. `kind` says whether a source is
 * a directory or a file (null: missing, left out: bwrap's -try then skips it, and its plain
 * binds fail as they would). Descriptors pass through (the marks, the filter).
 */
export function stagedBwrap(
  id: HostIdentity,
  stage: Stage,
  options: string[],
  command: string[],
  systemDirs: string[],
  kind: (source: string) => "dir" | "file" | null,
  programs: StagedPrograms = { setpriv: "setpriv", bwrap: "bwrap" },
): StagedBwrap {
  const fstab = [`dvergr-stage ${fstabField(stage.dir)} tmpfs size=64k,mode=0755 0 0`];
  const files: string[] = [];
  const mount = programs.mount ? shellQuote(programs.mount) : "mount";
  let n = 0;
  let ownStaged: string | null = null;
  const inner = mapBinds(options, systemDirs, (how, source) => {
    const what = kind(source);
    if (what === "file" && stage.own !== undefined && dirOf(source) === stage.own) {
      if (ownStaged === null) {
        ownStaged = `${stage.dir}/${n++}`;
        fstab.push(
          `${fstabField(stage.own)} ${fstabField(ownStaged)} none rbind,X-mount.mkdir 0 0`,
        );
      }
      return `${ownStaged}/${source.slice(stage.own.length + 1)}`;
    }
    const staged = `${stage.dir}/${n++}`;
    const ro = how.startsWith("--ro-");
    if (what === "dir") {
      fstab.push(
        `${fstabField(source)} ${fstabField(staged)} none rbind${
          ro ? ",ro" : ""
        },X-mount.mkdir 0 0`,
      );
    } else if (what === "file") {
      files.push(
        `: > ${shellQuote(staged)} && ${mount} --bind${ro ? " -o ro" : ""} -- ${
          shellQuote(source)
        } ` +
          `${shellQuote(staged)} || exit 125`,
      );
    }
    return staged;
  });
  return {
    script: [`${mount} -a -T ${shellQuote(stage.fstab)} || exit 125`, ...files].join("\n"),
    fstab: fstab.join("\n") + "\n",
    argv: dropTo(id, programs, inner, command),
  };
}

/**
 * `options` with the source of each bind that the sandbox uid cannot reach itself (not a
 * system directory) replaced by `stage(how, source)`, `how` the outer bwrap's option that
 * would stage it (BINDS). Other options are copied with their arguments, one of which may read
 * like an option; never the command's own arguments.
 */
function mapBinds(
  options: string[],
  systemDirs: string[],
  stage: (how: string, source: string) => string,
): string[] {
  const inner: string[] = [];
  for (let i = 0; i < options.length; i++) {
    const o = options[i];
    const how = BINDS[o];
    if (how === undefined || i + 2 >= options.length) {
      const k = Math.min(ARITY[o] ?? 0, options.length - i - 1);
      inner.push(...options.slice(i, i + 1 + k));
      i += k;
      continue;
    }
    const source = options[i + 1];
    const dest = options[i + 2];
    i += 2;
    inner.push(o, reachable(source, systemDirs) ? source : stage(how, source), dest);
  }
  return inner;
}

/** setpriv … -- bwrap `inner`… `command`…: the drop to `id`, then the sandbox's bwrap. */
function dropTo(
  id: HostIdentity,
  programs: StagedPrograms,
  inner: string[],
  command: string[],
): string[] {
  return [
    programs.setpriv,
    `--reuid=${id.uid}`,
    `--regid=${id.gid}`,
    "--clear-groups",
    "--inh-caps=-all",
    // Set after the change of uid, which clears it: the sandbox's bwrap dies with dvergr,
    // and its --die-with-parent takes the sandbox's init, and so its PID namespace, with it.
    "--pdeathsig=KILL",
    "--",
    programs.bwrap,
    ...inner,
    ...command,
  ];
}

/**
 * An attempt's sandbox staged in its process's held namespace (stage_holder.ts): the roots it
 * needs bound there, and its argv from setpriv on once it knows where they are.
 */
export interface HeldBwrap {
  roots: StageRoot[];
  /** setpriv … -- bwrap …: the drop to the uid, then the sandbox. */
  argv(at: (root: string) => string): string[];
  /** bwrap …: the sandbox alone, for a launch whose nsenter drops to the uid itself. */
  sandbox(at: (root: string) => string): string[];
}

/**
 * The held staging of `bwrap options… command…` run as `id`, or null when some source cannot
 * be held (the attempt then stages on its own: stagedBwrap). A source in or under one of the
 * attempt's own directories `own` (its world, its pack's directory, its gateway's) is reached
 * through the parent of that directory, bound once as a root: the parent and every directory
 * from it down to the source must let `id` pass by their own mode (`passable`: the world's
 * directory is given the sandbox's gid for it). Any other source is a directory bound whole as
 * a root of its own (a `--mount` directory, the supervisor's bin); a file or missing source
 * there cannot be held.
 */
export function heldBwrap(
  id: HostIdentity,
  options: string[],
  command: string[],
  systemDirs: string[],
  own: string[],
  probe: { kind: (source: string) => "dir" | "file" | null; passable: (dir: string) => boolean },
  programs: StagedPrograms,
): HeldBwrap | null {
  const roots = new Map<string, StageRoot>();
  const placed = new Map<string, { root: string; rel: string }>();
  let cannot = false;
  const add = (source: string, rw: boolean, recursive: boolean) => {
    const had = roots.get(source);
    roots.set(source, { source, rw: rw || !!had?.rw, recursive: recursive || !!had?.recursive });
  };
  mapBinds(options, systemDirs, (how, source) => {
    const rw = !how.startsWith("--ro-");
    const mine = own.find((d) => source === d || source.startsWith(`${d}/`));
    if (mine !== undefined) {
      const root = dirOf(mine);
      const rel = source.slice(root.length + 1);
      const steps = rel.split("/").slice(0, -1);
      const passes = [root, ...steps.map((_, k) => `${root}/${steps.slice(0, k + 1).join("/")}`)];
      if (root === "" || !passes.every(probe.passable)) cannot = true;
      else {
        add(root, rw, false);
        placed.set(source, { root, rel });
      }
    } else if (probe.kind(source) === "dir") {
      add(source, rw, true);
      placed.set(source, { root: source, rel: "" });
    } else cannot = true;
    return source;
  });
  if (cannot) return null;
  const inner = (at: (root: string) => string) =>
    mapBinds(options, systemDirs, (_, source) => {
      const p = placed.get(source)!;
      return p.rel === "" ? at(p.root) : `${at(p.root)}/${p.rel}`;
    });
  return {
    roots: [...roots.values()],
    argv: (at) => dropTo(id, programs, inner(at), command),
    sandbox: (at) => [programs.bwrap, ...inner(at), ...command],
  };
}

/**
 * Whether `id` (no supplementary groups) may pass through the directory at `path` by its own
 * mode: its owner's, group's or others' x bit, the first class it is in deciding, as the
 * kernel's check does. Not through a link.
 */
export function passableBy(id: HostIdentity, path: string): boolean {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch {
    return false;
  }
  if (!info.isDirectory) return false;
  const mode = info.mode ?? 0;
  if (info.uid === id.uid) return (mode & 0o100) !== 0;
  if (info.gid === id.gid) return (mode & 0o010) !== 0;
  return (mode & 0o001) !== 0;
}

/**
 * Lets `id`'s gid pass through the attempt's world directory `dir` (dvergr's own, 0700: no
 * host user may pass it, and the sandbox's gid is no host user's): its group becomes the
 * sandbox's gid, with g+x only. The held staging binds the worlds directory once and reaches
 * each world through it. A directory others may pass already is left as it is.
 */
export function passWorldTo(id: HostIdentity, dir: string): void {
  const mode = (Deno.lstatSync(dir).mode ?? 0) & 0o7777;
  if ((mode & 0o001) !== 0) return;
  Deno.chownSync(dir, null, id.gid);
  Deno.chmodSync(dir, mode | 0o010);
}

/** The directory `path` is in. */
function dirOf(path: string): string {
  return path.slice(0, Math.max(0, path.lastIndexOf("/")));
}

/** Whether `path` is a directory or another file (null: missing). */
export function sourceKind(path: string): "dir" | "file" | null {
  try {
    return Deno.statSync(path).isDirectory ? "dir" : "file";
  } catch {
    return null;
  }
}

/** A string as one word of a shell command line. */
function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * Gives `path` (an object the attempt itself made: its pack, the gateway's directory and
 * socket) to `id` for the attempt, never following a symlink. Synchronous: one lchown of
 * dvergr's own file, where an asynchronous call costs a thread's hand-off more.
 */
export function giveTo(id: HostIdentity, path: string): void {
  lchownSync(path, id.uid, id.gid);
}

let umask: Promise<number> | null = null;

/** dvergr's umask, as a shell it starts reports it (once; Deno.umask needs --allow-sys=umask). */
export function processUmask(): Promise<number> {
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
