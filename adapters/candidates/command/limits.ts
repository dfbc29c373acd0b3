/**
 * Resource limits of command candidates (and agent CLIs, which are command candidates):
 * memory, bytes written under the world, processes, open files. Each is enforced by the
 * kernel while the candidate runs, never polled by hand:
 *
 * - memory and processes: a cgroup of the attempt (cgroup v2, or the v1 memory and pids
 *   hierarchies) when this host lets dvergr make one; else per-process rlimits
 *   (RLIMIT_DATA, RLIMIT_NPROC — the latter does not bind root).
 * - open files: RLIMIT_NOFILE per process.
 * - bytes under the world: under bubblewrap every directory the candidate may write (the
 *   bundle's `:capture` directories) and /tmp are size-limited tmpfs mounts of the sandbox;
 *   a supervisor of ours inside the sandbox seeds them from the world, enforces the time
 *   limit, stops every process of the sandbox, and packs what they hold into one file
 *   (bounded by RLIMIT_FSIZE) that the host unpacks into the world (`readBackWorld`). The
 *   other world directories are mounted read-only. Without bubblewrap only RLIMIT_FSIZE
 *   (each file) binds.
 *
 * Going over a limit ends the attempt as failed (crashed) with the limit named, when the
 * kernel reports it (cgroup events, a full tmpfs).
 *
 * Permissions: --allow-run (prlimit, sh), --allow-read/--allow-write of the world.
 */
import { join } from "node:path";
import { worldPathSegments } from "../../world/world.ts";
import { paxRecords, TAR_BLOCK, tarField, tarMember } from "../../../core/codecs/tar.ts";
import { MARK, MARKS_FD } from "./sandbox_marks.ts";
import { CANDIDATE_CGROUP_FD } from "./cgroup.ts";

export {
  DEFAULT_LIMITS,
  describeLimits,
  limitsFrom,
  limitsIdentity,
  type ResourceLimits,
} from "../../../core/bench/resource_limits.ts";
import type { ResourceLimits } from "../../../core/bench/resource_limits.ts";

const MIB = 1024 * 1024;

/** Processes and threads of the user beside the candidate's, under RLIMIT_NPROC. */
export const NPROC_HEADROOM = 4096;

/** The name a limit is reported under. */
export type LimitName = "memory" | "world-bytes" | "processes" | "open-files";

/**
 * The per-process rlimits every attempt gets, as shell lines of its launch (`ulimit` is a
 * builtin: no process of its own; both the soft and the hard limit; exit 125 when one cannot
 * be set): open files, the size of any one file (the capture file the supervisor writes bounds
 * the host's disk; in 512-byte blocks, rounded up) and no core dumps.
 */
export function rlimitLines(l: ResourceLimits, opts: { supervisedDirs: number | null }): string {
  // Supervised, the largest file is the supervisor's pack of every writable directory;
  // unsupervised, each file the candidate writes.
  const fsize = opts.supervisedDirs === null
    ? l.worldBytes
    : (opts.supervisedDirs + 1) * l.worldBytes + 64 * MIB;
  return `{ ulimit -n ${l.openFiles} && ulimit -f ${Math.ceil(fsize / 512)} && ulimit -c 0; } ` +
    "|| exit 125";
}

/**
 * Memory and processes as a `prlimit` prefix, for an attempt that no cgroup bounds (null when
 * one does): per-process RLIMIT_DATA and RLIMIT_NPROC.
 */
export function rlimitArgv(l: ResourceLimits, opts: { cgroup: boolean }): string[] | null {
  if (opts.cgroup) return null;
  // RLIMIT_NPROC counts every process and thread of the user, dvergr's and other programs'
  // included: the limit plus a headroom is a backstop against fork bombs, not an exact count
  // (a cgroup gives that).
  const nproc = l.processes + NPROC_HEADROOM;
  return [
    "prlimit",
    `--data=${l.memoryBytes}:${l.memoryBytes}`,
    `--nproc=${nproc}:${nproc}`,
    "--",
  ];
}

/** The top-level world names under which a candidate may write (from `:capture`). */
export function writableTopLevel(capture: string[]): string[] {
  const tops = new Set<string>();
  for (const dir of capture) {
    const segs = worldPathSegments(dir);
    if (segs.length > 0) tops.add(segs[0]);
  }
  return [...tops].sort();
}

/**
 * Entries the supervisor packs at most (names cost pack bytes even when files are empty).
 * More than this under the capture directories fails the attempt with the cause named, never
 * silently drops what did not fit (an answer among them).
 */
export const PACK_ENTRIES = 50_000;

/**
 * What the supervisor packs: the bundle's capture directories (relative, in declared order,
 * one inside another given once). Only they are ever read back from the world, so nothing
 * else under the writable directories can take the pack's room before them.
 */
