/**
 * Runs one sandboxed command candidate whose command probes the sandbox's walls, and prints
 * what it found as JSON on stdout. tests/adapters/candidates/command/walls_test.ts runs it in its own
 * process as root and as an unprivileged user (a probe of the walls must not depend on who
 * runs dvergr). Arguments: a host directory to mount read-only into the sandbox, then host
 * files it must not see.
 */
import { commandCandidate } from "../../adapters/candidates/command/command.ts";
import { createWorld } from "../../adapters/world/world.ts";

/** Each probe prints `name=allowed` or `name=refused`; the state lines print as they are. */
export const WALL_PROBE = `
r() { n=$1; shift; if "$@" >/dev/null 2>&1; then echo "$n=allowed"; else echo "$n=refused"; fi; }
{
  grep -E '^(CapEff|CapPrm|CapInh|CapAmb|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status | tr -d ' \\t'
  echo "uid=$(id -u)"
  for d in /docs /etc /usr "$WALL_MOUNT"; do
    r "remount:$d" mount -o remount,bind,rw "$d"
    r "write:$d" sh -c "echo x > '$d/dvergr-wall-probe'"
  done
  r mount-tmpfs mount -t tmpfs none /tmp
  r ptrace-supervisor perl -e 'exit(syscall(101, 16, $ARGV[0], 0, 0) == -1 ? 1 : 0)' "$PPID"
  r chroot chroot / true
  r unshare-user unshare -U true
  r unshare-root unshare -r true
  r unshare-mount unshare -m true
  r setns nsenter --target 1 --mount true
  r write-proc-root sh -c "echo x > /proc/self/root/etc/dvergr-wall-probe"
  r write-proc-sys sh -c "echo 1 > /proc/sys/vm/drop_caches"
  r mknod-device mknod /out/null-device c 1 3
  r regain-caps setpriv --inh-caps +sys_admin --ambient-caps +sys_admin true
  # System calls by number (x86_64): allowed when the call succeeded.
  sc() { n=$1; shift; r "$n" perl -e "$@"; }
  sc open_by_handle_at 'exit(syscall(304, -100, "\\0" x 136, 0) == -1 ? 1 : 0)'
  sc keyctl 'exit(syscall(250, 0, -3, 1) == -1 ? 1 : 0)'
  sc add_key 'exit(syscall(248, "user", "dvergr", "x", 1, -3) == -1 ? 1 : 0)'
  sc io_uring 'my $p = "\\0" x 120; exit(syscall(425, 8, $p) == -1 ? 1 : 0)'
  sc fsopen 'exit(syscall(430, "tmpfs", 0) == -1 ? 1 : 0)'
  sc bpf 'exit(syscall(321, 0, "\\0" x 128, 128) == -1 ? 1 : 0)'
  sc perf 'exit(syscall(298, "\\0" x 128, 0, -1, -1, 0) == -1 ? 1 : 0)'
  for f in /usr/bin/mount /usr/bin/su /usr/bin/passwd; do
    [ -u "$f" ] && echo "setuid:$f=$(sh -c "$f --version >/dev/null 2>&1; id -u")"
  done
  for p in $WALL_HIDDEN; do r "see:$p" test -e "$p"; done
  # Descriptors the process that started dvergr left open (on the host's /: see walls_test).
  for n in 7 47; do r "inherited-fd:$n" test -e "/proc/self/fd/$n"; done
  r write-out sh -c 'echo ok > /out/written.txt'
  # Who the host's files belong to, seen from inside: root's are not the candidate's.
  echo "world-owner=$(stat -c %u /docs/a.md)"
  r read-world cat /docs/a.md
  r read-secret cat "$WALL_MOUNT/secret.txt"
  # Held until the host has looked at this process (its host uid), then let go.
  sh -c 'i=0; while [ ! -e "$1/release" ] && [ "$i" -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
    [ -e "$1/release" ] && echo released=yes' "dvergr-wall-"hold "$WALL_MOUNT"
} > /out/probe.txt 2>&1
`;

const mount = Deno.args[0];
/** Host files the candidate must not see (a bundle's gold, the home), space-separated. */
const hidden = Deno.args.slice(1).join(" ");
const world = await createWorld({ "/docs/a.md": "hello" }, { mkdirs: ["/out"] });
try {
  const candidate = commandCandidate({
    name: "walls",
    command: WALL_PROBE,
    mounts: [mount],
    env: { WALL_MOUNT: mount, WALL_HIDDEN: hidden },
  }, { isolation: "bwrap", env: (k) => Deno.env.get(k) });
  const outcome = await candidate.run({
    task: "probe",
    caseId: "c1",
    repetition: 0,
    world: world.files,
    worldDir: world.dir,
    reference: null,
    timeoutMs: 60_000,
    budgetMicros: 0,
    profile: "developer",
    writable: ["/out"],
    signal: new AbortController().signal,
  });
  const captured = await world.capture(["/out"]);
  await Deno.stdout.write(new TextEncoder().encode(JSON.stringify({
    status: outcome.status,
    message: outcome.message ?? null,
    sandbox: (outcome.evidence as Record<string, unknown>).sandbox ?? null,
    files: captured.files,
  })));
} finally {
  await world.remove();
}
