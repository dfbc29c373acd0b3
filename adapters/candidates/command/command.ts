/**
 * Command candidates: an external agent process (a script, `claude -p`, `codex exec`…)
 * working in the attempt's world.
 *
 * - The command is a shell command line, run by `/bin/sh -c`.
 * - It gets the task on stdin and in `DVERGR_TASK`, the case id in `DVERGR_CASE`, the
 *   repetition in `DVERGR_REPETITION`, its time limit in `DVERGR_TIMEOUT_MS`, and the
 *   world's root in `DVERGR_WORLD`. Its working directory is the world's root, so relative
 *   paths (`docs/case.edn`, `out/answer.edn`) work the same with and without isolation.
 * - With bubblewrap (`bwrap`) it runs in a sandbox: the system directories read-only, a
 *   private /proc, /dev and /tmp, the world's top-level entries bound read-write at
 *   `/docs`, `/out`, … (so the task's absolute paths are real), the candidate's own
 *   read-only mounts, no network (`--unshare-all`), and it dies with dvergr. Without
 *   bubblewrap it runs directly in the world directory and its attempts are marked as not
 *   isolated.
 * - With a world gateway (adapters/gateway/), it reaches the world's MCP server at
 *   `DVERGR_MCP_URL` and model APIs at `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL` (dummy keys:
 *   the gateway swaps in the real ones, meters tokens and cost, and enforces the budget).
 *   Under bubblewrap this is a Unix socket bound at /run/dvergr and exposed on a loopback
 *   port by a forwarder of ours that starts before the command; on the host's network
 *   (`:network true`) and without bubblewrap, an ephemeral host loopback port. Either way
 *   the URLs hold the attempt's secret, without which the gateway answers nothing.
 * - Its time limit is enforced by killing its whole process group (it starts in a session
 *   of its own via `setsid`); in a sandbox, by the sandbox's supervisor and, where the
 *   attempt has a cgroup, by the host, which kills the candidate's own cgroup at the limit
 *   and grace (the candidate cannot leave it, nor stop the host's timer). Its exit status and
 *   a bounded tail of stdout and stderr are kept as evidence; output beyond the tail is
 *   counted, never buffered.
 *
 * Permissions: --allow-run (setsid, bwrap, /bin/sh), --allow-read of the mounts.
 */
import { dirname, isAbsolute, join } from "node:path";
import { DvergrError } from "../../../core/errors.ts";
import {
  DEFAULT_LIMITS,
  describeLimits,
  HOST_TIMER_SIGNAL,
  type LimitName,
  limitsIdentity,
  PACK_ENTRIES,
  PACK_NO_ROOM,
  type ReadBack,
  readBackWorld,
  type ResourceLimits,
  rlimitArgv,
  rlimitLines,
  sandboxWorldArgs,
  sealArgs,
  superviseArgv,
  SUPERVISOR_BIN,
  writableTopLevel,
} from "./limits.ts";
import { type AttemptCgroup, openAttemptCgroup, shellQuote, warmAttemptCgroups } from "./cgroup.ts";
import { noteSerialOnce, unboundedAttempts } from "./gate.ts";
import { signalSandboxInit } from "./sandbox_init.ts";
import { type FdClosing, launchFdClosing } from "./inherited_fds.ts";
import { deniedSyscalls, seccompFilter } from "./seccomp.ts";
import {
  commandProgram,
  DEFAULT_PATH,
  hostProgram,
  lookUpProgram,
  plainArgv,
  under,
} from "./command_program.ts";
import {
  giveTo,
  heldBwrap,
  type HostIdentity,
  passableBy,
  passWorldTo,
  processUmask,
  readableWorld,
  sandboxHostIdentity,
  sourceKind,
  type Stage,
  stagedBwrap,
  stageDir,
  stagePoint,
  unshareMount,
} from "./host_identity.ts";
import { type HeldStage, holdStage } from "./stage_holder.ts";
import { storageProblem } from "../../files/os_error.ts";
import { removeTreeQuietly } from "../../files/fs.ts";
import { OPEN_MARKS_FD, type SandboxMarks, StderrMarks } from "./sandbox_marks.ts";
import {
  type AttemptContext,
  type Candidate,
  type CandidateOutcome,
  NO_USAGE,
} from "../../../core/bench/candidate.ts";
import {
  type AttemptGateway,
  type GatewayEvidence,
  type GatewayFactory,
  gatewayOutcome,
  WORLD_GATEWAY_IDENTITY,
} from "../../gateway/attempt_gateway.ts";

export interface CommandSpec {
  /** Display name, unique within an experiment. */
  name: string;
  /** The shell command line. */
  command: string;
  /** Host directories (absolute) mounted read-only at the same path inside the sandbox. */
  mounts?: string[];
  /** Fixed environment variables for the process. */
  env?: Record<string, string>;
  /** Names of dvergr's environment variables passed through (e.g. an API key). */
  passEnv?: string[];
  /** Keep the host's network inside the sandbox (default: no network). */
  network?: boolean;
  /** Model requests through the world gateway per attempt (default 100). */
  maxRequests?: number;
  /**
   * The models (registry names) its model requests may name; absent: the registry's priced
   * Anthropic and OpenAI models (adapters/gateway/routes.ts).
   */
  models?: string[];
  /** More bubblewrap arguments (agent CLIs: a throwaway HOME). Not from candidates.edn. */
  bwrapExtra?: string[];
}

export type { GatewayFactory } from "../../gateway/attempt_gateway.ts";

/** What an attempt's process left behind, for a candidate that reads its own result. */
export interface CommandRun {
  stdout: string;
  gateway: GatewayEvidence | null;
}

export type Isolation = "bwrap" | "none";

export interface CommandOptions {
  /** "bwrap" sandboxes the process; "none" runs it in the world directory. */
  isolation: Isolation;
  /** dvergr's environment (for `passEnv`, PATH and HOME). */
  env: (name: string) => string | undefined;
  /** Bytes of stdout and of stderr kept as evidence (the tail). Default 16 KiB. */
  tailBytes?: number;
  /** Between SIGTERM and SIGKILL of the process group at the time limit. Default 1,000 ms. */
  killGraceMs?: number;
  /** The attempt's world gateway; none: the process has no MCP server and no model access. */
  gateway?: GatewayFactory;
  /** Turns the outcome of an attempt into the candidate's own (agent CLIs read their JSON). */
  finish?: (outcome: CandidateOutcome, run: CommandRun) => CandidateOutcome;
  /** The candidate's identity instead of the command's (an agent CLI: its version…). */
  identity?: Record<string, unknown>;
  /** Memory, world bytes, processes and open files of each attempt; default DEFAULT_LIMITS. */
  limits?: ResourceLimits;
}

/** Top-level world names that would hide the sandbox's own system directories. */
const RESERVED = new Set([
  "usr",
  "bin",
  "sbin",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "etc",
  "proc",
  "dev",
  "tmp",
]);
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"];
/** PATH when dvergr has none. */
/** Larger tasks are given on stdin only (an environment string is limited to 128 KiB). */
const MAX_ENV_TASK = 100_000;

/** The running deno's directory when it is not a system directory (the sandbox binds it). */
function denoDir(): string | null {
  try {
    const deno = Deno.realPathSync(Deno.execPath());
    return SYSTEM_DIRS.some((d) => deno.startsWith(d + "/")) ? null : dirname(deno);
  } catch {
    // No deno binary to share.
    return null;
  }
}

/** The host directories a sandboxed command sees at the same path: system, deno's, mounts. */
function sandboxRoots(mounts: string[]): string[] {
  const roots = SYSTEM_DIRS.filter((d) => {
    try {
      Deno.lstatSync(d);
      return true;
    } catch {
      return false;
    }
  });
  const deno = denoDir();
  return [...roots, ...(deno ? [deno] : []), ...mounts];
}

/** The cause of a 126/127 exit: "the shell could not run it (exit 127): sh: 1: x: not found". */
export function shellCouldNotRun(code: number, stderr: string): string {
  const line = stderr.trim().split("\n").pop()?.trim() ?? "";
  return `the shell could not run it (exit ${code})${line ? `: ${line}` : ""}`;
}

/** The host's devices bwrap's `--dev` binds into the sandbox's /dev (bubblewrap.c's devnodes). */
const DEV_NODES = [
  "/dev/null",
  "/dev/zero",
  "/dev/full",
  "/dev/random",
  "/dev/urandom",
  "/dev/tty",
];

/** Parts of /proc the candidate's uid could write were they not read-only. */
const PROC_COVERS = ["/proc/sys", "/proc/sysrq-trigger", "/proc/fs", "/proc/irq", "/proc/bus"];