export function packRoots(capture: string[]): string[] {
  const roots: string[] = [];
  for (const dir of capture) {
    const rel = worldPathSegments(dir).join("/");
    if (rel === "") continue;
    if (roots.some((r) => rel === r || rel.startsWith(r + "/"))) continue;
    for (let i = roots.length - 1; i >= 0; i--) {
      if (roots[i].startsWith(rel + "/")) roots.splice(i, 1);
    }
    roots.push(rel);
  }
  return roots;
}

/**
 * The supervisor's exit status when its pack could not be written because the host's file
 * system that holds the capture file has no room (tar failed and `df` shows less than
 * PACK_ROOM_KIB KiB available there). Never the candidate's: a candidate's own exit with this
 * status leaves the supervisor with 125 instead.
 */
export const PACK_NO_ROOM = 123;
const PACK_ROOM_KIB = 1024;

/**
 * The shell the supervisor runs in, bound into the sandbox from a copy of /bin/sh that its uid
 * may execute but not read: the kernel then makes the process not dumpable, so the candidate
 * (the same uid) cannot open its memory or descriptors through /proc (what a `ptrace` seccomp
 * refuses would otherwise be had through /proc/<pid>/mem).
 */
export const SUPERVISOR_SHELL = "/.dvergr/bin/sh";
/** Where the directory that holds it is bound (a directory: staged without a process of its own). */
export const SUPERVISOR_BIN = "/.dvergr/bin";

/**
 * The signal the host sends the supervisor (the sandbox's init: sandbox_init.ts) at the time
 * limit and again at the grace's end. The supervisor traps it, so the kernel delivers it from
 * the host (a namespace's init gets from outside only the signals it handles).
 */
export const HOST_TIMER_SIGNAL = "USR1";

/** Where the supervisor finds the world's own files, and where it leaves its results. */
const SEED = "/.dvergr/seed";
const RUN = "/.dvergr/run";
const CAPTURE = "/.dvergr/capture.tar";
/**
 * The supervisor's pack: one tar that reads the names to pack (NUL-ended, listed by the
 * shell) from its stdin and never recurses, so it never follows a link or packs what was not
 * listed. Owners by number: the reader ignores them, and a name looked up for the sandbox's
 * uid and gid went through the host's NSS (nsswitch.conf, passwd, group, nscd's socket; with
 * `systemd` listed and no such uid in /etc/passwd, a dlopen more) on every attempt.
 */
const PACK_TAR =
  `LC_ALL=C.UTF-8 tar --format=posix --numeric-owner --null --no-recursion -T - -cf ${CAPTURE}`;
/** The supervisor's status file, as named in its pack (relative to /). */
const STATUS = ".dvergr/run/status";
/**
 * The file the supervisor writes 64 KiB into, in each writable directory, to learn that it is
 * not full without running `df` (a program: ~1.5 ms of CPU per attempt). A backslash makes it
 * no world path, so no capture directory can name it; the pack leaves it out.
 */
const ROOM_PROBE = ".dvergr\\room";

/** The arguments of the room probe's `printf '%1024s'`: 64 empty strings, 64 KiB of spaces. */
const ROOM_PROBE_ARGS = Array(64).fill("''").join(" ");

/** Bytes of the status in a pack without tar (STATUS_ONLY): its text, padded with spaces. */
const STATUS_BYTES = 1024;

/**
 * The text of a printf format for `bytes` inside a single-quoted shell word, each run of NULs
 * as `\\0` each (`\\000` before an octal digit, which printf would take as more of the
 * escape) and `$nul64` (set by NUL64_LINE: 64 of them) for each whole 64: the supervisor's
 * script is an argument of each program of the launch (setsid, sh, nsenter, bwrap, itself), and
 * its packs' NULs as `\\000` each were 5.8 of its 10.6 KB.
 */
export function printfNuls(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length;) {
    if (bytes[i] !== 0) {
      out += String.fromCharCode(bytes[i++]);
      continue;
    }
    let n = 0;
    while (i + n < bytes.length && bytes[i + n] === 0) n++;
    i += n;
    const beforeDigit = i < bytes.length && bytes[i] >= 0x30 && bytes[i] <= 0x37;
    // The last one spelled in full before a digit; the others by 64s, then one by one.
    const rest = beforeDigit ? n - 1 : n;
    out += `'"${"$nul64".repeat(Math.floor(rest / 64))}"'`.replace(`'""'`, "");
    out += "\\0".repeat(rest % 64) + (beforeDigit ? "\\000" : "");
  }
  return out;
}

/** The supervisor's line that sets `$nul64` for printfNuls(): 64 NULs, as printf escapes. */
export const NUL64_LINE =
  "nul64='\\0\\0\\0\\0\\0\\0\\0\\0'; nul64=$nul64$nul64$nul64$nul64$nul64$nul64$nul64$nul64";

