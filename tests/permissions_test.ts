import assert from "node:assert/strict";
import { DVERGR_PERMISSIONS, DVERGR_V8_FLAGS } from "../core/permissions.ts";

Deno.test("deno.json's tasks run dvergr with exactly DVERGR_PERMISSIONS, never -A", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url)));
  const flags = DVERGR_PERMISSIONS.join(" ");
  for (const task of ["dvergr", "test", "bench", "compile"]) {
    const line: string = config.tasks[task];
    assert.ok(line.includes(` ${flags} `), `task ${task} declares the permissions: ${line}`);
    assert.doesNotMatch(line, /(^| )(-A|--allow-all)( |$)/);
    assert.equal(line.match(/--allow-/g)?.length, DVERGR_PERMISSIONS.length, `task ${task}`);
  }
});

Deno.test("deno.json's dvergr and compile tasks run dvergr with DVERGR_V8_FLAGS", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url)));
  for (const task of ["dvergr", "compile"]) {
    assert.ok(config.tasks[task].includes(` ${DVERGR_V8_FLAGS} `), `task ${task}`);
  }
});
