/**
 * The worker pool's timers (sandbox/pool_timer.ts): after() calls its function once, after
 * its time, in the order the times fall due; a cancelled one never calls it.
 */
import assert from "node:assert/strict";
import { after } from "../../sandbox/pool_timer.ts";

Deno.test("after() calls once, in due order, and not at all once cancelled", async () => {
  const calls: string[] = [];
  const { promise: lastDone, resolve } = Promise.withResolvers<void>();
  after(40, () => calls.push("late"));
  const cancelled = after(10, () => calls.push("cancelled"));
  after(0, () => calls.push("soon"));
  after(-5, () => calls.push("past"));
  cancelled.cancel();
  const last = after(80, () => {
    calls.push("last");
    resolve();
  });
  await lastDone;
  last.cancel(); // after it ran: nothing happens
  assert.deepEqual(calls.filter((c) => c !== "past" && c !== "soon"), ["late", "last"]);
  assert.deepEqual(calls.slice(0, 2).sort(), ["past", "soon"]);
  assert.equal(calls.length, 4);
});