/**
 * A printf format (NULs as printfNuls() writes them) of the pack the supervisor writes without
 * tar when the capture directories hold nothing: one ustar member, STATUS, whose data is the
 * format's one `%-STATUS_BYTES s` (its text padded with spaces), then the archive's two zero
 * blocks. Every field but the data is fixed, so its header, checksum included, is made here once.
 */
function statusOnlyPack(): string {
  const header = new Uint8Array(TAR_BLOCK);
  const put = (offset: number, text: string) => header.set(new TextEncoder().encode(text), offset);
  put(0, STATUS);
  put(100, "0000644\0");
  put(108, "0000000\0");
  put(116, "0000000\0");
  put(124, STATUS_BYTES.toString(8).padStart(11, "0") + "\0");
  put(136, "00000000000\0");
  put(148, "        ");
  put(156, "0");
  put(257, "ustar\0" + "00");
  const sum = header.reduce((a, b) => a + b, 0);
  put(148, sum.toString(8).padStart(6, "0") + "\0 ");
  return printfNuls(header) + `%-${STATUS_BYTES}s` + printfNuls(new Uint8Array(2 * TAR_BLOCK));
}
const STATUS_ONLY = statusOnlyPack();

/**
 * A one-file pack, written without tar: the status-only pack (STATUS_ONLY, its end of
 * archive included), then ONE_MAGIC, the file's name (as packed: `out/answer.edn`) and a NUL,
 * its bytes as `cat` copied them, and ONE_END, which the supervisor writes only once `cat`
 * has succeeded: the host takes the bytes between the NUL and ONE_END, and calls a pack
 * without ONE_END at its end truncated (a `cat` that failed: a host disk without room, say).
 * A tar reader stops at the end of archive; readBackWorld() reads on.
 */
export const ONE_MAGIC = "dvergr-one-file\n";
export const ONE_END = "\ndvergr-one-file-end\n";

/**
 * bwrap arguments for the world: writable top-level directories become tmpfs mounts of
 * `worldBytes` (seeded by the supervisor from a read-only view of the host's copy, which an
 * `empty` one does not need: nothing to seed, one mount less), the other entries are bound
 * read-only (the caller makes /tmp a tmpfs of `worldBytes`), and `captureFile` (a host file)
 * is where the supervisor packs the results.
 */
export function sandboxWorldArgs(
  worldDir: string,
  entries: { name: string; isSymlink: boolean; empty?: boolean }[],
  writable: string[],
  l: ResourceLimits,
  captureFile: string,
): string[] {
  const args: string[] = [];
  const rw = new Set(writable);
  for (const e of entries) {
    if (e.isSymlink) continue;
    const host = join(worldDir, e.name);
    if (rw.has(e.name)) {
      if (!e.empty) args.push("--ro-bind", host, `${SEED}/${e.name}`);
    } else args.push("--ro-bind", host, `/${e.name}`);
  }
  for (const name of writable) args.push("--size", String(l.worldBytes), "--tmpfs", `/${name}`);
  args.push("--size", String(MIB), "--tmpfs", RUN, "--bind", captureFile, CAPTURE);
  return args;
}

/**
 * The last bwrap arguments: /dev/shm a tmpfs of `worldBytes`, then /dev and the sandbox's
 * root made read-only, so nothing but the sized tmpfs mounts (and the capture file) can be
 * written — bwrap's own root and /dev are memory-backed tmpfs mounts without a size.
 */
export function sealArgs(worldBytes: number): string[] {
  return [
    "--size",
    String(worldBytes),
    "--tmpfs",
    "/dev/shm",
    "--remount-ro",
    "/dev",
    "--remount-ro",
    "/",
  ];
}

