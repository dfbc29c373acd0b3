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
 * - With a world gateway (core/io/gateway/), it reaches the world's MCP server at
 *   `DVERGR_MCP_URL` and model APIs at `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL` (dummy keys:
 *   the gateway swaps in the real ones, meters tokens and cost, and enforces the budget).
 *   Under bubblewrap these are two Unix sockets bound at /run/dvergr and exposed on
 *   loopback ports by a forwarder of ours that starts before the command.
 * - Its time limit is enforced by killing its whole process group (it starts in a session
 *   of its own via `setsid`). Its exit status and a bounded tail of stdout and stderr are
 *   kept as evidence; output beyond the tail is counted, never buffered.
 *
 * Permissions: --allow-run (setsid, bwrap, /bin/sh), --allow-read of the mounts.
 */
import { dirname, isAbsolute } from "node:path";
import { DvergrError } from "../../errors.ts";
import {
  type AttemptContext,
  type Candidate,
  type CandidateOutcome,
  NO_USAGE,
} from "../../bench/candidate.ts";
import {
  type AttemptGateway,
  type GatewayEvidence,
  type GatewayFactory,
  gatewayOutcome,
} from "../gateway/attempt_gateway.ts";

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
  /** More bubblewrap arguments (agent CLIs: a throwaway HOME). Not from candidates.edn. */
  bwrapExtra?: string[];
}

export type { GatewayFactory } from "../gateway/attempt_gateway.ts";

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
/** Larger tasks are given on stdin only (an environment string is limited to 128 KiB). */
const MAX_ENV_TASK = 100_000;

