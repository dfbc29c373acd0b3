/**
 * benchmarkBundle() installs the bundle in its room beside the first cells, not before them,
 * and records nothing of the run (the experiment, its records) until the install is done:
 * a record never names a bundle its room lacks, and an install that fails records nothing.
 */
import assert from "node:assert/strict";
import { memoryHome } from "../../../adapters/store/memory/home.ts";
import { composeServices } from "../../../adapters/compose.ts";
import { candidateKinds } from "../../../adapters/candidates/registry.ts";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";
import { benchmarkBundle } from "../../../core/engine/benchmark.ts";
import type { RoomStore } from "../../../core/ports/room_store.ts";
import { wordDataset } from "../../helpers/dataset_bundle.ts";

/**
 * `rooms`, whose createRoom() and replaceDir() (how a bundle is installed in a new room and in
 * one that exists) wait for `gate` first (and fail with what it rejects with).
 */
function gatedRooms(rooms: RoomStore, gate: Promise<void>): RoomStore {
  return {
    ...rooms,
    async createRoom(...args) {
      await gate;
      return await rooms.createRoom(...args);
    },
    async replaceDir(...args) {
      await gate;
      return await rooms.replaceDir(...args);
    },
  };
}

const SPECS = [candidateKinds.parse("builtin:reference")];

Deno.test("benchmarkBundle() runs cells while its bundle is installed, recording nothing before it is in its room", async () => {
  const home = await memoryHome();
  const pool = createCheckerPool({ workers: 1 });
  let graded = 0;
  const runner = {
    ...pool,
    check: (...args: Parameters<typeof pool.check>) => {
      graded++;
      return pool.check(...args);
    },
  };
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const attempts: number[] = [];
  try {
    const running = benchmarkBundle({
      services: composeServices(),
      specs: SPECS,
      home: { ...home, rooms: gatedRooms(home.rooms, gate) },
      runner,
      env: () => undefined,
      bundle: { name: "words", files: wordDataset(3) },
      repetitions: 2,
      onEvent: (e) => {
        if (e.type === "attempt") attempts.push(e.done);
      },
    });
    // Cells run (and wait for their commits) while the install waits.
    for (let i = 0; i < 3000 && graded < 3; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(graded >= 3, "cells were graded while the install waited");
    assert.deepEqual(await home.state.listExperiments(), []);
    assert.deepEqual(attempts, [], "no cell counted before the bundle was installed");
    release();
    const outcome = await running;
    assert.equal(outcome.scorecard.complete, true);
    assert.equal(outcome.result.graded, 6);
    assert.match(outcome.commit ?? "", /^[0-9a-f]+$/);
    const files = await home.rooms.readFiles("words", "workflows/words");
    assert.ok(files.has("workflows/words/checker.js"));
    assert.equal((await home.state.listExperiments()).length, 1);
  } finally {
    pool.close();
    await home.close();
  }
});

Deno.test("benchmarkBundle() whose install fails throws its error and records nothing", async () => {
  const home = await memoryHome();
  const runner = createCheckerPool({ workers: 1 });
  const full = new Error("No space left on device");
  // The install meets this rejection only once the run has planned: handled now, so that it
  // is not an unhandled rejection of the test itself meanwhile.
  const failing = Promise.reject(full);
  failing.catch(() => {});
  try {
    await assert.rejects(
      () =>
        benchmarkBundle({
          services: composeServices(),
          specs: SPECS,
          home: { ...home, rooms: gatedRooms(home.rooms, failing) },
          runner,
          env: () => undefined,
          bundle: { name: "words", files: wordDataset(3) },
          repetitions: 2,
        }),
      (e) => e === full,
    );
    assert.deepEqual(await home.state.listExperiments(), []);
  } finally {
    runner.close();
    await home.close();
  }
});