/**
 * The supervisor, run by SUPERVISOR_SHELL as the sandbox's command and its PID namespace's
 * init (bwrap --as-pid-1: no bwrap init of the candidate's uid beside it). The kernel drops the
 * SIGSTOP and SIGKILL a process of the namespace sends its init, and it is not dumpable
 * (SUPERVISOR_SHELL), so the candidate can neither stop nor kill it nor run code as it.
 * $1 1 when the launch shell opened the candidate's cgroup on CANDIDATE_CGROUP_FD (cgroup.ts)
 * else 0, $2 and $3 shell lines of ours that start helpers (the world gateway's forwarders) at
 * once and, before the candidate's command, wait until they are ready (exit 125 when they are
 * not), $4 how many writable directories follow, then their names, then how many capture
 * directories (packRoots) follow, then theirs, then the candidate's argv. It starts the
 * helpers, seeds the writable directories (those with something to seed), says `started` on
 * the host's marks descriptor (sandbox_marks.ts), waits for the helpers, says `go` on the
 * marks descriptor and closes it, then starts the candidate's command with the task on stdin
 * and waits for it. The clock is the host's: it sends HOST_TIMER_SIGNAL at go + the limit
 * (the trap counts it and the wait ends: the limit is reached) and again at the grace's end
 * (the wait for the candidate to end after SIGTERM ends). No process of the candidate ever
 * holds the marks descriptor, and no timer of the sandbox runs as the candidate's uid, where
 * the candidate could stop it. With a candidate's cgroup, every process the supervisor starts
 * while the candidate runs moves into it before it execs (the helper and the candidate's
 * first process: each runs as the candidate's uid, so the candidate could write code into it),
 * and only the supervisor keeps the descriptor: what runs as the candidate's uid stays there,
 * where the host also kills it at the grace's end. At the limit it sends SIGTERM to every other
 * process of the sandbox's PID namespace (kill -1 spares only itself) and waits for the
 * candidate's end or the grace's; then SIGKILL to all of them; records how it
 * ended and whether a writable directory is full (less than 64 KiB left: the "world-bytes"
 * evidence, whatever the candidate's exit), and packs the capture directories into the
 * capture file: at most PACK_ENTRIES + 1 entries, so the host knows when there were more (they
 * are listed by the shell itself, each directory before what it holds, links never followed:
 * one tar and no other process; the shell writes the list into a pipe it opens without a fork,
 * an empty here-document on fd 5 and its write end reopened through /proc/self/fd/5, that
 * tar, started first, reads: a pipeline would fork a lister; it does only where the
 * here-document is no pipe). When there is nothing to pack (every capture directory a
 * top-level one with nothing in it but the probe, or absent, and none full) it writes the pack
 * with one printf instead, the status alone (STATUS_ONLY): no fork and no tar, ~2.5 ms of CPU
 * less for an attempt that wrote nothing (a top-level directory's own entry brings nothing
 * back: the host makes those; a deeper one that exists goes through tar, which brings it).
 * When all there is to pack is one regular file directly in a top-level capture directory (an
 * answer file), it writes the status-only pack and `cat`s the file after it (a one-file pack, ONE_MAGIC): `cat`
 * costs ~1 ms of CPU less than tar here (exec, NSS and locale set-up, its pax headers). It
 * tests the file as tar's list would, no process of the candidate's left to swap it for a link.
 * When that pack fails on a host file system without room, it exits PACK_NO_ROOM (the host
 * then stops the run with an IO error: the host's fault, never the candidate's).
 * Before it forks again it waits, with shell builtins only, until /proc shows no process but
 * itself: a killed process holds its slot of the attempt's process limit until init (itself)
 * reaps it, so after a fork bomb every fork of the pack would fail and the world
 * would not be read back (a bounded number of looks, for a process that cannot die).
 * Fullness is learnt without a program where it can be: alone in the sandbox, the supervisor
 * writes 64 KiB into a new ROOM_PROBE file in each writable directory (refusing to follow
 * links, set -C; spaces of a printf of 64 padded empty strings of 1 KiB: one of 64 KiB was
 * formatted twice by dash, once to learn its length, ~0.15 ms of CPU more a directory here, and
 * a 64 KiB string built in the shell and printed cost ~0.1 ms more than that); when every
 * write succeeds none is full (what `df` would say: 64 KiB or more
 * free), and only when one fails (no room, or a name, mode or inode the candidate took away)
 * does `df` decide, as it did for every attempt before. The candidate can disturb all of
 * this only to its own cost (it can still spoil the pack file,
 * which is its uid's): the host reads the pack as untrusted input.
 */