/** bwrap arguments that make the system visible read-only (merged-/usr links kept as links). */
function systemArgs(): string[] {
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
  try {
    const deno = Deno.realPathSync(Deno.execPath());
    if (!SYSTEM_DIRS.some((d) => deno.startsWith(d + "/"))) {
      args.push("--ro-bind", dirname(deno), dirname(deno));
    }
  } catch {
    // No deno binary to share: nothing to add.
  }
  return args.concat("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
}

let bwrapProbe: Promise<boolean> | null = null;

/**
 * Whether bubblewrap is installed and can build the sandbox on this host (tried once per
 * process with the same mounts an attempt gets). `DVERGR_ISOLATION=none` turns it off.
 */
export function detectBwrap(env: (name: string) => string | undefined): Promise<boolean> {
  if (env("DVERGR_ISOLATION") === "none") return Promise.resolve(false);
  bwrapProbe ??= (async () => {
    try {
      const out = await new Deno.Command("bwrap", {
        args: [...systemArgs(), "--unshare-all", "--die-with-parent", "/bin/sh", "-c", "exit 0"],
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).output();
      return out.success;
    } catch {
      return false;
    }
  })();
  return bwrapProbe;
}

let setsidProbe: Promise<boolean> | null = null;
function hasSetsid(): Promise<boolean> {
  setsidProbe ??= new Deno.Command("setsid", { args: ["true"], stdout: "null", stderr: "null" })
    .output().then((o) => o.success, () => false);
  return setsidProbe;
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

async function drain(stream: ReadableStream<Uint8Array>, tail: Tail): Promise<void> {
  try {
    for await (const chunk of stream) tail.push(chunk);
  } catch {
    // The process was killed mid-write: what was read is kept.
  }
}

async function worldTopLevel(dir: string): Promise<Deno.DirEntry[]> {
  const out: Deno.DirEntry[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e);
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
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

/** The identity of a command candidate: what decides its behaviour. */
export function commandIdentity(spec: CommandSpec): Record<string, unknown> {
  return {
    kind: "command",
    command: spec.command,
    mounts: [...(spec.mounts ?? [])].sort(),
    env: Object.fromEntries(Object.entries(spec.env ?? {}).sort()),
    passEnv: [...(spec.passEnv ?? [])].sort(),
    network: spec.network ?? false,
  };
}

/** A candidate that runs `spec.command` in each attempt's world. */
export function commandCandidate(spec: CommandSpec, opts: CommandOptions): Candidate {
  const tailBytes = opts.tailBytes ?? 16 * 1024;
  const grace = opts.killGraceMs ?? 1000;
  for (const m of spec.mounts ?? []) {
    if (!isAbsolute(m)) throw new Error(`Mount "${m}" of candidate "${spec.name}" is not absolute`);
  }

  async function argv(
    ctx: AttemptContext,
    gateway: AttemptGateway | null,
  ): Promise<string[] | string> {
    const sh = ["/bin/sh", "-c", spec.command];
    if (opts.isolation === "none") return sh;
    const args = ["--unshare-all", "--die-with-parent", "--new-session"];
    if (spec.network) args.push("--share-net");
    args.push(...systemArgs());
    for (const m of spec.mounts ?? []) {
      try {
        await Deno.stat(m);
      } catch {
        return `its mount "${m}" does not exist`;
      }
      args.push("--ro-bind", m, m);
    }
    // Mount points of the gateway and of bwrapExtra must not land inside the world.
    const taken = new Set(
      [...(spec.bwrapExtra ?? []), ...(gateway ? gateway.bwrapArgs() : [])]
        .filter((a) => a.startsWith("/")).map((a) => a.split("/")[1]),
    );
    for (const e of await worldTopLevel(ctx.worldDir)) {
      if (RESERVED.has(e.name) || (taken.has(e.name) && e.name !== "")) {
        return `the world has "/${e.name}", which would hide the sandbox's own /${e.name}`;
      }
      if (e.isSymlink) continue;
      args.push("--bind", `${ctx.worldDir}/${e.name}`, `/${e.name}`);
    }
    args.push(...(spec.bwrapExtra ?? []));
    if (gateway) args.push(...gateway.bwrapArgs());
    args.push("--chdir", "/");
    return ["bwrap", ...args, ...(gateway ? gateway.wrap(sh) : sh)];
  }

  function environment(
    ctx: AttemptContext,
    gateway: AttemptGateway | null,
  ): Record<string, string> {
    const isolated = opts.isolation === "bwrap";
    const env: Record<string, string> = {
      PATH: opts.env("PATH") ?? "/usr/local/bin:/usr/bin:/bin",
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

  /** Runs the process of one attempt (behind `gateway` when there is one). */
  async function runProcess(
    ctx: AttemptContext,
    gateway: AttemptGateway | null,
  ): Promise<CandidateOutcome & { stdout: string }> {
    const isolated = opts.isolation === "bwrap";
    const started = performance.now();
    const args = await argv(ctx, gateway);
    if (typeof args === "string") {
      return { ...faultOutcome(`Cannot start "${spec.name}": ${args}`, isolated), stdout: "" };
    }
    const grouped = await hasSetsid();
    const [cmd, ...rest] = grouped ? ["setsid", ...args] : args;
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(cmd, {
        args: rest,
        cwd: ctx.worldDir,
        clearEnv: true,
        env: environment(ctx, gateway),
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    } catch (e) {
      return {
        ...faultOutcome(
          `Cannot start "${spec.name}": ${e instanceof Error ? e.message : String(e)}`,
          isolated,
        ),
        stdout: "",
      };
    }
    const pid = child.pid;
    const kill = (signal: Deno.Signal) => {
      try {
        Deno.kill(grouped ? -pid : pid, signal);
      } catch {
        // Already gone.
      }
    };

    let timedOut = false;
    let killTimer: ReturnType<typeof setTimeout> | undefined;
    const stop = () => {
      if (timedOut) return;
      timedOut = true;
      kill("SIGTERM");
      killTimer = setTimeout(() => kill("SIGKILL"), grace);
    };
    const limit = setTimeout(stop, ctx.timeoutMs);
    if (ctx.signal.aborted) stop();
    ctx.signal.addEventListener("abort", stop, { once: true });

    const out = new Tail(tailBytes);
    const err = new Tail(tailBytes);
    const drained = Promise.all([drain(child.stdout, out), drain(child.stderr, err)]);
    const feed = (async () => {
      const w = child.stdin.getWriter();
      try {
        await w.write(new TextEncoder().encode(ctx.task));
        await w.close();
      } catch {
        // The process does not read its stdin, or exited first: not an error.
      }
    })();

    const status = await child.status;
    clearTimeout(limit);
    ctx.signal.removeEventListener("abort", stop);
    // Whatever the process left running in its group goes with it.
    kill("SIGKILL");
    if (killTimer !== undefined) clearTimeout(killTimer);
    await Promise.race([
      Promise.all([drained, feed]),
      new Promise((r) => setTimeout(r, 2000)),
    ]);
    const elapsedMs = Math.round(performance.now() - started);

    const evidence = {
      command: spec.command,
      isolated,
      exitCode: status.signal ? null : status.code,
      signal: status.signal ?? null,
      timedOut,
      elapsedMs,
      stdoutBytes: out.total,
      stderrBytes: err.total,
      stdoutTail: out.text(),
      stderrTail: err.text(),
    };
    const base = {
      usage: { ...NO_USAGE },
      billedMicros: 0,
      listMicros: null,
      isolated,
      evidence,
      stdout: out.text(),
    };
    if (timedOut) {
      return { ...base, status: "timeout", message: `Stopped after ${ctx.timeoutMs} ms` };
    }
    if (status.success) return { ...base, status: "completed" };
    // 126/127: the shell could not run the command at all.
    if (status.code === 126 || status.code === 127) {
      return {
        ...base,
        status: "fault",
        message: `Cannot start "${spec.name}": the shell could not run it (exit ${status.code}): ${
          err.text().trim().split("\n").pop() ?? ""
        }`,
      };
    }
    const how = status.signal ? `signal ${status.signal}` : `exit status ${status.code}`;
    return { ...base, status: "crashed", message: `"${spec.name}" ended with ${how}` };
  }

  /** One attempt: the world gateway (when there is one) around the process. */
  async function runAttempt(ctx: AttemptContext): Promise<CandidateOutcome> {
    const isolated = opts.isolation === "bwrap";
    let gateway: AttemptGateway | null = null;
    if (opts.gateway) {
      try {
        gateway = await opts.gateway(ctx, isolated ? "unix" : "tcp");
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
      ran = await runProcess(ctx, gateway);
    } finally {
      if (gateway) evidence = await gateway.finish();
    }
    const { stdout, ...outcome } = ran;
    const result = evidence ? gatewayOutcome(outcome, evidence) : outcome;
    return opts.finish ? opts.finish(result, { stdout, gateway: evidence }) : result;
  }

  return {
    name: spec.name,
    identity: opts.identity ?? commandIdentity(spec),
    /** A missing mount is the user's mistake: say so before any cell starts. */
    async preflight() {
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
    },
    async run(ctx) {
      return await runAttempt(ctx);
    },
  };
}
