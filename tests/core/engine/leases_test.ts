import assert from "node:assert/strict";
import { memoryBlobStore } from "../../../adapters/store/memory/blob_store.ts";
import { openKvStateStore } from "../../../adapters/store/kv/state_store.ts";
import { cellLeases } from "../../../core/engine/leases.ts";
import { fakeTimer } from "../../helpers/fake_timer.ts";
import { hostProcesses } from "../../../adapters/system/process_alive.ts";

const A = { pid: 101, host: "elsewhere", owner: "run-a" };
const B = { pid: 202, host: "elsewhere", owner: "run-b" };

/** Resolves once `ok()` holds, looking every few ms (at most 10 s). */
async function until(ok: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail("the condition did not come true within 10 s");
}

Deno.test("cellLeases() renews every held lease, started or not, past its lease time, until handed over", async () => {
  const state = await openKvStateStore(":memory:", memoryBlobStore());
  const timer = fakeTimer();
  const leases = cellLeases(state, "e1", {
    holder: A,
    processes: hostProcesses,
    leaseMs: 900,
    timer,
  });
  // More cells than one renewal commit holds.
  const cells = Array.from({ length: 130 }, (_, i) => `cell-${i}`);
  assert.deepEqual(await leases.take(cells), cells.map(() => true));
  assert.equal(leases.held, 130);
  const untils = async () =>
    (await Promise.all(cells.map((c) => state.leaseOf("e1", c))))
      .map((l) => l?.until ?? 0);
  // Ten renewal periods: over three lease times, with no cell started.
  for (let step = 1; step <= 10; step++) {
    await timer.advance(300);
    const now = timer.now();
    await until(async () => (await untils()).every((u) => u === now + 900));
    const others = await state.takeLeases("e1", cells, B, 900, now);
    assert.equal(others.filter((t) => t.ok).length, 0, `step ${step}: another holder took some`);
  }
  // A cell handed over (its record's commit releases it) is renewed no more.
  leases.handOver("cell-0");
  const handed = (await state.leaseOf("e1", "cell-0"))!.until;
  await timer.advance(300);
  const now = timer.now();
  await until(async () => (await state.leaseOf("e1", "cell-1"))?.until === now + 900);
  assert.equal((await state.leaseOf("e1", "cell-0"))!.until, handed);
  // Released: gone, and no longer renewed.
  await leases.release(cells.slice(1));
  assert.equal(leases.held, 0);
  assert.equal(await state.leaseOf("e1", "cell-1"), null);
  leases.close();
  state.close();
});

Deno.test("cellLeases() marks a lease lost when another holder took it over after it ran out", async () => {
  const state = await openKvStateStore(":memory:", memoryBlobStore());
  const timer = fakeTimer();
  const leases = cellLeases(state, "e1", {
    holder: A,
    processes: hostProcesses,
    leaseMs: 900,
    timer,
  });
  assert.deepEqual(await leases.take(["a", "b"]), [true, true]);
  // The process was stopped past its lease time: B took "b" over in between.
  assert.equal((await state.takeLease("e1", "b", B, 900, timer.now() + 1000)).ok, true);
  await timer.advance(300);
  await until(() => Promise.resolve(leases.lost("b")));
  assert.equal(leases.lost("a"), false);
  assert.equal(leases.held, 1);
  assert.equal((await state.leaseOf("e1", "b"))?.owner, B.owner);
  leases.close();
  state.close();
});