/**
 * The system directories' binds (and the running deno's directory), read once per process:
 * on every attempt they cost ~12 system calls (the missing ones thrown as errors), and the
 * host's /usr layout does not change under a run. Only which directory is a link or a
 * directory is kept: bwrap binds the directories themselves, read-only, at each launch.
 */
let systemBinds: string[] | null = null;

function hostSystemBinds(): string[] {
  if (systemBinds !== null) return systemBinds;
  const args: string[] = [];
  for (const d of SYSTEM_DIRS) {
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(d);
    } catch {
      continue;
    }
    if (info.isSymlink) args.push("--symlink", Deno.readLinkSync(d), d);
    else if (info.isDirectory) args.push("--ro-bind", d, d);
  }
  // The running deno's directory, so agents written for Deno can start.
  const deno = denoDir();
  if (deno) args.push("--ro-bind", deno, deno);
  return systemBinds = args;
}

/** bwrap arguments that make the system visible read-only (merged-/usr links kept as links). */
function systemArgs(tmpBytes = 1 << 20): string[] {
  // /tmp is a tmpfs bounded like the world's writable directories.
  return hostSystemBinds().concat(
    "--proc",
    "/proc",
    // Should the candidate's host uid ever be root's (it is not: host_identity.ts), the kernel
    // would let it write every sysctl under /proc/sys (kernel.core_pattern: the host's root
    // would run a program it names). bwrap covers /proc/sys only when it finds the directory
    // writable, which a 0555 directory never is, so cover it (and /proc/fs, /proc/sysrq-trigger)
    // here as a second wall.
    ...PROC_COVERS.flatMap((p) => ["--ro-bind-try", p, p]),
    "--dev",
    "/dev",
    "--size",
    String(tmpBytes),
    "--tmpfs",
    "/tmp",
  );
}

/**
 * The sandbox's own identity: an unprivileged uid/gid in a user namespace of its own, every
 * capability dropped (bwrap also sets no_new_privs). As root, bwrap would otherwise keep the
 * full capability set inside: enough to remount any read-only bind read-write. The user
 * namespace maps SANDBOX_UID to the host uid that starts bwrap: the user running dvergr, or,
 * when that is root, the sandbox's own host uid (host_identity.ts), never the host's root.
 */
export const SANDBOX_UID = 1000;
const IDENTITY_ARGS = [
  "--unshare-all",
  "--unshare-user",
  "--uid",
  String(SANDBOX_UID),
  "--gid",
  String(SANDBOX_UID),
  "--cap-drop",
  "ALL",
];
/** bwrap ≥ 0.8: no user namespace may be made inside (the seccomp filter refuses it too). */
const NO_USERNS = ["--disable-userns"];
/** Where the seccomp filter is opened for bwrap (`--seccomp 9`). */
const SECCOMP_FD = "9";

/** How this host's bubblewrap builds the sandbox: what the probe found it accepts. */
export interface BwrapSupport {
  disableUserns: boolean;
}

let bwrapProbe: Promise<BwrapSupport | null> | null = null;

/** How an attempt's launch runs bubblewrap: its argv, and (as root) its staging. */
export interface BwrapLaunch {
  /** bwrap … (or setpriv … bwrap …, staged). */
  argv: string[];
  /**
   * As root: the staging's shell lines and fstab (host_identity.ts), and unshare's path;
   * else null.
   */
  staging: { script: string; fstab: string; at: string; unshare: string } | null;
}

/**
 * Bubblewrap with `options` around `command`: as the user running dvergr, or, when that is
 * root, as the sandbox's own host uid `id`, staged at `stage` (host_identity.ts). Its
 * programs are found once on `path` (dvergr's PATH), by absolute path from then on.
 */
export function bwrapLaunch(
  staged: { id: HostIdentity; stage: Stage } | null,
  options: string[],
  command: string[],
  path: string,
): BwrapLaunch {
  if (staged === null) {
    return { argv: [hostProgram("bwrap", path), ...options, ...command], staging: null };
  }
  const s = stagedBwrap(staged.id, staged.stage, options, command, SYSTEM_DIRS, sourceKind, {
    setpriv: hostProgram("setpriv", path),
    // setpriv execs it as the sandbox's host uid.
    bwrap: hostProgram("bwrap", path, true),
    mount: hostProgram("mount", path),
  });
  return {
    argv: s.argv,
    staging: {
      script: s.script,
      fstab: s.fstab,
      at: staged.stage.fstab,
      unshare: hostProgram("unshare", path),
    },
  };
}

