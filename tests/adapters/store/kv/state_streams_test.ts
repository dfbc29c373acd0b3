import assert from "node:assert/strict";
import { streamValues } from "../../../../adapters/store/kv/state_streams.ts";
import { openKvStateStore } from "../../../../adapters/store/kv/state_store.ts";
import { memoryBlobStore } from "../../../../adapters/store/memory/blob_store.ts";
import { attemptRecord } from "../../../helpers/records.ts";

Deno.test("streamValues() pages through a prefix in key order, each value once", async () => {
  const kv = await Deno.openKv(":memory:");
  for (let i = 0; i < 23; i++) await kv.set(["x", "e", i], { v: i });
  await kv.set(["x", "f", 0], { v: -1 });
  let locked = 0;
  const deps = {
    kv,
    decode: (s: unknown) => Promise.resolve((s as { v: number }).v),
    retryLocked: <T>(f: () => Promise<T>) => {
      locked++;
      return f();
    },
  };
  for (const page of [1, 5, 23, 100]) {
    const seen = await Array.fromAsync(streamValues<number>(deps, ["x", "e"], page));
    assert.deepEqual(seen, Array.from({ length: 23 }, (_, i) => i), `page ${page}`);
  }
  // One list call per page (23 / 5 → 5 pages).
  locked = 0;
  await Array.fromAsync(streamValues<number>(deps, ["x", "e"], 5));
  assert.equal(locked, 5);
  kv.close();
});

Deno.test("streamCellRecords() and streamAttemptHistory() give what cellRecords() and attemptHistory() do", async () => {
  const home = { state: await openKvStateStore(":memory:", memoryBlobStore()) };
  for (let c = 0; c < 7; c++) {
    for (let t = 1; t <= 1 + (c % 3); t++) {
      const r = attemptRecord({ candidate: `c${c}`, experimentId: "e1", tryNo: t });
      assert.equal(await home.state.putAttempt(r), true);
    }
  }
  await home.state.putAttempt(attemptRecord({ candidate: "other", experimentId: "e2" }));
  assert.deepEqual(
    await Array.fromAsync(home.state.streamCellRecords("e1")),
    await home.state.cellRecords("e1"),
  );
  const history = await Array.fromAsync(home.state.streamAttemptHistory("e1"));
  assert.deepEqual(history, await home.state.attemptHistory("e1"));
  assert.equal(history.length, 13);
  home.state.close();
});