export const SUPERVISOR = `
held=$1; start=$2; ready=$3; n=$4; shift 4
late=0
trap 'late=$((late + 1))' ${HOST_TIMER_SIGNAL}
eval "$start" ${CANDIDATE_CGROUP_FD}>&-
if [ -n "$start" ] && [ "$held" = 1 ]; then echo "$!" >&${CANDIDATE_CGROUP_FD} || exit 125; fi
dirs=""
while [ "$n" -gt 0 ]; do dirs="$dirs $1"; shift; n=$((n - 1)); done
n=$1; shift
packed=""
while [ "$n" -gt 0 ]; do packed="$packed $1"; shift; n=$((n - 1)); done
seeded() {
  for entry in "$1"/* "$1"/.[!.]* "$1"/..?*; do
    if [ -e "$entry" ] || [ -L "$entry" ]; then return 0; fi
  done
  return 1
}
for d in $dirs; do
  if seeded "${SEED}/$d"; then cp -a "${SEED}/$d/." "/$d/" ${CANDIDATE_CGROUP_FD}>&- || exit 125; fi
done
echo '${MARK} started' >&${MARKS_FD} || exit 125
cd / || exit 125
eval "$ready" ${CANDIDATE_CGROUP_FD}>&-
echo '${MARK} go' >&${MARKS_FD} || exit 125
exec ${MARKS_FD}>&- 4<&0 </dev/null
timed=0
(
  if [ "$held" = 1 ]; then echo 0 >&${CANDIDATE_CGROUP_FD} || exit 125; fi
  exec ${CANDIDATE_CGROUP_FD}>&- "$@"
) <&4 4<&- &
c=$!
exec 4<&-
while :; do
  wait $c
  st=$?
  if ! kill -0 "$c" 2>/dev/null; then
    if [ "$st" -gt 128 ]; then wait "$c"; st=$?; fi
    break
  fi
  if [ "$late" -gt 0 ]; then timed=1; break; fi
done
if [ "$timed" = 1 ]; then
  kill -TERM -1 2>/dev/null
  while [ "$late" -lt 2 ] && kill -0 "$c" 2>/dev/null; do wait "$c"; done
fi
trap '' ${HOST_TIMER_SIGNAL}
kill -KILL -1 2>/dev/null
wait
i=0
while [ "$i" -lt 100000 ]; do
  left=0
  for p in /proc/[0-9]*; do
    case "\${p#/proc/}" in 1|$$) ;; *) left=1; break;; esac
  done
  [ "$left" = 0 ] && break
  i=$((i + 1))
done
exec ${CANDIDATE_CGROUP_FD}>&-
full=""
probed=""
if [ -n "$dirs" ]; then
  roomy=1
  for d in $dirs; do
    if [ -e "/$d/${ROOM_PROBE}" ] || [ -L "/$d/${ROOM_PROBE}" ]; then roomy=0; fi
  done
  if [ "$roomy" = 1 ]; then
    probed=1
    set -C
    for d in $dirs; do { printf '%1024s' ${ROOM_PROBE_ARGS} > "/$d/${ROOM_PROBE}"; } 2>/dev/null || roomy=0; done
    set +C
  fi
  if [ "$roomy" = 0 ]; then
    (cd / && exec df -Pk $dirs) > ${RUN}/df 2>/dev/null
    { read -r _; while read -r _ _ _ a _ m; do
      if [ "$a" -lt 64 ] 2>/dev/null; then full="$full $m"; fi
    done; } < ${RUN}/df
  fi
fi
cd /
empty() {
  for e in "$1"/* "$1"/.[!.]* "$1"/..?*; do
    if [ -n "$probed" ] && [ "$e" = "$1/${ROOM_PROBE}" ]; then continue; fi
    if [ -e "$e" ] || [ -L "$e" ]; then return 1; fi
  done
}
bare=""
if [ -z "$full" ]; then
  bare=1
  for r in $packed; do
    case $r in
      */*) if [ -e "$r" ] || [ -L "$r" ]; then bare=""; fi;;
      *) if [ -L "$r" ] || [ ! -d "$r" ] || ! empty "$r"; then bare=""; fi;;
    esac
  done
fi
one=""
if [ -z "$full" ] && [ -z "$bare" ]; then
  for r in $packed; do
    case $r in */*) one=""; break;; esac
    if [ -L "$r" ]; then one=""; break; fi
    [ -d "$r" ] || continue
    for e in "$r"/* "$r"/.[!.]* "$r"/..?*; do
      if [ -n "$probed" ] && [ "$e" = "$r/${ROOM_PROBE}" ]; then continue; fi
      if [ -e "$e" ] || [ -L "$e" ]; then
        if [ -n "$one" ] || [ ! -f "$e" ] || [ -L "$e" ]; then one=""; break 2; fi
        one=$e
      fi
    done
  done
fi
if [ -n "$bare" ] || [ -n "$one" ]; then
  ${NUL64_LINE}
  {
    printf '${STATUS_ONLY}' "exit=$st
timedout=$timed
full=
" && if [ -n "$one" ]; then
      printf '${ONE_MAGIC}%s\\000' "$one" && cat -- "$one" 2>/dev/null && printf '${ONE_END}'
    fi
  } > ${CAPTURE}
else
printf 'exit=%s\\ntimedout=%s\\nfull=%s\\n' "$st" "$timed" "$full" > ${RUN}/status
n=0
entry() {
  n=$((n + 1))
  [ "$n" -gt ${PACK_ENTRIES + 1} ] && return 1
  printf '%s\\0' "$1" || return 1
  if [ -d "$1" ] && [ ! -L "$1" ]; then listed "$1" || return 1; fi
}
listed() {
  for e in "$1"/* "$1"/.[!.]* "$1"/..?*; do
    if [ -n "$probed" ] && [ "$e" = "\${e%%/*}/${ROOM_PROBE}" ]; then continue; fi
    if [ -e "$e" ] || [ -L "$e" ]; then entry "$e" || return 1; fi
  done
}
names() {
  printf '%s\\0' ${STATUS} || return 1
  for r in $packed; do
    if [ -e "$r" ] || [ -L "$r" ]; then entry "$r" || return 1; fi
  done
}
exec 5<<'E'
E
if [ -p /proc/self/fd/5 ] && { command exec 6>/proc/self/fd/5; } 2>/dev/null; then
  ${PACK_TAR} <&5 5<&- 6>&- 2>/dev/null &
  t=$!
  exec 5<&-
  trap '' PIPE
  names >&6
  exec 6>&-
  wait "$t"
else
  exec 5<&-
  names | ${PACK_TAR} 2>/dev/null
fi
fi
if [ "$?" != 0 ]; then
  room=$( (cd / && exec df -Pk ${CAPTURE}) 2>/dev/null | { read -r _; read -r _ _ _ a _; echo "$a"; })
  if [ "$room" -lt ${PACK_ROOM_KIB} ] 2>/dev/null; then exit ${PACK_NO_ROOM}; fi
fi
if [ "$st" = ${PACK_NO_ROOM} ]; then exit 125; fi
exit $st
`;

