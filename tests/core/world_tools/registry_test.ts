import assert from "node:assert/strict";
import { createWorld } from "../../../adapters/world/world.ts";
import {
  callWorldTool,
  offeredTools,
  type ToolWorld,
  WORLD_TOOL_NAMES,
} from "../../../core/world_tools/registry.ts";
import {
  READ_LIMIT,
  WRITE_LIMIT,
  WRITE_TOTAL_LIMIT,
} from "../../../core/world_tools/file_tools.ts";
import type { WorldWeb } from "../../../core/web/types.ts";

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

/** A web that answers from a table, remembering what it was asked. */
function tableWeb(pages: Record<string, string>): WorldWeb & { asked: string[] } {
  const asked: string[] = [];
  return {
    mode: "frozen",
    asked,
    search(query, count) {
      asked.push(`search ${query} ${count}`);
      return Promise.resolve({
        ok: true,
        hits: Object.entries(pages).filter(([, t]) => t.includes(query)).slice(0, count)
          .map(([url, t]) => ({ url, title: url, description: t })),
      });
    },
    fetch(url) {
      asked.push(`fetch ${url}`);
      const text = pages[url];
      return Promise.resolve(
        text === undefined
          ? { ok: true, url, finalUrl: url, status: 404, text: "Not present in frozen web" }
          : { ok: true, url, finalUrl: url, status: 200, text },
      );
    },
  };
}

const stub = {
  list: () => Promise.resolve([]),
  read: () => Promise.reject(new Error("none")),
  write: () => Promise.resolve(),
};

Deno.test("offeredTools() offers write_file only to the developer profile, web tools only with a web", () => {
  const dev: ToolWorld = { files: stub, profile: "developer", writable: ["/out"], web: null };
  const names = (w: ToolWorld) => offeredTools(w).map((t) => t.name);
  assert.deepEqual(names(dev), ["list_files", "read_file", "write_file"]);
  assert.match(offeredTools(dev)[2].description, /Only paths under \/out\/ may be written/);
  assert.deepEqual(names({ ...dev, profile: "analyst" }), ["list_files", "read_file"]);
  const web = { ...dev, web: tableWeb({}) };
  assert.deepEqual(names(web), [
    "list_files",
    "read_file",
    "write_file",
    "web_search",
    "web_fetch",
  ]);
  assert.deepEqual(WORLD_TOOL_NAMES, names(web));
  const fetch = offeredTools(web).find((t) => t.name === "web_fetch")!;
  assert.deepEqual([fetch.readOnly, fetch.openWorld, fetch.inputSchema.required], [true, true, [
    "url",
  ]]);
  assert.equal(offeredTools(web).find((t) => t.name === "write_file")!.readOnly, false);
  for (const t of offeredTools(web)) assert.equal(t.inputSchema.additionalProperties, false);
});

Deno.test("callWorldTool() lists, reads and writes world files", async () => {
  await withWorld(async (w) => {
    const tw: ToolWorld = { files: w.files, profile: "developer", writable: ["/out"], web: null };
    assert.deepEqual(await callWorldTool("list_files", { dir: "/docs" }, tw), {
      content: "/docs/a.txt\n/docs/sub/b.txt",
      isError: false,
    });
    assert.equal((await callWorldTool("read_file", { path: "docs/a.txt" }, tw)).content, "1 2 3");
    const long = await callWorldTool("read_file", { path: "/docs/sub/b.txt" }, tw);
    assert.match(
      long.content,
      new RegExp(`cut: the file has ${READ_LIMIT + 10} characters, ${READ_LIMIT} shown`),
    );
    const wrote = await callWorldTool(
      "write_file",
      { path: "/out/answer.edn", content: "{:total 6}" },
      tw,
    );
    assert.equal(wrote.content, "Wrote 10 characters to /out/answer.edn");
    assert.equal(await Deno.readTextFile(`${w.dir}/out/answer.edn`), "{:total 6}");
  });
});

