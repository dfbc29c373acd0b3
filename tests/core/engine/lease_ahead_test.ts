import assert from "node:assert/strict";
import { LEASE_AHEAD_MAX, leaseAheadWindow } from "../../../core/engine/lease_ahead.ts";

Deno.test("leaseAheadWindow() leases nothing ahead until a cell has finished", () => {
  assert.equal(leaseAheadWindow(4).ahead(), 0);
});

Deno.test("leaseAheadWindow() holds what would start within a second, capped", () => {
  const fast = leaseAheadWindow(4);
  for (let i = 0; i < 20; i++) fast.finished(1);
  assert.equal(fast.ahead(), LEASE_AHEAD_MAX);
  const medium = leaseAheadWindow(4);
  for (let i = 0; i < 20; i++) medium.finished(200);
  assert.equal(medium.ahead(), 20);
  // Agent CLIs: minutes per cell, nothing ahead of the cells about to start.
  const slow = leaseAheadWindow(4);
  slow.finished(90_000);
  assert.equal(slow.ahead(), 0);
});

Deno.test("leaseAheadWindow() follows the latest cells when they slow down", () => {
  const w = leaseAheadWindow(2);
  for (let i = 0; i < 50; i++) w.finished(2);
  assert.equal(w.ahead(), LEASE_AHEAD_MAX);
  for (let i = 0; i < 16; i++) w.finished(60_000);
  assert.equal(w.ahead(), 0);
});
