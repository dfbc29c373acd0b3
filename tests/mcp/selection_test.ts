import assert from "node:assert/strict";
import { allOps } from "../../core/ops/registry.ts";
import type { DvergrError } from "../../core/errors.ts";
import { selectTools } from "../../mcp/selection.ts";

const names = (req: Parameters<typeof selectTools>[1]) =>
  selectTools(allOps(), req).ops.map((o) => o.name);

Deno.test("selectTools() bench profile (the default) has the benchmark tools, not promotion", () => {
  const bench = names({});
  assert.deepEqual(bench, names({ profile: "bench" }));
  for (
    const n of [
      "room_create",
      "room_write",
      "catalog_cases",
      "catalog_benchmark",
      "job_status",
      "scorecard_detail",
      "experiment_report",
    ]
  ) assert.ok(bench.includes(n), n);
  assert.ok(!bench.includes("catalog_promote"));
});

Deno.test("selectTools() readonly has exactly the read ops; admin has every op", () => {
  const ops = allOps();
  assert.deepEqual(
    names({ profile: "readonly" }),
    ops.filter((o) => o.kind === "read").map((o) => o.name),
  );
  assert.ok(!names({ profile: "readonly" }).includes("room_write"));
  assert.deepEqual(names({ profile: "admin" }), ops.map((o) => o.name));
  assert.ok(names({ profile: "admin" }).includes("catalog_promote"));
});

Deno.test("selectTools() --toolsets picks whole toolsets, comma-separated or repeated", () => {
  assert.deepEqual(names({ toolsets: ["jobs"] }), ["job_status", "job_list", "job_cancel"]);
  assert.deepEqual(
    names({ toolsets: ["jobs,scorecards"] }),
    names({ toolsets: ["jobs", "scorecards"] }),
  );
});

Deno.test("selectTools() refuses unknown profiles, toolsets and tools, listing the known ones", () => {
  assert.throws(
    () => selectTools(allOps(), { profile: "offload" }),
    (e: DvergrError) =>
      e.code === "USAGE" &&
      e.message === 'Unknown dvergr MCP profile: "offload" (known: bench, readonly, admin, code)',
  );
  assert.throws(
    () => selectTools(allOps(), { toolsets: ["jobs,nope"] }),
    (e: DvergrError) => /Unknown dvergr MCP toolset: "nope" \(known: .*jobs/.test(e.message),
  );
  assert.throws(
    () => selectTools(allOps(), { tools: ["room_read", "read_file"] }),
    (e: DvergrError) => /Unknown dvergr MCP tool: "read_file" \(known: .*room_read/.test(e.message),
  );
  assert.throws(() => selectTools(allOps(), { profile: "bench", toolsets: ["jobs"] }));
});

Deno.test("selectTools() pins tools with a room parameter to one room, and only those", () => {
  const s = selectTools(allOps(), { room: "books", tools: ["room_read,room_write"] });
  assert.equal(s.room, "books");
  assert.deepEqual(s.ops.map((o) => o.name), ["room_read", "room_write"]);
  assert.throws(
    () => selectTools(allOps(), { room: "books", tools: ["job_status"] }),
    (e: DvergrError) => /Cannot pin job_status to room "books"/.test(e.message),
  );
  assert.throws(
    () => selectTools(allOps(), { room: "books" }),
    (e: DvergrError) => /without naming its tools/.test(e.message),
  );
  assert.throws(
    () => selectTools(allOps(), { room: "Books!", tools: ["room_read"] }),
    (e: DvergrError) => e.code === "ROOM_INVALID",
  );
});