Deno.test("callWorldTool() refuses writes outside the writable directories and in read-only profiles", async () => {
  await withWorld(async (w) => {
    const tw: ToolWorld = { files: w.files, profile: "developer", writable: ["/out"], web: null };
    const outside = await callWorldTool("write_file", { path: "/docs/a.txt", content: "evil" }, tw);
    assert.equal(outside.isError, true);
    assert.match(outside.content, /\/docs\/a.txt may not be written; only paths under \/out\//);
    const escape = await callWorldTool(
      "write_file",
      { path: "/out/../docs/a.txt", content: "evil" },
      tw,
    );
    assert.match(escape.content, /leaves the world/);
    const prefix = await callWorldTool("write_file", { path: "/outside.txt", content: "evil" }, tw);
    assert.equal(prefix.isError, true);
    const ro = await callWorldTool("write_file", { path: "/out/a", content: "x" }, {
      ...tw,
      profile: "analyst",
    });
    assert.match(ro.content, /the profile "analyst" is read-only/);
    assert.equal(await Deno.readTextFile(`${w.dir}/docs/a.txt`), "1 2 3");
    assert.deepEqual(await w.files.list("/out"), []);
  });
});

Deno.test("callWorldTool() answers unknown tools, bad arguments and missing files with error results", async () => {
  await withWorld(async (w) => {
    const tw: ToolWorld = { files: w.files, profile: "developer", writable: ["/out"], web: null };
    assert.deepEqual(await callWorldTool("rm_rf", {}, tw), {
      isError: true,
      content: 'Error: there is no tool "rm_rf". Tools: list_files, read_file, write_file',
    });
    assert.match(
      (await callWorldTool("read_file", null, tw, {
        argsProblem: "the arguments are not valid JSON",
      }))
        .content,
      /not valid JSON/,
    );
    assert.match(
      (await callWorldTool("read_file", { path: 7 }, tw)).content,
      /path must be a non-empty string/,
    );
    assert.match(
      (await callWorldTool("write_file", { path: "/out/a" }, tw)).content,
      /content must be a string/,
    );
    const missing = await callWorldTool("read_file", { path: "/docs/none.txt" }, tw);
    assert.equal(missing.isError, true);
    assert.match(missing.content, /no such file/);
  });
});

Deno.test("callWorldTool() answers web_search and web_fetch from the attempt's web, refusing them without one", async () => {
  const web = tableWeb({ "https://a.example/": "Alpha makes widgets" });
  const tw: ToolWorld = { files: stub, profile: "developer", writable: ["/out"], web };
  const found = await callWorldTool("web_search", { query: "widgets" }, tw);
  assert.deepEqual(found, {
    isError: false,
    content: "1. https://a.example/\n   https://a.example/\n   Alpha makes widgets",
  });
  assert.deepEqual(await callWorldTool("web_search", { query: "gadgets", count: 3 }, tw), {
    isError: false,
    content: "(no results)",
  });
  assert.match(
    (await callWorldTool("web_search", { query: "x", count: 0 }, tw)).content,
    /count must be a whole number from 1 to 20/,
  );
  assert.match(
    (await callWorldTool("web_search", { query: " " }, tw)).content,
    /query must be a non-empty string/,
  );
  const page = await callWorldTool("web_fetch", { url: "https://a.example/" }, tw);
  assert.deepEqual(page, {
    isError: false,
    content: "HTTP 200 https://a.example/\n\nAlpha makes widgets",
  });
  const missing = await callWorldTool("web_fetch", { url: "https://b.example/" }, tw);
  assert.equal(missing.isError, true);
  assert.match(missing.content, /^HTTP 404/);
  assert.deepEqual(web.asked, [
    "search widgets 5",
    "search gadgets 3",
    "fetch https://a.example/",
    "fetch https://b.example/",
  ]);
  const none = await callWorldTool("web_fetch", { url: "https://a.example/" }, {
    ...tw,
    web: null,
  });
  assert.deepEqual(none, {
    isError: true,
    content: "Error: this task may not use web_fetch. Tools: list_files, read_file, write_file",
  });
});

Deno.test("callWorldTool() web_search shows a hit's description cut to 300 characters", async () => {
  const web = tableWeb({ "https://l.example/": "widgets " + "y".repeat(400) });
  const out = await callWorldTool("web_search", { query: "widgets" }, {
    files: stub,
    profile: "developer",
    writable: ["/out"],
    web,
  });
  const description = out.content.split("\n")[2].trim();
  assert.equal(description, ("widgets " + "y".repeat(400)).slice(0, 300) + "…");
});

Deno.test("callWorldTool() bounds the bytes write_file leaves in one world, not its calls", async () => {
  const sizes = new Map<string, number>();
  const files = {
    ...stub,
    write: (p: string, t: string) => (sizes.set(p, t.length), Promise.resolve()),
  };
  const tw: ToolWorld = { files, profile: "developer", writable: ["/out"], web: null };
  const full = "x".repeat(WRITE_LIMIT);
  // Replacing one file again and again leaves one file's bytes.
  for (let i = 0; i < 80; i++) {
    const r = await callWorldTool("write_file", { path: "/out/same", content: full }, tw);
    assert.equal(r.isError, false, r.content);
  }
  // New files count until the world holds the limit; then writes are refused, and say why.
  const fit = Math.floor(WRITE_TOTAL_LIMIT / WRITE_LIMIT) - 1;
  for (let i = 0; i < fit; i++) {
    const r = await callWorldTool("write_file", { path: `/out/f${i}`, content: full }, tw);
    assert.equal(r.isError, false, r.content);
  }
  const over = await callWorldTool("write_file", { path: "/out/one-more", content: full }, tw);
  assert.equal(over.isError, true);
  assert.match(over.content, /over the limit of 67108864/);
  assert.equal(sizes.has("/out/one-more"), false);
  // Another world has its own bound.
  const other = { ...tw, files: { ...stub } };
  const r = await callWorldTool("write_file", { path: "/out/f0", content: full }, other);
  assert.equal(r.isError, false);
});