/**
 * Shell lines that start helpers in the sandbox, and that wait until they are ready. They may
 * hold descriptors 5 and 6 between them (the forwarder's pipe), and close them by the end of
 * `ready`: the candidate's command, started after it, must get none of theirs.
 */
export interface SandboxHelpers {
  /** Starts one helper in the background (its pid is `$!` after them: it joins the candidate's cgroup). */
  start: string;
  ready: string;
}

/** The sandbox's command: the supervisor around the candidate's argv, with its helpers. */
export function superviseArgv(
  candidate: string[],
  opts: {
    writable: string[];
    capture: string[];
    helpers?: SandboxHelpers;
    /** The launch shell opened the candidate's cgroup on CANDIDATE_CGROUP_FD. */
    candidateCgroup?: boolean;
  },
): string[] {
  const packed = packRoots(opts.capture);
  return [
    SUPERVISOR_SHELL,
    "-c",
    SUPERVISOR,
    "dvergr-supervisor",
    opts.candidateCgroup ? "1" : "0",
    opts.helpers?.start ?? "",
    opts.helpers?.ready ?? "",
    String(opts.writable.length),
    ...opts.writable,
    String(packed.length),
    ...packed,
    ...candidate,
  ];
}

/** What the supervisor said about the attempt (null: it did not finish its pack). */
export interface SupervisorStatus {
  exit: number | null;
  timedOut: boolean;
  /** Writable world directories that were full (their tmpfs had no room left). */
  full: string[];
  /**
   * The capture directories held more than PACK_ENTRIES entries (the pack has one more than
   * that, which the host counts; nothing of it is read back).
   */
  overPack: boolean;
}

/** What came back from the sandbox. */
export interface ReadBack {
  status: SupervisorStatus | null;
  /** Files written into the world. */
  files: number;
  bytes: number;
  /** Entries not written back, and why (links, devices, bad names, over the bound). */
  skipped: { path: string; reason: string }[];
  /** The pack ended early (cut at its size limit, or the sandbox was stopped). */
  truncated: boolean;
}

const MAX_SKIPS = 200;

/** Reads exactly `n` bytes (fewer at the end of the file). */
function readFull(file: Deno.FsFile, n: number): Uint8Array {
  const buf = new Uint8Array(n);
  let got = 0;
  while (got < n) {
    const k = file.readSync(buf.subarray(got));
    if (k === null || k === 0) break;
    got += k;
  }
  return got === n ? buf : buf.subarray(0, got);
}

/**
 * The pack is read and written back with synchronous calls (a header, a small file: a few
 * microseconds each, where an asynchronous call costs a thread's hand-off more, 20-70 us of
 * CPU measured here, ~20 an attempt), giving the event loop a turn every TURN_EVERY members
 * and every MiB copied: a pack of 50,000 entries or of a GiB never holds the other attempts'
 * timers for long.
 */
const TURN_EVERY = 64;

function turn(): Promise<void> {
  return new Promise((r) => setTimeout(r, 0));
}

/**
 * Unpacks the supervisor's pack `captureFile` into the writable top-level directories
 * `writable` of the world at `worldDir`, over what the host's copy holds (files the world
 * gateway's MCP tools wrote there during the attempt stay; a file in both takes the
 * sandbox's version; a seeded file deleted inside the sandbox stays). The pack is untrusted: only regular files and directories whose names are world
 * paths under `writable` are written, at most `maxEntries` entries; links, devices and bad
 * names are skipped with the reason. Never throws for what the pack holds.
 */
