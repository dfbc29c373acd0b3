import assert from "node:assert/strict";
import { deniedSyscalls, seccompFilter } from "../../../../adapters/candidates/command/seccomp.ts";

Deno.test("seccompFilter() assembles x86_64 instructions that start by checking the arch", () => {
  const bpf = seccompFilter("x86_64")!;
  assert.equal(bpf.length % 8, 0);
  const view = new DataView(bpf.buffer);
  // ld [arch], then jeq AUDIT_ARCH_X86_64 with a jump-if-false to the kill return.
  assert.equal(view.getUint16(0, true), 0x20);
  assert.equal(view.getUint32(4, true), 4);
  assert.equal(view.getUint16(8, true), 0x15);
  assert.equal(view.getUint32(12, true), 0xc000003e);
  const n = bpf.length / 8;
  const killAt = 1 + 1 + view.getUint8(11);
  assert.equal(view.getUint16(killAt * 8, true), 0x06);
  assert.equal(view.getUint32(killAt * 8 + 4, true), 0x80000000);
  // Every jump lands inside the program, and the last instruction returns.
  for (let pc = 0; pc < n; pc++) {
    if ((view.getUint16(pc * 8, true) & 0x07) !== 0x05) continue;
    assert(pc + 1 + view.getUint8(pc * 8 + 2) < n && pc + 1 + view.getUint8(pc * 8 + 3) < n);
  }
  assert.equal(view.getUint16((n - 1) * 8, true), 0x06);
});

Deno.test("seccompFilter() refuses ptrace and mount with EPERM and knows no other arch yet", () => {
  const bpf = seccompFilter("x86_64")!;
  const view = new DataView(bpf.buffer);
  const compared = new Set<number>();
  for (let pc = 0; pc < bpf.length / 8; pc++) {
    if (view.getUint16(pc * 8, true) === 0x15) compared.add(view.getUint32(pc * 8 + 4, true));
  }
  for (const nr of [101, 165, 166, 310, 311, 321]) assert(compared.has(nr), `syscall ${nr}`);
  assert(deniedSyscalls("x86_64").includes("ptrace"));
  assert.equal(seccompFilter("riscv64"), null);
  assert.deepEqual(deniedSyscalls("riscv64"), []);
});
