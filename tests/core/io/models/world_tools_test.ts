import assert from "node:assert/strict";
import { createWorld } from "../../../../core/io/world.ts";
import { READ_LIMIT, runWorldTool, worldTools } from "../../../../core/io/models/world_tools.ts";
import type { ToolCall } from "../../../../core/io/models/types.ts";

function call(
  name: string,
  args: Record<string, unknown> | null,
  argsProblem: string | null = null,
): ToolCall {
  return { id: "c1", name, args, argsProblem, rawArguments: JSON.stringify(args) };
}

async function withWorld(fn: (w: Awaited<ReturnType<typeof createWorld>>) => Promise<void>) {
  const world = await createWorld({
    "/docs/a.txt": "1 2 3",
    "/docs/sub/b.txt": "x".repeat(READ_LIMIT + 10),
  }, { mkdirs: ["/out"] });
  try {
    await fn(world);
  } finally {
    await world.remove();
  }
}

Deno.test("worldTools() offers write_file only to the developer profile, naming the writable directories", () => {
  const dev = worldTools("developer", ["/out"]);
  assert.deepEqual(dev.map((t) => t.name), ["list_files", "read_file", "write_file"]);
  assert.match(dev[2].description, /Only paths under \/out\/ may be written/);
  assert.deepEqual(worldTools("analyst", ["/out"]).map((t) => t.name), ["list_files", "read_file"]);
});

Deno.test("runWorldTool() lists, reads and writes world files", async () => {
  await withWorld(async (w) => {
    const tw = { world: w.files, profile: "developer", writable: ["/out"] };
    const listed = await runWorldTool(call("list_files", { dir: "/docs" }), tw);
    assert.deepEqual(listed, {
      callId: "c1",
      name: "list_files",
      content: "/docs/a.txt\n/docs/sub/b.txt",
      isError: false,
    });
    assert.equal(
      (await runWorldTool(call("read_file", { path: "docs/a.txt" }), tw)).content,
      "1 2 3",
    );
    const long = await runWorldTool(call("read_file", { path: "/docs/sub/b.txt" }), tw);
    assert.match(
      long.content,
      new RegExp(`cut: the file has ${READ_LIMIT + 10} characters, ${READ_LIMIT} shown`),
    );
    const wrote = await runWorldTool(
      call("write_file", { path: "/out/answer.edn", content: "{:total 6}" }),
      tw,
    );
    assert.equal(wrote.content, "Wrote 10 characters to /out/answer.edn");
    assert.equal(await Deno.readTextFile(`${w.dir}/out/answer.edn`), "{:total 6}");
  });
});

Deno.test("runWorldTool() refuses writes outside the writable directories and in read-only profiles", async () => {
  await withWorld(async (w) => {
    const tw = { world: w.files, profile: "developer", writable: ["/out"] };
    const outside = await runWorldTool(
      call("write_file", { path: "/docs/a.txt", content: "evil" }),
      tw,
    );
    assert.equal(outside.isError, true);
    assert.match(outside.content, /\/docs\/a.txt may not be written; only paths under \/out\//);
    const escape = await runWorldTool(
      call("write_file", { path: "/out/../docs/a.txt", content: "evil" }),
      tw,
    );
    assert.match(escape.content, /leaves the world/);
    const prefix = await runWorldTool(
      call("write_file", { path: "/outside.txt", content: "evil" }),
      tw,
    );
    assert.equal(prefix.isError, true);
    const ro = await runWorldTool(call("write_file", { path: "/out/a", content: "x" }), {
      ...tw,
      profile: "analyst",
    });
    assert.match(ro.content, /the profile "analyst" is read-only/);
    assert.equal(await Deno.readTextFile(`${w.dir}/docs/a.txt`), "1 2 3");
    assert.deepEqual(await w.files.list("/out"), []);
  });
});

Deno.test("runWorldTool() answers unknown tools, bad arguments and missing files with error results", async () => {
  await withWorld(async (w) => {
    const tw = { world: w.files, profile: "developer", writable: ["/out"] };
    const unknown = await runWorldTool(call("rm_rf", {}), tw);
    assert.deepEqual([unknown.isError, unknown.content], [
      true,
      'Error: there is no tool "rm_rf". Tools: list_files, read_file, write_file',
    ]);
    assert.match(
      (await runWorldTool(call("read_file", null, "the arguments are not valid JSON"), tw)).content,
      /not valid JSON/,
    );
    assert.match(
      (await runWorldTool(call("read_file", { path: 7 }), tw)).content,
      /path must be a non-empty string/,
    );
    assert.match(
      (await runWorldTool(call("write_file", { path: "/out/a" }), tw)).content,
      /content must be a string/,
    );
    const missing = await runWorldTool(call("read_file", { path: "/docs/none.txt" }), tw);
    assert.equal(missing.isError, true);
    assert.match(missing.content, /no such file/);
  });
});
