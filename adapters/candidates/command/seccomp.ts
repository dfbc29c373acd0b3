/**
 * The seccomp filter every process of a command candidate's sandbox runs under: a classic
 * BPF program (the `struct sock_filter` array bubblewrap's `--seccomp FD` loads) that refuses
 * the system calls a candidate could use to reach past its walls even without capabilities:
 * `ptrace` and `process_vm_*` of the supervisor (same uid, so the kernel alone would let it),
 * every mount call, module and kexec loading, keyrings, bpf, perf, userfaultfd, io_uring (as
 * absent: ENOSYS), and new user
 * namespaces (`clone`/`unshare` with CLONE_NEWUSER; `clone3` says ENOSYS, which makes libc
 * fall back to `clone`, since its flags sit behind a pointer the filter cannot read).
 * Capabilities are already dropped (`--cap-drop ALL`, a non-zero uid, no_new_privs): this is
 * the second wall, so a kernel that lets a capability-less process do one of these still
 * refuses it. Pure: it only builds bytes.
 */

/** Offsets in the kernel's `struct seccomp_data`. */
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;

const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;

const RET_KILL_PROCESS = 0x80000000;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
const CLONE_NEWUSER = 0x10000000;
/** x32 system calls carry this bit on x86_64; none is needed, so all are refused. */
const X32_BIT = 0x40000000;

interface ArchTable {
  auditArch: number;
  clone: number;
  clone3: number;
  unshare: number;
  /** Refused as absent (ENOSYS), so programs fall back to what they use without them. */
  absent: Record<string, number>;
  denied: Record<string, number>;
}

/** System call numbers of x86_64 (arch/x86/entry/syscalls/syscall_64.tbl). */
const X86_64: ArchTable = {
  auditArch: 0xc000003e,
  clone: 56,
  clone3: 435,
  unshare: 272,
  // io_uring performs its operations without the system calls this filter sees, and its
  // kernel code has been a steady source of privilege escalations.
  absent: { io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427 },
  denied: {
    ptrace: 101,
    process_vm_readv: 310,
    process_vm_writev: 311,
    kcmp: 312,
    pivot_root: 155,
    chroot: 161,
    acct: 163,
    mount: 165,
    umount2: 166,
    swapon: 167,
    swapoff: 168,
    reboot: 169,
    iopl: 172,
    ioperm: 173,
    init_module: 175,
    delete_module: 176,
    quotactl: 179,
    lookup_dcookie: 212,
    kexec_load: 246,
    add_key: 248,
    request_key: 249,
    keyctl: 250,
    perf_event_open: 298,
    name_to_handle_at: 303,
    open_by_handle_at: 304,
    setns: 308,
    finit_module: 313,
    kexec_file_load: 320,
    bpf: 321,
    userfaultfd: 323,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
  },
};

const TABLES: Record<string, ArchTable> = { x86_64: X86_64 };

/** The system calls the filter refuses on `arch` (empty where it has no table). */
export function deniedSyscalls(arch: string): string[] {
  const table = TABLES[arch];
  return table
    ? [
      ...Object.keys(table.denied),
      ...Object.keys(table.absent),
      "clone3",
      "clone+unshare(CLONE_NEWUSER)",
    ]
    : [];
}

type Insn = { code: number; k: number; jt?: string; jf?: string };

/**
 * The filter for `arch` (Deno.build.arch) as bytes for bubblewrap, or null where dvergr has
 * no system call table for the architecture (the sandbox then rests on capabilities alone,
 * and the attempt's evidence says so).
 */
export function seccompFilter(arch: string): Uint8Array | null {
  const t = TABLES[arch];
  if (!t) return null;
  const prog: (Insn | string)[] = [
    { code: LD_W_ABS, k: ARCH },
    { code: JEQ_K, k: t.auditArch, jf: "kill" },
    { code: LD_W_ABS, k: NR },
    { code: JGE_K, k: X32_BIT, jt: "eperm" },
    { code: JEQ_K, k: t.clone3, jt: "enosys" },
    ...Object.values(t.absent).map((nr): Insn => ({ code: JEQ_K, k: nr, jt: "enosys" })),
    { code: JEQ_K, k: t.clone, jt: "flags" },
    { code: JEQ_K, k: t.unshare, jt: "flags" },
    ...Object.values(t.denied).map((nr): Insn => ({ code: JEQ_K, k: nr, jt: "eperm" })),
    { code: RET_K, k: RET_ALLOW },
    "flags",
    { code: LD_W_ABS, k: ARG0_LOW },
    { code: JSET_K, k: CLONE_NEWUSER, jt: "eperm" },
    { code: RET_K, k: RET_ALLOW },
    "kill",
    { code: RET_K, k: RET_KILL_PROCESS },
    "eperm",
    { code: RET_K, k: RET_ERRNO | EPERM },
    "enosys",
    { code: RET_K, k: RET_ERRNO | ENOSYS },
  ];
  return assemble(prog);
}

/** Resolves labels to BPF's relative jumps (target = next instruction + offset). */
function assemble(prog: (Insn | string)[]): Uint8Array {
  const labels = new Map<string, number>();
  const insns: Insn[] = [];
  for (const p of prog) {
    if (typeof p === "string") labels.set(p, insns.length);
    else insns.push(p);
  }
  const out = new Uint8Array(insns.length * 8);
  const view = new DataView(out.buffer);
  insns.forEach((insn, pc) => {
    const jump = (label?: string) => {
      if (label === undefined) return 0;
      const offset = labels.get(label)! - (pc + 1);
      if (offset < 0 || offset > 255) throw new Error(`seccomp jump to ${label} out of range`);
      return offset;
    };
    view.setUint16(pc * 8, insn.code, true);
    view.setUint8(pc * 8 + 2, jump(insn.jt));
    view.setUint8(pc * 8 + 3, jump(insn.jf));
    view.setUint32(pc * 8 + 4, insn.k >>> 0, true);
  });
  return out;
}
