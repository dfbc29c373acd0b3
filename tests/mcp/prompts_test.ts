/**
 * The rest of MCP on the handshake era: prompts, completions, resources list_changed, and
 * every listed resource read back (each a document valid against schemas/).
 */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { withMemoryClient } from "./memory_client.ts";
import { benchmarkedRoom } from "../helpers/benchmarked_room.ts";
import { createSurface } from "../../mcp/surface.ts";
import { selectTools } from "../../mcp/selection.ts";
import { allOps } from "../../core/ops/registry.ts";
import { assertValidDocument } from "../helpers/json_schemas.ts";

Deno.test("prompts: listed with their arguments, got with them filled in, refused without", async () => {
  await withMemoryClient({}, async (client) => {
    const { prompts } = await client.listPrompts();
    assert.deepEqual(prompts.map((p) => p.name), [
      "author_bundle",
      "benchmark_bundle",
      "read_report",
    ]);
    for (const p of prompts) assert.ok(p.description && p.title);
    const bench = prompts.find((p) => p.name === "benchmark_bundle")!;
    assert.deepEqual(bench.arguments?.map((a) => [a.name, a.required]), [
      ["room", true],
      ["bundle", true],
      ["candidates", false],
    ]);
    const got = await client.getPrompt({
      name: "benchmark_bundle",
      arguments: { room: "books", bundle: "recall", candidates: "builtin:reference, cmd:mine" },
    });
    const text = (got.messages[0].content as { text: string }).text;
    assert.match(
      text,
      /catalog_benchmark \{room: "books", name: "recall", candidates: \["builtin:reference","cmd:mine"\]/,
    );
    assert.match(text, /job_status \{job, wait_ms: 25000\}/);
    await assert.rejects(
      client.getPrompt({ name: "benchmark_bundle", arguments: { room: "books" } }),
      /needs the argument bundle/,
    );
    await assert.rejects(
      client.getPrompt({ name: "nope", arguments: {} }),
      /Unknown prompt "nope"/,
    );
  });
  // A connection without the tools a prompt needs does not offer it.
  await withMemoryClient({ tools: ["room_list", "room_read"] }, async (client) => {
    assert.deepEqual((await client.listPrompts()).prompts, []);
  });
});

Deno.test("completions: rooms, a room's bundles and experiments, candidate specs", async () => {
  const b = await benchmarkedRoom({ repetitions: 1, rooms: ["bookkeeping", "other"] });
  try {
    await Deno.writeTextFile(
      b.ctx.home.candidatesFile,
      '{"mine" {:command "sh mine.sh"} "yours" {:command "sh yours.sh"}}',
    );
    const surface = createSurface({
      context: b.ctx,
      selection: selectTools(allOps(), {}),
      log: () => {},
    });
    const prompt = (name: string) => ({ type: "ref/prompt" as const, name });
    const values = async (ref: ReturnType<typeof prompt>, name: string, value: string, ctx = {}) =>
      (await surface.complete(ref, { name, value }, ctx)).values;
    assert.deepEqual(await values(prompt("read_report"), "room", "book"), ["bookkeeping", "books"]);
    assert.deepEqual(await values(prompt("benchmark_bundle"), "bundle", "", { room: "books" }), [
      "recall",
    ]);
    assert.deepEqual(await values(prompt("benchmark_bundle"), "bundle", "", { room: "other" }), []);
    assert.deepEqual(
      await values(prompt("read_report"), "experiment", b.experiment.slice(0, 4), {
        room: "books",
      }),
      [b.experiment],
    );
    const specs = await values(prompt("benchmark_bundle"), "candidates", "builtin:reference,cm");
    assert.deepEqual(specs, ["builtin:reference,cmd:mine", "builtin:reference,cmd:yours"]);
    const models = await values(prompt("benchmark_bundle"), "candidates", "claude");
    assert.ok(models.length > 0 && models.every((m) => m.startsWith("claude")), String(models));
    // A resource template's variables complete the same way.
    const files = {
      type: "ref/resource" as const,
      uri: "room://{room}/files{?prefix,offset,limit}",
    };
    assert.deepEqual(await values(files as never, "room", "o"), ["other"]);
    // What is not a known prompt, template or argument completes to nothing.
    assert.deepEqual(await values(prompt("nope"), "room", ""), []);
    assert.deepEqual(await values(prompt("read_report"), "use_case", ""), []);
  } finally {
    await b.close();
  }
});

Deno.test("every resource resources/list lists can be read, as a valid document", async () => {
  const b = await benchmarkedRoom({ repetitions: 1, rooms: ["empty"] });
  try {
    for (const profile of ["bench", "readonly", "admin"]) {
      const surface = createSurface({
        context: b.ctx,
        selection: selectTools(allOps(), { profile }),
        log: () => {},
      });
      const listed = await surface.listResources();
      assert.ok(listed.length >= 10, `${profile}: ${listed.length}`);
      for (const r of listed) {
        const read = await surface.readResource(r.uri);
        assert.equal(read.contents[0].uri, r.uri);
        assertValidDocument(JSON.parse(read.contents[0].text), `${profile} ${r.uri}`);
      }
    }
  } finally {
    await b.close();
  }
});

Deno.test("resources list_changed is sent when the home's rooms change", async () => {
  await withMemoryClient({}, async (client) => {
    const changed = Promise.withResolvers<void>();
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => changed.resolve());
    const before = (await client.listResources()).resources.length;
    await client.callTool({ name: "room_create", arguments: { title: "Books" } });
    // Bounded only so a broken server fails the test instead of hanging it.
    const bound = setTimeout(() => changed.reject(new Error("no list_changed in 60 s")), 60_000);
    try {
      await changed.promise;
    } finally {
      clearTimeout(bound);
    }
    const after = (await client.listResources()).resources;
    assert.ok(after.length > before);
    assert.ok(after.some((r) => r.uri === "room://books/files"));
    const caps = client.getServerCapabilities()!;
    assert.deepEqual(caps.resources, { subscribe: true, listChanged: true });
    assert.deepEqual(caps.prompts, { listChanged: false });
    assert.deepEqual(caps.completions, {});
  });
});