async function bwrapAccepts(
  id: HostIdentity | null,
  args: string[],
  path: string,
): Promise<boolean> {
  // As root, a directory only root can reach is bound too: what staging must carry through.
  const hidden = id === null ? null : await Deno.makeTempDir({ prefix: "dvergr-probe-" });
  try {
    const stage = id === null || hidden === null
      ? null
      : { dir: await stageDir(), fstab: `${hidden}/fstab` };
    const launch = bwrapLaunch(
      id === null || stage === null ? null : { id, stage },
      [
        ...args,
        ...systemArgs(),
        ...(hidden ? ["--ro-bind", hidden, "/dvergr-probe"] : []),
        "--die-with-parent",
      ],
      ["/bin/sh", "-c", hidden ? "test -d /dvergr-probe" : "exit 0"],
      path,
    );
    const argv = await launchArgv(
      { cgroup: null, held: false, marks: false, filter: null, rlimits: null },
      launch,
    );
    const out = await new Deno.Command(argv[0], {
      args: argv.slice(1),
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    return out.success;
  } catch {
    return false;
  } finally {
    if (hidden) await Deno.remove(hidden, { recursive: true }).catch(() => {});
  }
}

/**
 * What bubblewrap on this host can do, tried once per process with the same identity and
 * mounts an attempt gets, launched as an attempt is (as root: staged, as the sandbox's host
 * uid): null when it cannot build the sandbox (missing, too old, user namespaces refused, or,
 * as root, no private mount namespace). `DVERGR_ISOLATION=none` turns it off. Throws for a bad
 * DVERGR_SANDBOX_HOST_UID/GID.
 */
export function bwrapSupport(
  env: (name: string) => string | undefined,
): Promise<BwrapSupport | null> {
  if (env("DVERGR_ISOLATION") === "none") return Promise.resolve(null);
  const id = sandboxHostIdentity(env);
  const path = env("PATH") ?? DEFAULT_PATH;
  // The first ask (cli/benchmark.ts asks while the bundle is installed) also starts the probes
  // the first attempts await (warmAttemptProbes), beside this one instead of after it: in a
  // 4-case job they ran after it, one after another, ~0.1 s of the start's wall.
  if (bwrapProbe === null) warmAttemptProbes(env, id !== null);
  bwrapProbe ??= (async () => {
    // The sized /tmp tmpfs needs bwrap ≥ 0.5, as the world's writable directories do.
    if (await bwrapAccepts(id, [...IDENTITY_ARGS, ...NO_USERNS], path)) {
      return { disableUserns: true };
    }
    if (await bwrapAccepts(id, IDENTITY_ARGS, path)) return { disableUserns: false };
    return null;
  })();
  return bwrapProbe;
}

/** Whether bubblewrap can build the sandbox on this host (see bwrapSupport). */
export async function detectBwrap(env: (name: string) => string | undefined): Promise<boolean> {
  return (await bwrapSupport(env)) !== null;
}

/**
 * bwrap's arguments for the sandbox's identity and walls, before the mounts: an unprivileged
 * uid without capabilities, no nested user namespaces, and (where `filterFd` is given) the
 * seccomp filter read from that file descriptor.
 */
export function identityArgs(support: BwrapSupport, filterFd: string | null): string[] {
  return [
    ...IDENTITY_ARGS,
    ...(support.disableUserns ? NO_USERNS : []),
    ...(filterFd ? ["--seccomp", filterFd] : []),
  ];
}

/**
 * The first process of an attempt, one shell that execs `launch`'s argv after it has set the
 * rlimits (`rlimits`, ulimit lines), made and joined the attempt's cgroup, made the candidate's
 * cgroup and opened it on CANDIDATE_CGROUP_FD (cgroup.ts; `held`: a sandbox's supervisor moves
 * the candidate into it), opened the marks descriptor MARKS_FD (a copy of its stderr:
 * sandbox_marks.ts) and the seccomp filter on SECCOMP_FD (each where asked), and, as root,
 * staged the sandbox's sources in one of the attempt's own mount namespaces (under
 * unshareMount(); the fstab is written here first). Exit 125 when any of them fails: no mark,
 * so a sandbox that did not start. A launch staged in the process's held namespace instead
 * runs this shell in the host's and enters that namespace with its last program (`launch`'s
 * argv begins with nsenter: stage_holder.ts).
 */
export async function launchArgv(
  p: {
    cgroup: AttemptCgroup | null;
    held: boolean;
    marks: boolean;
    filter: string | null;
    rlimits: string | null;
    /** Closes the descriptors dvergr inherited (inherited_fds.ts), before any of ours opens. */
    closing?: FdClosing;
  },
  launch: BwrapLaunch,
): Promise<string[]> {
  const lines: string[] = [];
  if (p.closing?.line) lines.push(p.closing.line);
  if (p.rlimits) lines.push(p.rlimits);
  if (p.cgroup) lines.push(p.cgroup.joinScript);
  if (p.cgroup && p.held) lines.push(p.cgroup.candidateScript);
  // `command` keeps a failed redirection from ending the shell before `exit 125`.
  if (p.marks) lines.push(OPEN_MARKS_FD);
  if (p.filter) lines.push(`command exec ${SECCOMP_FD}<${shellQuote(p.filter)} || exit 125`);
  if (launch.staging) {
    await Deno.writeTextFile(launch.staging.at, launch.staging.fstab, { mode: 0o600 });
    lines.push(launch.staging.script);
  }
  const closer = p.closing?.prefix ?? [];
  if (lines.length === 0) return [...closer, ...launch.argv];
  return [
    ...(launch.staging ? unshareMount(launch.staging.unshare) : []),
    ...closer,
    "/bin/sh",
    "-c",
    `${lines.join("\n")}\nexec "$@"`,
    "dvergr-launch",
    ...launch.argv,
  ];
}

/** Processes the supervisor and bwrap need beside the candidate's. */
const SUPERVISOR_PROCESSES = 8;

/** How long an ended sandbox's marks may take to be read (reached only if its stderr stays open). */
const MARKS_BACKSTOP_MS = 60_000;

/** How long the supervisor may take past the time limit and grace to pack the world. */
const SUPERVISOR_MARGIN_MS = 30_000;

/**
 * How long dvergr's own setup of a sandbox (bubblewrap, the seeds, the gateway's forwarder)
 * may take before the candidate's command starts; past it the attempt is a fault of the host.
 */
const SETUP_LIMIT_MS = 120_000;

let prlimitProbe: Promise<boolean> | null = null;
function hasPrlimit(): Promise<boolean> {
  prlimitProbe ??= new Deno.Command("prlimit", {
    args: ["--nofile=64:64", "true"],
    stdout: "null",
    stderr: "null",
  }).output().then((o) => o.success, () => false);
  return prlimitProbe;
}

function limitText(name: LimitName): string {
  switch (name) {
    case "memory":
      return "memory limit";
    case "processes":
      return "process limit";
    case "world-bytes":
      return "limit on bytes written under the world (a writable directory is full)";
    case "open-files":
      return "open-file limit";
  }
}

/** Which kernel mechanism enforces each limit of an attempt, as recorded in its evidence. */
async function enforcement(
  cgroup: string | null,
  isolated: boolean,
): Promise<Record<string, string>> {
  // Memory and processes fall to the rlimits only without a cgroup: no probe of prlimit then.
  const rlimit = cgroup !== null
    ? ""
    : (await hasPrlimit())
    ? "rlimit"
    : "none (prlimit is missing)";
  return {
    memory: cgroup ?? `${rlimit} (RLIMIT_DATA, per process)`,
    processes: cgroup ?? `${rlimit} (RLIMIT_NPROC, per user; root is exempt)`,
    openFiles: "rlimit (RLIMIT_NOFILE, per process)",
    worldBytes: isolated
      ? "tmpfs of the sandbox (per writable directory and /tmp)"
      : "rlimit (RLIMIT_FSIZE, per file only)",
    time: !isolated
      ? "host (its process group)"
      : cgroup
      ? `host (the candidate's own ${cgroup}, killed at the limit and grace)`
      : "host (signals the sandbox's init, its supervisor, at the limit and at the grace's end)",
  };
}

let setsidProbe: Promise<boolean> | null = null;
function hasSetsid(): Promise<boolean> {
  setsidProbe ??= new Deno.Command("setsid", { args: ["true"], stdout: "null", stderr: "null" })
    .output().then((o) => o.success, () => false);
  return setsidProbe;
}

/** Where bubblewrap arguments mount something inside the sandbox (not their sources). */
export function mountTargets(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--ro-bind" || args[i] === "--bind") out.push(args[i += 2]);
    else if (args[i] === "--tmpfs" || args[i] === "--dir") out.push(args[i += 1]);
  }
  return out;
}

/** Keeps the last `max` bytes of a stream and counts all of them. */
class Tail {
  private chunks: Uint8Array[] = [];
  private kept = 0;
  total = 0;
  constructor(private readonly max: number) {}
  push(chunk: Uint8Array): void {
    this.total += chunk.length;
    if (chunk.length >= this.max) {
      this.chunks = [chunk.slice(chunk.length - this.max)];
      this.kept = this.max;
      return;
    }
    this.chunks.push(chunk.slice());
    this.kept += chunk.length;
    while (this.kept - this.chunks[0].length >= this.max) this.kept -= this.chunks.shift()!.length;
  }
  text(): string {
    const all = new Uint8Array(this.kept);
    let off = 0;
    for (const c of this.chunks) {
      all.set(c, off);
      off += c.length;
    }
    const start = Math.max(0, all.length - this.max);
    return new TextDecoder().decode(all.subarray(start));
  }
}

/**
 * Reads `stream` into `tail`, the sandbox's marks (on stderr) taken out by `marks`. With its
 * reader's read(), not `for await`: the streams' async iterator cost dvergr ~0.07 ms of CPU
 * more per stream (0.14-0.2 ms an attempt for its two, measured here).
 */
async function drain(
  stream: ReadableStream<Uint8Array>,
  tail: Tail,
  marks: StderrMarks | null = null,
): Promise<void> {
  try {
    const reader = stream.getReader();
    for (;;) {
      const { done, value: chunk } = await reader.read();
      if (done) break;
      const kept = marks ? marks.feed(chunk) : chunk;
      if (kept.length > 0) tail.push(kept);
    }
  } catch {
    // The process was killed mid-write: what was read is kept.
  } finally {
    const rest = marks?.end();
    if (rest && rest.length > 0) tail.push(rest);
  }
}

/** The world's top-level entries; those named in `writable` say whether they are empty. */
/**
 * The world's top-level entries, the writable ones marked when empty. Synchronous, as the
 * mounts' stat in sandboxArgv: the attempt's own world directory, read on every attempt,
 * where each asynchronous read costs a thread's hand-off more (~60 us of CPU an attempt for
 * the three measured here).
 */
function worldTopLevel(
  dir: string,
  writable: Set<string>,
): (Deno.DirEntry & { empty: boolean })[] {
  const out: (Deno.DirEntry & { empty: boolean })[] = [];
  for (const e of Deno.readDirSync(dir)) {
    out.push({
      ...e,
      empty: writable.has(e.name) && e.isDirectory && isEmpty(`${dir}/${e.name}`),
    });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
}

function isEmpty(dir: string): boolean {
  for (const _ of Deno.readDirSync(dir)) return false;
  return true;
}

function faultOutcome(message: string, isolated: boolean, evidence = {}): CandidateOutcome {
  return {
    status: "fault",
    message,
    usage: { ...NO_USAGE },
    billedMicros: 0,
    listMicros: null,
    isolated,
    evidence,
  };
}

/** Extra bwrap arguments with every unsized `--tmpfs` bounded to `bytes` (a HOME, say). */
function sizedTmpfs(extra: string[], bytes: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < extra.length; i++) {
    if (extra[i] === "--tmpfs" && extra[i - 2] !== "--size") out.push("--size", String(bytes));
    out.push(extra[i]);
  }
  return out;
}

/**
 * Host files of one sandboxed attempt, beside its world: the pack, and those every attempt
 * of the process shares (the seccomp filter, the supervisor's shell); and the supervisor's
 * marks, read from the attempt's stderr.
 */
interface SandboxFiles extends SharedSandboxFiles {
  /**
   * The attempt's own directory (0711: the sandbox's uid passes through to its pack), holding
   * the pack and, as root, the fstab: staged whole by a line of the fstab (host_identity.ts).
   */
  dir: string;
  capture: string;
  marks: StderrMarks;
}

/**
 * What every sandboxed attempt of this process shares beside its world, made once per worlds
 * directory (the same bytes for each: no copy of /bin/sh and no filter file per attempt).
 */
interface SharedSandboxFiles {
  /**
   * A directory of its own (0711) that holds only `sh`, a copy of /bin/sh that may be
   * executed, not read (SUPERVISOR_SHELL), bound read-only at SUPERVISOR_BIN: a directory is
   * staged (as root) by a line of the attempt's fstab, a file by a `mount` of its own.
   */
  bin: string;
  /** The seccomp filter (0600, opened by the launch); null where dvergr has no table for this architecture. */
  filter: string | null;
}

const sharedFiles = new Map<string, Promise<SharedSandboxFiles>>();
/** The directories made for them, removed when the process ends. */
const madeShared = new Set<string>();

async function makeSharedFiles(parent: string): Promise<SharedSandboxFiles> {
  const dir = await Deno.makeTempDir({ dir: parent, prefix: `sandbox-${Deno.pid}-` });
  if (madeShared.size === 0) {
    globalThis.addEventListener("unload", () => {
      for (const d of madeShared) removeTreeQuietly(d);
    });
  }
  madeShared.add(dir);
  const bin = join(dir, "bin");
  await Deno.mkdir(bin);
  // Execute only, for its owner too: no process of the sandbox has a capability to read past it.
  const shell = join(bin, "sh");
  await Deno.copyFile("/bin/sh", shell);
  await Deno.chmod(shell, 0o111);
  await Deno.chmod(bin, 0o711);
  const bpf = seccompFilter(Deno.build.arch);
  if (!bpf) return { bin, filter: null };
  const filter = join(dir, "seccomp");
  await Deno.writeFile(filter, bpf, { mode: 0o600 });
  return { bin, filter };
}

/**
 * The shared files beside the worlds in `parent`, made on the first attempt there and made
 * again when they are gone (a home's worlds directory is removed when it closes).
 */
async function sharedSandboxFiles(parent: string): Promise<SharedSandboxFiles> {
  for (;;) {
    const held = sharedFiles.get(parent);
    if (held === undefined) {
      const made = makeSharedFiles(parent);
      sharedFiles.set(parent, made);
      made.catch(() => {
        if (sharedFiles.get(parent) === made) sharedFiles.delete(parent);
      });
      return await made;
    }
    const files = await held.catch(() => null);
    if (files !== null && isFileSync(join(files.bin, "sh"))) return files;
    if (sharedFiles.get(parent) === held) sharedFiles.delete(parent);
  }
}

function isFileSync(path: string): boolean {
  try {
    return Deno.lstatSync(path).isFile;
  } catch {
    return false;
  }
}

/**
 * Made per attempt in the attempt's own directory (never a shared path in /tmp), with
 * synchronous calls: three small ones of dvergr's own directory, where asynchronous ones cost
 * a thread's hand-off each (20-70 us of CPU, measured here). The directory of an attempt that
 * has ended is kept for a later one beside the same worlds (keepAttemptDir): its pack is made
 * empty and its mode 0600 again (the sandbox's uid owns it and may have changed it), where a
 * new directory, its pack and their removal cost dvergr's main thread ~0.5 ms an attempt
 * (ext4 here: 8% of its samples in a 200-case job, an inode made and freed each).
 */
async function sandboxFiles(dir: string): Promise<SandboxFiles> {
  const shared = await sharedSandboxFiles(dir);
  for (let own = spareAttemptDirs.get(dir)?.pop(); own !== undefined;) {
    try {
      const capture = `${own}/capture.tar`;
      Deno.writeFileSync(capture, new Uint8Array(), { mode: 0o600, create: false });
      return { ...shared, dir: own, capture, marks: new StderrMarks() };
    } catch {
      // Gone with its worlds directory (a home that closed): made anew below.
      removeTreeQuietly(own);
      own = spareAttemptDirs.get(dir)?.pop();
    }
  }
  const own = Deno.makeTempDirSync({ dir, prefix: "attempt-" });
  Deno.chmodSync(own, 0o711);
  const capture = `${own}/capture.tar`;
  Deno.writeFileSync(capture, new Uint8Array(), { mode: 0o600 });
  return { ...shared, dir: own, capture, marks: new StderrMarks() };
}

/** Attempt directories of ended attempts, by their worlds directory (see sandboxFiles). */
const spareAttemptDirs = new Map<string, string[]>();

/**
 * Keeps the directory of an ended attempt (every process of its sandbox has ended) for a later
 * one, its pack emptied now and the fstab of an attempt `staged` in a namespace of its own
 * removed: nothing of the attempt stays on disk. The directory is root's (0711): no process of
 * the sandbox's uid could add or swap an entry in it. One that cannot be emptied is removed;
 * those kept when the process ends are removed then.
 */
function keepAttemptDir(files: SandboxFiles, staged: boolean): void {
  try {
    Deno.truncateSync(files.capture, 0);
  } catch {
    removeTreeQuietly(files.dir);
    return;
  }
  if (staged) removeTreeQuietly(`${files.dir}/fstab`);
  if (!sparesAtExit) {
    sparesAtExit = true;
    globalThis.addEventListener("unload", () => {
      for (const d of [...spareAttemptDirs.values()].flat()) removeTreeQuietly(d);
    });
  }
  const parent = dirname(files.dir);
  const spare = spareAttemptDirs.get(parent) ?? [];
  spare.push(files.dir);
  spareAttemptDirs.set(parent, spare);
}
let sparesAtExit = false;

/** Why the host stopped an attempt's process itself. */
type HostStop = "limit" | "setup" | "abort";

/** The host's stop of an attempt's process group: SIGTERM, then SIGKILL after `graceMs`. */
function hostStopper(kill: (signal: Deno.Signal) => void, graceMs: number) {
  let why: HostStop | null = null;
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  return {
    get why() {
      return why;
    },
    stop(reason: HostStop) {
      if (why !== null) return;
      why = reason;
      kill("SIGTERM");
      killTimer = setTimeout(() => kill("SIGKILL"), graceMs);
    },
    clear() {
      if (killTimer !== undefined) clearTimeout(killTimer);
    },
  };
}

/** What decides how an attempt's process ended. */
interface ProcessFacts {
  /** The sandbox's marks (null without a sandbox). */
  marks: SandboxMarks | null;
  stopped: HostStop | null;
  exceeded: LimitName[];
  timedOut: boolean;
  back: ReadBack | null;
  status: Deno.CommandStatus;
  stderr: string;
  timeoutMs: number;
  limits: ResourceLimits;
  /** The bundle's capture directories (world paths). */
  capture: string[];
}

function lastLine(text: string): string {
  return text.trim().split("\n").pop()?.trim() ?? "";
}

/**
 * How an attempt's process ended. A fault only for what the candidate cannot cause: a sandbox
 * or a command that never started (the host's marks say so, and the candidate cannot undo a
 * mark). From its start on, everything is the candidate's: a killed supervisor, a cut or
 * forged pack, a limit, exit 126/127.
 */
function processEnding(
  name: string,
  f: ProcessFacts,
): { status: CandidateOutcome["status"]; message?: string } {
  if (f.marks && f.stopped === "setup") {
    return {
      status: "fault",
      message: `Cannot start "${name}": the sandbox did not start within ${
        SETUP_LIMIT_MS / 1000
      } s`,
    };
  }
  if (f.marks && !f.marks.started && f.stopped !== "abort") {
    return {
      status: "fault",
      message: `Cannot start "${name}": the sandbox did not start: ${lastLine(f.stderr)}`,
    };
  }
  if (f.marks && f.marks.goAt === null && f.stopped !== "abort") {
    return {
      status: "fault",
      message: `Cannot start "${name}": its command did not start in the sandbox: ${
        lastLine(f.stderr)
      }`,
    };
  }
  if (f.exceeded.length > 0) {
    return {
      status: "crashed",
      message: `"${name}" went over its ${f.exceeded.map(limitText).join(" and ")} (${
        describeLimits(f.limits)
      })`,
    };
  }
  if (f.back?.status?.overPack) {
    // Not silently short of what did not fit (an answer among it): the cause, named.
    return {
      status: "crashed",
      message: `"${name}" wrote more than ${PACK_ENTRIES.toLocaleString("en-US")} entries ` +
        `under ${f.capture.join(", ")} (the most a capture reads back)`,
    };
  }
  if (f.timedOut) return { status: "timeout", message: `Stopped after ${f.timeoutMs} ms` };
  if (f.back && f.back.status === null) {
    // The candidate stopped our supervisor (or cut or replaced its pack): its own doing.
    return {
      status: "crashed",
      message: `"${name}" stopped the sandbox's supervisor before its files were read back`,
    };
  }
  const code = f.back?.status?.exit ?? f.status.code;
  if (!f.status.signal && code === 0) return { status: "completed" };
  // 126/127: the shell could not run what the command line named. The preflight found its
  // program; anything else (a script's own `exec missing`, a program it deleted) is the
  // candidate's doing, and a failure: as a fault it would be retried, a way to turn a wrong
  // answer into another try.
  if (!f.status.signal && (code === 126 || code === 127)) {
    return { status: "crashed", message: `"${name}" ${shellCouldNotRun(code, f.stderr)}` };
  }
  const how = f.status.signal ? `signal ${f.status.signal}` : `exit status ${code}`;
  return { status: "crashed", message: `"${name}" ended with ${how}` };
}

/** What walls the attempt's processes had, as recorded in its evidence. */
function sandboxEvidence(env: (name: string) => string | undefined): Record<string, unknown> {
  return {
    uid: SANDBOX_UID,
    hostUid: sandboxHostIdentity(env)?.uid ?? Deno.uid(),
    capabilities: "none",
    seccomp: deniedSyscalls(Deno.build.arch).length > 0
      ? "on"
      : `none (no system call table for ${Deno.build.arch})`,
  };
}

/** The identity of a command candidate: what decides its behaviour. */
export function commandIdentity(spec: CommandSpec): Record<string, unknown> {
  return {
    kind: "command",
    command: spec.command,
    mounts: [...(spec.mounts ?? [])].sort(),
    env: Object.fromEntries(Object.entries(spec.env ?? {}).sort()),
    passEnv: [...(spec.passEnv ?? [])].sort(),
    network: spec.network ?? false,
    ...(spec.maxRequests !== undefined ? { maxRequests: spec.maxRequests } : {}),
    ...(spec.models !== undefined ? { models: [...spec.models].sort() } : {}),
  };
}

/** Why the command's program cannot run where the command will (null: it can, or unknown). */
function programProblem(
  spec: CommandSpec,
  isolation: Isolation,
  hostPath: string,
  id: HostIdentity | null,
): { message: string; hint: string } | null {
  const program = commandProgram(spec.command);
  if (program === null) return null;
  const path = spec.env?.PATH ?? hostPath;
  const isolated = isolation === "bwrap";
  const roots = isolated ? sandboxRoots(spec.mounts ?? []) : null;
  // As root the sandbox's uid owns nothing: it runs what every user may run.
  const found = lookUpProgram(
    program,
    path,
    (d) => roots === null || under(roots, d),
    id ? 0o001 : 0o111,
  );
  if (found === null || found.found) return null;
  const where = isolated ? "the sandbox" : "this host";
  const what = found.reason === "not-executable" ? "is not executable" : "does not exist";
  const message = program.includes("/")
    ? `its program "${program}" ${what} in ${where}`
    : `its program "${program}" ${
      found.reason === "not-executable" ? "is not executable" : "is not"
    } on ${where}'s PATH (${found.searched.join(":") || "no directory of PATH is visible"})`;
  const hint = id && found.reason === "not-executable"
    ? `dvergr runs as root, so the candidate runs as the unprivileged uid ${id.uid}: make the ` +
      "program executable by all (chmod o+rx)"
    : isolated
    ? "Check the program's spelling. The sandbox sees the system's directories, deno's and " +
      "the --mount (or :mounts) directories: --mount the directory that holds the program " +
      "and call it by its absolute path"
    : "Check the program's spelling, or call it by its absolute path";
  return { message, hint };
}

/** The environment of an attempt's process: dvergr's variables, the gateway's, the spec's. */
function attemptEnvironment(
  spec: CommandSpec,
  opts: CommandOptions,
  ctx: AttemptContext,
  gateway: AttemptGateway | null,
): Record<string, string> {
  const isolated = opts.isolation === "bwrap";
  const env: Record<string, string> = {
    PATH: opts.env("PATH") ?? DEFAULT_PATH,
    HOME: isolated ? "/tmp" : (opts.env("HOME") ?? ctx.worldDir),
    LANG: "C.UTF-8",
    DVERGR_WORLD: isolated ? "/" : ctx.worldDir,
    DVERGR_CASE: ctx.caseId ?? "",
    DVERGR_REPETITION: String(ctx.repetition),
    DVERGR_TIMEOUT_MS: String(ctx.timeoutMs),
    DVERGR_CAPTURE: ctx.writable.join(":"),
  };
  if (ctx.task.length <= MAX_ENV_TASK) env.DVERGR_TASK = ctx.task;
  else env.DVERGR_TASK_ON_STDIN_ONLY = "1";
  if (isolated) env.TMPDIR = "/tmp";
  if (gateway) Object.assign(env, gateway.env);
  for (const name of spec.passEnv ?? []) {
    const v = opts.env(name);
    if (v !== undefined) env[name] = v;
  }
  return { ...env, ...spec.env };
}

/** What every attempt of one command candidate shares. */
interface CommandSetup {
  spec: CommandSpec;
  opts: CommandOptions;
  limits: ResourceLimits;
  /** Between SIGTERM and SIGKILL, ms. */
  grace: number;
  tailBytes: number;
}

/** The command line run by the shell of an attempt (plain words: exec'd without it). */
function shellArgv(spec: CommandSpec): string[] {
  return plainArgv(spec.command) ?? ["/bin/sh", "-c", spec.command];
}

/**
 * bubblewrap's options for one attempt and its command (the supervisor around the candidate's
 * shell), or why the sandbox cannot be built (a missing mount, a world name that would hide
 * the sandbox's own).
 */
async function sandboxArgv(
  s: CommandSetup,
  ctx: AttemptContext,
  gateway: AttemptGateway | null,
  files: SandboxFiles,
  held: boolean,
): Promise<{ options: string[]; command: string[] } | string> {
  const { spec, limits } = s;
  const support = (await bwrapSupport(s.opts.env)) ?? { disableUserns: false };
  const args = [
    ...identityArgs(support, files.filter ? SECCOMP_FD : null),
    "--die-with-parent",
    "--new-session",
    // The supervisor is the PID namespace's init: no bwrap init of the candidate's uid, whose
    // memory the candidate could write, and no SIGSTOP or SIGKILL of the supervisor from inside.
    "--as-pid-1",
  ];
  if (spec.network) args.push("--share-net");
  args.push(...systemArgs(limits.worldBytes));
  for (const m of spec.mounts ?? []) {
    try {
      Deno.statSync(m);
    } catch {
      return `its mount "${m}" does not exist`;
    }
    args.push("--ro-bind", m, m);
  }
  // Mount points of the gateway and of bwrapExtra must not land inside the world.
  const taken = new Set(
    mountTargets([...(spec.bwrapExtra ?? []), ...(gateway ? gateway.bwrapArgs() : [])])
      .map((a) => a.split("/")[1]),
  );
  const writable = writableTopLevel(ctx.writable);
  const entries = worldTopLevel(ctx.worldDir, new Set(writable));
  for (const name of [...entries.map((e) => e.name), ...writable]) {
    if (RESERVED.has(name) || (taken.has(name) && name !== "")) {
      return `the world has "/${name}", which would hide the sandbox's own /${name}`;
    }
  }
  args.push(...sandboxWorldArgs(ctx.worldDir, entries, writable, limits, files.capture));
  args.push("--ro-bind", files.bin, SUPERVISOR_BIN);
  args.push(...sizedTmpfs(spec.bwrapExtra ?? [], limits.worldBytes));
  if (gateway) args.push(...gateway.bwrapArgs());
  args.push(...sealArgs(limits.worldBytes), "--chdir", "/");
  // The go mark comes after the gateway's forwarder listens, just before the candidate.
  return {
    options: args,
    command: superviseArgv(shellArgv(spec), {
      writable,
      capture: ctx.writable,
      helpers: gateway?.forwarders ?? undefined,
      candidateCgroup: held,
    }),
  };
}

/**
 * The argv of an attempt's first process (the sandbox, or the shell without one) behind the
 * launch shell (rlimits, cgroup, marks, seccomp, staging) and, without a cgroup, prlimit; or
 * why it cannot start; behind setsid where it exists (then the process leads a group of its
 * own: `grouped`). Not Deno's `detached` spawn: measured here, it spends 28–41 ms of dvergr's
 * main thread per spawn against ~1 ms, and setsid ~1 ms of CPU. A sandbox would not need the
 * group (the host's kill of bwrap takes its PID namespace: --die-with-parent), but its session
 * keeps a terminal's Ctrl-C from the launch's bwrap, and dropping setsid showed no gain: a
 * 200-case job beside other load (10-14) took 16.2 s wall against 12.8 s with it in one series
 * of 7 alternating pairs, 6.5 against 6.0 in another of 6 (CPU 9.54/9.15 s, then 7.56/7.33).
 * With autogroup scheduling a session is a scheduling group of its own: the launch is then not
 * queued behind dvergr's own threads.
 */
async function attemptArgv(
  s: CommandSetup,
  ctx: AttemptContext,
  gateway: AttemptGateway | null,
  files: SandboxFiles | null,
  cgroup: AttemptCgroup | null,
  staged: StagedAttempt | null,
): Promise<{ argv: string[]; grouped: boolean; held?: HeldStage } | string> {
  const sandbox = files ? await sandboxArgv(s, ctx, gateway, files, cgroup !== null) : null;
  if (typeof sandbox === "string") return sandbox;
  const path = s.opts.env("PATH") ?? DEFAULT_PATH;
  // The attempt's own directories: reached through their parents, bound once when held.
  const own = [ctx.worldDir, ...(files ? [files.dir] : []), ...(gateway?.dir ? [gateway.dir] : [])];
  const held = sandbox && staged ? await heldLaunch(staged, sandbox, own, path) : null;
  try {
    const inner = held?.launch ??
      (sandbox
        ? bwrapLaunch(staged, sandbox.options, sandbox.command, path)
        : { argv: shellArgv(s.spec), staging: null });
    return { ...await launchBehind(s, ctx, files, cgroup, inner), held: held?.hold };
  } catch (e) {
    held?.hold.release();
    throw e;
  }
}

/** An attempt staged as root: the sandbox's uid and the stage, and who its mount point is. */
interface StagedAttempt {
  id: HostIdentity;
  stage: Stage;
  made: string;
}

/**
 * The sandbox of an attempt staged in the process's held namespace (stage_holder.ts), with its
 * hold; null when it cannot be (a source it cannot hold, no nsenter, a holder that did not
 * start): the attempt then stages in a namespace of its own, as bwrapLaunch does.
 */
async function heldLaunch(
  staged: StagedAttempt,
  sandbox: { options: string[]; command: string[] },
  own: string[],
  path: string,
): Promise<{ launch: BwrapLaunch; hold: HeldStage } | null> {
  const nsenter = hostProgram("nsenter", path);
  if (!nsenter.startsWith("/")) return null;
  const programs = {
    setpriv: hostProgram("setpriv", path),
    bwrap: hostProgram("bwrap", path, true),
  };
  const plan = heldBwrap(staged.id, sandbox.options, sandbox.command, SYSTEM_DIRS, own, {
    kind: sourceKind,
    passable: (dir) => passableBy(staged.id, dir),
  }, programs);
  if (plan === null) return null;
  const held = await holdStage(
    { dir: staged.stage.dir, made: staged.made },
    plan.roots,
    {
      ...programs,
      unshare: hostProgram("unshare", path),
      mount: hostProgram("mount", path),
      umount: hostProgram("umount", path),
      mkdir: hostProgram("mkdir", path),
      nsenter,
    },
    heldReach([programs.setpriv, programs.bwrap]),
    staged.id,
  );
  if (typeof held === "string") return null;
  // nsenter drops to the sandbox's uid itself where its drop is as clean as setpriv's: one
  // program fewer per attempt (stage_holder.ts).
  const argv = held.enterAs
    ? [...held.enterAs, ...plan.sandbox(held.at)]
    : [...held.enter, ...plan.argv(held.at)];
  return { launch: { argv, staging: null }, hold: held };
}

/**
 * What the attempts reach in the held namespace besides the stage (stage_holder.ts detaches the
 * rest): the system directories and the devices the sandbox's bwrap binds, /proc (bwrap reads
 * its mountinfo there, and binds parts of it), and the install prefix of each program run there
 * (`…/bin/x` → `…`, by its path and its target's: a bwrap under /opt with its own libraries).
 */
function heldReach(programs: string[]): string[] {
  const key = programs.join("\0");
  const known = reaches.get(key);
  if (known !== undefined) return known;
  const prefixes = programs.flatMap((p) => {
    let real = p;
    try {
      real = Deno.realPathSync(p);
    } catch {
      // Not there: the launch fails as it would without the holder.
    }
    return [p, real].filter(isAbsolute).map((q) => dirname(dirname(q)));
  });
  const reach = [...SYSTEM_DIRS, "/proc", ...DEV_NODES, ...prefixes.filter((d) => d !== "/")];
  reaches.set(key, reach);
  return reach;
}
const reaches = new Map<string, string[]>();

/** The argv of an attempt's first process around `inner` (see attemptArgv). */
async function launchBehind(
  s: CommandSetup,
  ctx: AttemptContext,
  files: SandboxFiles | null,
  cgroup: AttemptCgroup | null,
  inner: BwrapLaunch,
): Promise<{ argv: string[]; grouped: boolean }> {
  const memory = cgroup === null && (await hasPrlimit())
    ? rlimitArgv(s.limits, { cgroup: false })
    : null;
  const limited = await launchArgv(
    {
      closing: await launchFdClosing(s.opts.env("PATH") ?? DEFAULT_PATH),
      cgroup,
      held: files !== null,
      marks: files !== null,
      filter: files?.filter ?? null,
      rlimits: rlimitLines(s.limits, {
        supervisedDirs: files ? writableTopLevel(ctx.writable).length : null,
      }),
    },
    { ...inner, argv: [...(memory ?? []), ...inner.argv] },
  );
  const grouped = await hasSetsid();
  const setsid = hostProgram("setsid", s.opts.env("PATH") ?? DEFAULT_PATH);
  return { argv: grouped ? [setsid, ...limited] : limited, grouped };
}

/** An attempt's process under the host's watch: its output kept, its limits timed. */
interface WatchedProcess {
  stopper: ReturnType<typeof hostStopper>;
  /** The host found the candidate's cgroup still running at the limit and grace, and killed it. */
  readonly overran: boolean;
  out: Tail;
  err: Tail;
  /** Waits for the process, stops its group, drains its output (2 s at most). */
  ended(): Promise<{ status: Deno.CommandStatus; endedAt: number }>;
}

/**
 * Feeds the task to `child`, keeps its output's tails, and stops its group at the time
 * limit or on abort. Without a sandbox the limit counts from the spawn: the process is the
 * candidate's own. In one, the supervisor enforces it from the candidate's go (so the world
 * can still be read back), and the host holds it to that: it signals the supervisor (the
 * sandbox's init, sandbox_init.ts) at go + the limit and at the grace's end, whatever the
 * candidate did to the supervisor's timer (a process of its uid); with the candidate's cgroup
 * (`stopCandidate`) it also kills what is left in it at go + the limit + the grace, and the
 * attempt is timed out. The host stops the whole sandbox only when it did not end
 * SUPERVISOR_MARGIN_MS after that, or its setup never ends.
 */
function watchProcess(
  s: CommandSetup,
  ctx: AttemptContext,
  child: Deno.ChildProcess,
  grouped: boolean,
  marks: StderrMarks | null,
  stopCandidate: (() => Promise<boolean>) | null,
): WatchedProcess {
  let reaped = false;
  const kill = (signal: Deno.Signal) => {
    // A reaped pid may be another process's by now; a group outlives its leader.
    if (reaped && !grouped) return;
    try {
      Deno.kill(grouped ? -child.pid : child.pid, signal);
    } catch {
      // Already gone.
    }
  };
  const stopper = hostStopper(kill, s.grace);
  let limit: ReturnType<typeof setTimeout> | undefined;
  let held: ReturnType<typeof setTimeout> | undefined;
  const signals: ReturnType<typeof setTimeout>[] = [];
  let ended = false;
  let overran = false;
  let stopping: Promise<void> = Promise.resolve();
  if (marks) {
    limit = setTimeout(() => stopper.stop("setup"), SETUP_LIMIT_MS);
    marks.onGo(() => {
      clearTimeout(limit);
      if (stopper.why !== null || ended) return;
      // The clock of the sandbox: the supervisor keeps no timer of its own (it would be a
      // process of the candidate's uid, which the candidate could stop).
      const signal = (last: boolean) => async () => {
        if (ended) return;
        const sent = await signalSandboxInit(child.pid, HOST_TIMER_SIGNAL);
        // No init to signal while the sandbox still runs (a kernel that shows neither
        // children nor parents?): the whole sandbox goes at the grace's end, its world unread.
        if (!sent && last && !ended) stopper.stop("limit");
      };
      signals.push(
        setTimeout(signal(false), ctx.timeoutMs),
        setTimeout(signal(true), ctx.timeoutMs + s.grace),
      );
      if (stopCandidate) {
        held = setTimeout(() => {
          if (ended) return;
          stopping = stopCandidate().then((had) => {
            if (had) overran = true;
          });
        }, ctx.timeoutMs + s.grace);
      }
      limit = setTimeout(
        () => stopper.stop("limit"),
        ctx.timeoutMs + s.grace + SUPERVISOR_MARGIN_MS,
      );
    });
  } else limit = setTimeout(() => stopper.stop("limit"), ctx.timeoutMs);
  const onAbort = () => stopper.stop("abort");
  if (ctx.signal.aborted) onAbort();
  ctx.signal.addEventListener("abort", onAbort, { once: true });

  const out = new Tail(s.tailBytes);
  const err = new Tail(s.tailBytes);
  const drained = Promise.all([drain(child.stdout, out), drain(child.stderr, err, marks)]);
  const feed = (async () => {
    const w = child.stdin.getWriter();
    try {
      await w.write(new TextEncoder().encode(ctx.task));
      await w.close();
    } catch {
      // The process does not read its stdin, or exited first: not an error.
    }
  })();
  return {
    stopper,
    out,
    err,
    get overran() {
      return overran;
    },
    async ended() {
      const status = await child.status;
      const endedAt = performance.now();
      ended = true;
      reaped = true;
      clearTimeout(limit);
      clearTimeout(held);
      signals.forEach(clearTimeout);
      // A stop of the candidate's cgroup under way decides whether it overran.
      await stopping;
      ctx.signal.removeEventListener("abort", onAbort);
      // Whatever the process left running in its group goes with it.
      kill("SIGKILL");
      stopper.clear();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.all([drained, feed]),
        new Promise((r) => timer = setTimeout(r, 2000)),
      ]);
      clearTimeout(timer);
      // The marks came before anything the candidate wrote: every one there was is read once
      // go was or the stream has ended (which the sandbox's end brings: no process of it is
      // left to hold the pipe). A backstop only for a holder we do not know of.
      if (marks) {
        await Promise.race([
          marks.settled(),
          new Promise((r) => timer = setTimeout(r, MARKS_BACKSTOP_MS)),
        ]);
        clearTimeout(timer);
      }
      return { status, endedAt };
    },
  };
}