export async function readBackWorld(
  worldDir: string,
  writable: string[],
  captureFile: string,
  maxEntries = PACK_ENTRIES,
): Promise<ReadBack> {
  const result: ReadBack = {
    status: null,
    files: 0,
    bytes: 0,
    skipped: [],
    truncated: false,
  };
  const skip = (path: string, reason: string) => {
    if (result.skipped.length < MAX_SKIPS) result.skipped.push({ path, reason });
  };
  for (const d of writable) Deno.mkdirSync(join(worldDir, d), { recursive: true });
  const rw = new Set(writable);
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(captureFile, { read: true });
  } catch {
    result.truncated = true;
    return result;
  }
  try {
    // The supervisor has stopped: the pack no longer grows, so its size is read once.
    const packSize = file.statSync().size;
    let pax = new Map<string, string>();
    let longName: string | null = null;
    let entries = 0;
    const written = new Map<string, string>();
    for (let n = 1;; n++) {
      if (n % TURN_EVERY === 0) await turn();
      const header = readFull(file, TAR_BLOCK);
      if (header.length < TAR_BLOCK) {
        result.truncated = true;
        break;
      }
      if (header.every((b) => b === 0)) {
        if (result.status !== null && entries === 0 && maxEntries > 0) {
          await readOneFile({ worldDir, rw, file, packSize, result, skip, written });
        }
        break;
      }
      const { type, size, name, linkTarget } = tarMember(header, pax, longName);
      if (size === null || !Number.isSafeInteger(size) || size < 0) {
        result.truncated = true;
        break;
      }
      const padded = Math.ceil(size / TAR_BLOCK) * TAR_BLOCK;
      if (type === "x" || type === "g" || type === "L") {
        if (size > MIB) {
          result.truncated = true;
          break;
        }
        const data = readFull(file, padded);
        if (data.length < padded) {
          result.truncated = true;
          break;
        }
        if (type === "x") pax = paxRecords(data.subarray(0, size));
        if (type === "L") longName = tarField(data, 0, size);
        continue;
      }
      pax = new Map();
      longName = null;
      if (name === STATUS && type === "0" && result.status === null && entries === 0) {
        const data = readFull(file, padded);
        result.status = parseStatus(
          new TextDecoder().decode(data.subarray(0, Math.min(size, 4096))),
        );
        continue;
      }
      if (++entries > maxEntries) {
        // Over the capture's entries the attempt fails whatever the pack holds.
        if (result.status) result.status.overPack = true;
        else result.truncated = true;
        break;
      }
      const next = await writeMember(
        { worldDir, rw, file, packSize, result, skip, written },
        { name, type, size, padded, linkTarget },
      );
      if (next === "stop") break;
    }
  } finally {
    file.close();
  }
  return result;
}

/** Bytes of a file name after ONE_MAGIC, its NUL included, at most (a name is ≤ 255 a level). */
const ONE_NAME_MAX = 4096;

/**
 * After the status-only pack's first zero block: the file of a one-file pack (ONE_MAGIC), if
 * one follows the second, written back as a regular member of the pack is; a pack without
 * ONE_END at its end (the supervisor's `cat` did not finish) is truncated and writes nothing.
 */
async function readOneFile(st: UnpackState): Promise<void> {
  const { file, packSize, result } = st;
  const enc = new TextEncoder();
  const magic = enc.encode(ONE_MAGIC);
  const end = enc.encode(ONE_END);
  const head = readFull(file, TAR_BLOCK + magic.length + ONE_NAME_MAX);
  if (head.length <= TAR_BLOCK) return;
  const same = (a: Uint8Array, b: Uint8Array) =>
    a.length === b.length && a.every((x, i) => x === b[i]);
  const zeros = head.subarray(0, TAR_BLOCK).every((b) => b === 0);
  if (!zeros || !same(head.subarray(TAR_BLOCK, TAR_BLOCK + magic.length), magic)) {
    // Not a one-file pack: bytes after an end of archive, which tar readers ignore too.
    return;
  }
  const nameAt = TAR_BLOCK + magic.length;
  const nul = head.indexOf(0, nameAt);
  const start = file.seekSync(0, Deno.SeekMode.Current) - head.length + nul + 1;
  const size = packSize - end.length - start;
  if (nul < 0 || size < 0) {
    result.truncated = true;
    return;
  }
  file.seekSync(start + size, Deno.SeekMode.Start);
  if (!same(readFull(file, end.length), end)) {
    result.truncated = true;
    return;
  }
  file.seekSync(start, Deno.SeekMode.Start);
  const name = new TextDecoder().decode(head.subarray(nameAt, nul));
  const next = await writeMember(st, { name, type: "0", size, padded: size, linkTarget: "" });
  if (next === "stop") result.truncated = true;
}

/** What writing one member of the pack back needs. */
interface UnpackState {
  worldDir: string;
  rw: Set<string>;
  file: Deno.FsFile;
  /** The pack's length in bytes: how far a skip may go. */
  packSize: number;
  result: ReadBack;
  skip: (path: string, reason: string) => void;
  /** Regular files written back, by their name in the pack: what later hard links name. */
  written: Map<string, string>;
}

/**
 * Writes one member of the pack (its header read; the file positioned at its data) into the
 * world, or skips it with the reason; "stop" when the pack ends early.
 */
