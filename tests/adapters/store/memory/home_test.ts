import assert from "node:assert/strict";
import { memoryHome } from "../../../../adapters/store/memory/home.ts";
import { attemptRecord } from "../../../helpers/records.ts";

Deno.test("memoryHome() keeps rooms and records in memory and removes its directory on close", async () => {
  const home = await memoryHome();
  await home.rooms.createRoom("r");
  assert.deepEqual(await home.rooms.listRooms(), ["r"]);
  assert.equal(await home.state.putAttempt(attemptRecord({ candidate: "a" })), true);
  assert.equal((await home.state.cellRecords("exp-1")).length, 1);
  await home.close();
  await assert.rejects(() => Deno.lstat(home.dir), Deno.errors.NotFound);
});