/** What an attempt's process left: how it ended, what came back, what it went over. */
interface ProcessResult {
  status: Deno.CommandStatus;
  endedAt: number;
  marks: SandboxMarks | null;
  back: ReadBack | null;
  exceeded: LimitName[];
  cgroupName: string | null;
}

/** The evidence of an attempt's process and how it ended, as its outcome. */
async function processOutcome(
  s: CommandSetup,
  ctx: AttemptContext,
  w: WatchedProcess,
  r: ProcessResult,
  started: number,
): Promise<CandidateOutcome & { stdout: string }> {
  const { back, marks, status, exceeded } = r;
  const isolated = back !== null;
  const stoppedByHost = w.stopper.why !== null;
  // The host's own stop of the candidate's cgroup is the same verdict as the supervisor's.
  const timedOut = w.overran ||
    (back ? back.status?.timedOut === true || stoppedByHost : stoppedByHost);
  const evidence = {
    command: s.spec.command,
    isolated,
    exitCode: status.signal ? null : (back?.status?.exit ?? status.code),
    signal: status.signal ?? null,
    timedOut,
    elapsedMs: Math.round(performance.now() - started),
    // From the candidate's own start to the sandbox's end (its stop and pack included;
    // dvergr's setup before it not counted).
    ...(marks?.goAt != null ? { ranMs: Math.round(r.endedAt - marks.goAt) } : {}),
    stdoutBytes: w.out.total,
    stderrBytes: w.err.total,
    stdoutTail: w.out.text(),
    stderrTail: w.err.text(),
    ...(isolated ? { sandbox: sandboxEvidence(s.opts.env) } : {}),
    limits: {
      ...limitsIdentity(s.limits),
      enforcedBy: await enforcement(r.cgroupName, isolated),
      exceeded,
      ...(back?.status?.full.length ? { full: back.status.full } : {}),
    },
    ...(back
      ? {
        readBack: {
          files: back.files,
          bytes: back.bytes,
          truncated: back.truncated,
          skipped: back.skipped,
        },
      }
      : {}),
  };
  const ending = processEnding(s.spec.name, {
    marks,
    stopped: w.stopper.why,
    exceeded,
    timedOut,
    back,
    status,
    stderr: w.err.text(),
    timeoutMs: ctx.timeoutMs,
    limits: s.limits,
    capture: ctx.writable,
  });
  return {
    usage: { ...NO_USAGE },
    billedMicros: 0,
    listMicros: null,
    isolated,
    evidence,
    stdout: w.out.text(),
    ...ending,
  };
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * What the sandbox writes or connects to on the host, given to its host uid `id` for the
 * attempt (objects the attempt made itself; never through a symlink): the pack, and the
 * gateway's directory and socket. The marks descriptor (a copy of stderr) and the seccomp
 * filter need not be: the launch shell opens them as root before it drops to `id`, as it joins
 * the cgroup.
 */
function giveAttemptFiles(
  id: HostIdentity,
  files: SandboxFiles,
  gateway: AttemptGateway | null,
): void {
  giveTo(id, files.capture);
  if (!gateway?.dir) return;
  giveTo(id, gateway.dir);
  for (const path of gateway.sockets) giveTo(id, path);
}

/**
 * Throws the IO error of a pack that came back short because the host's file system holding
 * the capture file `capture` had no room (the supervisor's PACK_NO_ROOM): the host's fault,
 * which stops the run for the rerun to resume, never the candidate's failure. The candidate
 * cannot cause it: its own exit with that status leaves the supervisor with another, and the
 * supervisor says it only when tar failed and `df` saw no room.
 */
function packRoom(
  name: string,
  capture: string,
  status: Deno.CommandStatus,
  back: ReadBack,
): void {
  if (status.signal || status.code !== PACK_NO_ROOM) return;
  if (back.status !== null && !back.truncated) return;
  const cause = Object.assign(new Error(`No space left on device (os error 28): "${capture}"`), {
    code: "ENOSPC",
  });
  throw new DvergrError(
    "IO",
    `Cannot write the capture file "${capture}" of "${name}": No space left on device ` +
      "(its file system had no room for the files the sandbox packed)",
    {
      hint: "Free space on the file system of the home's worlds directory, then run the " +
        "command again: the rerun runs the attempts this run did not finish",
      cause,
    },
  );
}

/**
 * What an attempt's ended process left: the pack read back and the limits it went over. Every
 * process of the attempt, however it detached, ends with it: a sandbox's have all ended with
 * its PID namespace (its init, the supervisor, took them along), so its cgroup's removal is not
 * waited for (cgroup.ts), its limits are read (a request to the shell server, a few ms) while
 * its pack is, and its gateway, which nothing of it can reach any more, closes beside them;
 * without a sandbox, the cgroup's end kills what detached before the world is read.
 */
async function processLeft(
  s: CommandSetup,
  ctx: AttemptContext,
  files: SandboxFiles | null,
  cgroup: AttemptCgroup | null,
  gateway: AttemptGateway | null,
  status: Deno.CommandStatus,
): Promise<{ back: ReadBack | null; exceeded: LimitName[] }> {
  const ending = cgroup?.end(files !== null) ?? null;
  ending?.catch(() => {});
  if (files && gateway) gateway.finish().catch(() => {});
  const back = files
    ? await readBackWorld(ctx.worldDir, writableTopLevel(ctx.writable), files.capture)
      .catch((e) => {
        throw storageProblem(e, `the world of "${s.spec.name}" "${ctx.worldDir}"`);
      })
    : null;
  const exceeded: LimitName[] = ending ? await ending : [];
  if (back && files) packRoom(s.spec.name, files.capture, status, back);
  if (back?.status && back.status.full.length > 0) exceeded.push("world-bytes");
  return { back, exceeded };
}

/** Runs the process of one attempt (behind `gateway` when there is one). */
async function runProcess(
  s: CommandSetup,
  ctx: AttemptContext,
  gateway: AttemptGateway | null,
): Promise<CandidateOutcome & { stdout: string }> {
  const isolated = s.opts.isolation === "bwrap";
  const started = performance.now();
  const files = isolated ? await sandboxFiles(dirname(ctx.worldDir)) : null;
  // Checked at preflight: a bad setting never reaches an attempt.
  const id = isolated ? sandboxHostIdentity(s.opts.env) : null;
  let cgroup: AttemptCgroup | null = null;
  let stage: StagedAttempt | null = null;
  let release: (() => void) | null = null;
  let held: HeldStage | undefined;
  // Its directory is kept for a later attempt only once no process of it can write there.
  let running = false;
  const cannot = (why: string) => ({
    ...faultOutcome(`Cannot start "${s.spec.name}": ${why}`, isolated),
    stdout: "",
  });
  try {
    if (id && files) {
      try {
        giveAttemptFiles(id, files, gateway);
        await readableWorld(ctx.worldDir);
      } catch (e) {
        return cannot(`its files cannot be given to the sandbox's uid: ${errorText(e)}`);
      }
    }
    // A few processes more for our own supervisor (it packs the world after a fork bomb).
    cgroup = await openAttemptCgroup(
      s.limits.memoryBytes,
      s.limits.processes + SUPERVISOR_PROCESSES,
      s.opts.env,
    );
    if (cgroup === null && isolated) {
      // RLIMIT_NPROC is per user: one attempt at a time, each after the last one's sandbox.
      noteSerialOnce(s.opts.env);
      release = await unboundedAttempts.enter(ctx.signal);
      if (release === null) return cannot("the run was stopped while it waited for its turn");
      // Its time starts at its go mark; the engine's backstop, from now.
      ctx.admitted?.();
    }
    if (id && files) {
      try {
        passWorldTo(id, ctx.worldDir);
      } catch {
        // Not held then (its world cannot be passed to): the attempt stages on its own.
      }
      try {
        const point = await stagePoint(s.opts.env);
        stage = {
          id,
          stage: { dir: point.dir, fstab: `${files.dir}/fstab`, own: files.dir },
          made: point.made,
        };
      } catch (e) {
        return cannot(`its staging directory cannot be made: ${errorText(e)}`);
      }
    }
    const launch = await attemptArgv(s, ctx, gateway, files, cgroup, stage);
    if (typeof launch === "string") return cannot(launch);
    held = launch.held;
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(launch.argv[0], {
        args: launch.argv.slice(1),
        cwd: ctx.worldDir,
        clearEnv: true,
        env: attemptEnvironment(s.spec, s.opts, ctx, gateway),
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      running = true;
    } catch (e) {
      return cannot(errorText(e));
    }
    const marks = files?.marks ?? null;
    const watched = watchProcess(
      s,
      ctx,
      child,
      launch.grouped,
      marks,
      cgroup && files ? cgroup.stopCandidate : null,
    );
    const { status, endedAt } = await watched.ended();
    running = false;
    if (marks && !marks.started) held?.spoil();
    // The sandbox's PID namespace ended with it, and every process it held.
    release?.();
    const cgroupName = cgroup ? `cgroup v${cgroup.version}` : null;
    const ending = cgroup;
    cgroup = null;
    const { back, exceeded } = await processLeft(s, ctx, files, ending, gateway, status);
    return await processOutcome(s, ctx, watched, {
      status,
      endedAt,
      marks,
      back,
      exceeded,
      cgroupName,
    }, started);
  } finally {
    release?.();
    held?.release();
    await cgroup?.close();
    // Its pack emptied, and the fstab of a launch staged on its own removed.
    if (files && running) removeTreeQuietly(files.dir);
    else if (files) keepAttemptDir(files, stage !== null && held === undefined);
  }
}

/**
 * Where an attempt's gateway listens: a socket its sandbox's forwarder exposes in the
 * sandbox's own network namespace; else (the host's network, `:network true`, or no sandbox)
 * an ephemeral host loopback port, which its secret makes the attempt's (attempt_gateway.ts).
 */
function gatewayTransport(spec: CommandSpec, isolated: boolean): "unix" | "tcp" {
  return isolated && !spec.network ? "unix" : "tcp";
}

/** One attempt: the world gateway (when there is one) around the process. */
async function runAttempt(s: CommandSetup, ctx: AttemptContext): Promise<CandidateOutcome> {
  const { spec, opts } = s;
  const isolated = opts.isolation === "bwrap";
  let gateway: AttemptGateway | null = null;
  if (opts.gateway) {
    try {
      gateway = await opts.gateway(ctx, gatewayTransport(spec, isolated));
    } catch (e) {
      return faultOutcome(
        `Cannot start the world gateway of "${spec.name}": ${
          e instanceof Error ? e.message : String(e)
        }`,
        isolated,
      );
    }
  }
  let ran: CandidateOutcome & { stdout: string };
  let evidence: GatewayEvidence | null = null;
  try {
    ran = await runProcess(s, ctx, gateway);
  } finally {
    if (gateway) evidence = await gateway.finish();
  }
  const { stdout, ...outcome } = ran;
  const result = evidence ? gatewayOutcome(outcome, evidence) : outcome;
  return opts.finish ? opts.finish(result, { stdout, gateway: evidence }) : result;
}

/**
 * As root, the candidate's host uid `id` reads only what every user may: a mount it could not
 * list is refused before any cell starts (its contents would be invisible to the candidate).
 */
async function mountsReadable(spec: CommandSpec, id: HostIdentity): Promise<void> {
  for (const m of spec.mounts ?? []) {
    const mode = (await Deno.stat(m)).mode ?? 0o777;
    if ((mode & 0o005) === 0o005) continue;
    throw new DvergrError(
      "CANDIDATE_INVALID",
      `Cannot use candidate "${spec.name}": its mount "${m}" (mode ${
        (mode & 0o777).toString(8).padStart(4, "0")
      }) is not readable by the sandbox: dvergr runs as root, so the candidate runs as the ` +
        `unprivileged uid ${id.uid} and reads only what every user may`,
      {
        hint: `Make it readable to all (chmod o+rx "${m}", and o+r on the files the candidate ` +
          "reads), or mount a directory that is",
      },
    );
  }
}

/**
 * Starts the probes every process's first attempts await (the cgroup kind and the sweep,
 * setsid, and as root dvergr's umask) at the candidate's preflight, side by side and beside the
 * engine's own preparation, instead of one after another in the first attempts' setup: a
 * 1-case job spent ~65 ms of wall on them there (strace's timeline, this VM). Each is asked
 * once per process and awaited where it was; a failure is met there, as before.
 */
function warmAttemptProbes(env: (name: string) => string | undefined, asRoot: boolean): void {
  warmAttemptCgroups(env);
  hasSetsid().catch(() => {});
  if (asRoot) processUmask().catch(() => {});
}

/** A missing mount or program is the user's mistake: said before any cell starts. */
async function preflightCommand(spec: CommandSpec, opts: CommandOptions): Promise<void> {
  for (const m of spec.mounts ?? []) {
    try {
      await Deno.stat(m);
    } catch {
      throw new DvergrError(
        "CANDIDATE_INVALID",
        `Cannot use candidate "${spec.name}": its mount "${m}" does not exist`,
        {
          hint:
            "Give --mount (or :mounts) an existing directory; it is mounted read-only at the same path",
        },
      );
    }
  }
  // Open descriptors it cannot close would reach every attempt: said once, before any cell.
  await launchFdClosing(opts.env("PATH") ?? DEFAULT_PATH);
  // A bad sandbox host uid is the user's mistake too, as is a mount it cannot read.
  const id = opts.isolation === "bwrap" ? sandboxHostIdentity(opts.env) : null;
  warmAttemptProbes(opts.env, id !== null);
  if (id) await mountsReadable(spec, id);
  // A misspelt program is the user's mistake: said once, not a failed attempt per cell.
  const problem = programProblem(
    spec,
    opts.isolation,
    opts.env("PATH") ?? DEFAULT_PATH,
    id,
  );
  if (problem) {
    throw new DvergrError(
      "CANDIDATE_INVALID",
      `Cannot use candidate "${spec.name}": ${problem.message}`,
      { hint: problem.hint },
    );
  }
}

/** A candidate that runs `spec.command` in each attempt's world. */
export function commandCandidate(spec: CommandSpec, opts: CommandOptions): Candidate {
  for (const m of spec.mounts ?? []) {
    if (!isAbsolute(m)) throw new Error(`Mount "${m}" of candidate "${spec.name}" is not absolute`);
  }
  const setup: CommandSetup = {
    spec,
    opts,
    limits: opts.limits ?? DEFAULT_LIMITS,
    grace: opts.killGraceMs ?? 1000,
    tailBytes: opts.tailBytes ?? 16 * 1024,
  };
  return {
    name: spec.name,
    // The supervisor (or, without a sandbox, the host's timer from the spawn) enforces the
    // limit from the process's own start.
    timesItself: true,
    identity: {
      ...(opts.identity ?? commandIdentity(spec)),
      limits: limitsIdentity(setup.limits),
      // What the world gateway offers decides what the candidate can do.
      ...(opts.gateway ? { worldGateway: WORLD_GATEWAY_IDENTITY } : {}),
    },
    preflight: () => preflightCommand(spec, opts),
    run: (ctx) => runAttempt(setup, ctx),
  };
}