async function writeMember(
  st: UnpackState,
  m: { name: string; type: string; size: number; padded: number; linkTarget: string },
): Promise<"next" | "stop"> {
  const { worldDir, file, packSize, result, skip, written } = st;
  const { name, type, size, padded } = m;
  let segs: string[] | null;
  try {
    segs = worldPathSegments("/" + name);
  } catch {
    segs = null;
  }
  const ok = segs !== null && segs.length > 0 && st.rw.has(segs[0]);
  const skipData = () => {
    if (skipBytes(file, padded, packSize)) return "next";
    result.truncated = true;
    return "stop";
  };
  if (type === "5") {
    if (ok && segs!.length > 1) {
      try {
        Deno.mkdirSync(join(worldDir, ...segs!), { recursive: true });
      } catch {
        skip("/" + name, "unwritable");
      }
    }
    return "next";
  }
  if (type === "1" && ok && segs!.length > 1) {
    // A hard link: the same file as an earlier entry (tar stores its content once).
    const linked = linkOut(worldDir, written.get(worldKey(m.linkTarget) ?? ""), segs!);
    if (linked === null) skip("/" + name, "hardlink");
    else {
      written.set(segs!.join("/"), join(worldDir, ...segs!));
      result.files++;
      result.bytes += linked;
    }
    return skipData();
  }
  if (type !== "0" || !ok || segs!.length < 2) {
    skip("/" + name, type === "2" ? "symlink" : ok ? "special" : "outside");
    return skipData();
  }
  const host = join(worldDir, ...segs!);
  const wrote = await copyOut({ file, packSize }, host, size, padded);
  if (wrote === "short") {
    result.truncated = true;
    return "stop";
  }
  if (wrote === "unwritable") skip("/" + name, "unwritable");
  else {
    written.set(segs!.join("/"), host);
    result.files++;
    result.bytes += size;
  }
  return "next";
}

/** A pack name as the key of `written` (null when it is no world path). */
function worldKey(name: string): string | null {
  try {
    return worldPathSegments("/" + name.replace(/\/+$/, "")).join("/");
  } catch {
    return null;
  }
}

/**
 * Writes the hard link `segs` of the world as a hard link to the file written back at `from`
 * (its size), or null when the link names nothing written back (outside, skipped, or later).
 * A link, never a copy: a pack of one world-sized file and 50,000 links to it would otherwise
 * write 50,000 times the world's bytes to the host's disk.
 */
function linkOut(worldDir: string, from: string | undefined, segs: string[]): number | null {
  if (from === undefined) return null;
  const host = join(worldDir, ...segs);
  try {
    if (host !== from) {
      Deno.mkdirSync(join(host, ".."), { recursive: true });
      // Over a file the host's copy holds, as a regular member is (a directory there stays).
      let there: Deno.FileInfo | null = null;
      try {
        there = Deno.lstatSync(host);
      } catch {
        // Nothing there.
      }
      if (there && !there.isDirectory) Deno.removeSync(host);
      Deno.linkSync(from, host);
    }
    return Deno.statSync(host).size;
  } catch {
    return null;
  }
}

function parseStatus(text: string): SupervisorStatus {
  const get = (k: string) => text.match(new RegExp(`^${k}=(.*)$`, "m"))?.[1]?.trim() ?? "";
  const exit = Number(get("exit"));
  return {
    exit: get("exit") !== "" && Number.isSafeInteger(exit) ? exit : null,
    timedOut: get("timedout") === "1",
    full: get("full").split(/\s+/).filter((s) => s.startsWith("/")),
    overPack: false,
  };
}

/** Skips `n` bytes of the pack of `packSize` bytes; false when fewer are left. */
function skipBytes(file: Deno.FsFile, n: number, packSize: number): boolean {
  const here = file.seekSync(0, Deno.SeekMode.Current);
  if (here + n > packSize) return false;
  file.seekSync(n, Deno.SeekMode.Current);
  return true;
}

/** Copies `size` bytes of the pack to `host` (parents made), then skips the padding. */
async function copyOut(
  { file, packSize }: { file: Deno.FsFile; packSize: number },
  host: string,
  size: number,
  padded: number,
): Promise<"ok" | "short" | "unwritable"> {
  let out: Deno.FsFile | null = null;
  try {
    Deno.mkdirSync(join(host, ".."), { recursive: true });
    out = Deno.openSync(host, { write: true, create: true, truncate: true });
  } catch {
    out = null;
  }
  try {
    let left = size;
    const buf = new Uint8Array(Math.min(MIB, Math.max(1, size)));
    while (left > 0) {
      const k = file.readSync(buf.subarray(0, Math.min(buf.length, left)));
      if (k === null || k === 0) return "short";
      if (out) {
        let off = 0;
        while (off < k) off += out.writeSync(buf.subarray(off, k));
      }
      left -= k;
      if (left > 0) await turn();
    }
  } finally {
    out?.close();
  }
  if (!skipBytes(file, padded - size, packSize)) return "short";
  return out ? "ok" : "unwritable";
}
