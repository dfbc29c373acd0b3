import assert from "node:assert/strict";
import { readBundleDir } from "../../../adapters/files/bundle_dir.ts";
import { parseBundle } from "../../../core/bundle/parse.ts";
import { createAttemptWeb, hostWebClient } from "../../../adapters/web/attempt_web.ts";
import { sourcesPolicy } from "../../../core/web/policy.ts";
import { callWorldTool } from "../../../core/world_tools/registry.ts";

const EXAMPLE = new URL("../../../examples/workflows/tool-rivals", import.meta.url).pathname;

Deno.test("createAttemptWeb() on a frozen web: the deny-list sits in front of it, hits of blocked hosts are left out, everything is recorded", async () => {
  const bundle = parseBundle(await readBundleDir(EXAMPLE));
  const aw = createAttemptWeb(bundle, { mode: "frozen", live: null })!;
  const { web, recorder } = aw;
  const found = await web.search("carpenters tools", 10);
  assert.equal(found.ok, true);
  const urls = found.ok ? found.hits.map((h) => h.url) : [];
  assert.ok(urls.length >= 3);
  assert.ok(!urls.some((u) => u.includes("acme-tools.example")), "a blocked host's page is no hit");

  assert.deepEqual(await web.fetch("https://acme-tools.example/compare"), {
    ok: false,
    denied: "blocked",
    message: "acme-tools.example is a blocked source for this task",
  });
  const bolt = await web.fetch("https://bolt-hardware.example/#team");
  assert.equal(bolt.ok && bolt.status, 200);
  assert.equal(bolt.ok && bolt.url, "https://bolt-hardware.example/");
  const missing = await web.fetch("https://nowhere.example/");
  assert.deepEqual(missing.ok && [missing.status, missing.text], [
    404,
    "Not present in frozen web",
  ]);
  const query = await web.fetch("https://bolt-hardware.example/?q=1");
  assert.deepEqual(query.ok && [query.status, query.text], [
    400,
    "Frozen pages do not support query parameters",
  ]);

  const ev = recorder.evidence();
  assert.deepEqual(
    { searches: ev.searches, requests: ev.requests, pages: ev.pages, denials: ev.denials },
    { searches: 1, requests: 4, pages: 1, denials: { blocked: 1 } },
  );
  assert.deepEqual(Object.keys(ev.fetched), ["https://bolt-hardware.example/"]);
  assert.equal(ev.titles["https://bolt-hardware.example/"], "Bolt Hardware");

  // The tool shows a hit's description cut short (a frozen description is its whole page).
  const out = await callWorldTool("web_search", { query: "carpenters" }, {
    files: {
      list: () => Promise.resolve([]),
      read: () => Promise.reject(),
      write: () => Promise.resolve(),
    },
    profile: "developer",
    writable: ["/out"],
    web,
  });
  assert.equal(out.isError, false);
  assert.match(out.content, /^1\. /);
});

Deno.test("createAttemptWeb() gives no web when the bundle has none", async () => {
  const bundle = parseBundle(await readBundleDir(EXAMPLE));
  assert.equal(createAttemptWeb(bundle, { mode: "off", live: null }), null);
});

Deno.test("createAttemptWeb() live: at most 4 GETs of one attempt in flight, pages recorded under the asked and the final URL", async () => {
  const bundle = parseBundle({
    name: "live",
    files: new Map([
      ["workflow.edn", '{:title "L" :task "t" :fetched true :allowed-sources ["127.0.0.1"]}'],
      ["checker.js", "export function check() { return { checks: {}, reward: 1 }; }"],
      ["fixtures/a.md", "a"],
    ]),
  });
  let inFlight = 0;
  let most = 0;
  const fetchImpl: typeof fetch = async (input) => {
    inFlight++;
    most = Math.max(most, inFlight);
    await new Promise((r) => setTimeout(r, 20));
    inFlight--;
    const url = String(input);
    return url.endsWith("/old")
      ? new Response(null, { status: 301, headers: { location: "/new" } })
      : new Response(`<title>T</title><p>${url}</p>`, { headers: { "content-type": "text/html" } });
  };
  const { web, recorder } = createAttemptWeb(bundle, {
    mode: "live",
    live: { brave: { apiKey: "k", baseUrl: "http://127.0.0.1:9" }, fetchImpl },
  })!;
  const all = await Promise.all(
    Array.from({ length: 10 }, (_, i) => web.fetch(`http://127.0.0.1:9/p${i}`)),
  );
  assert.ok(all.every((r) => r.ok && r.status === 200));
  assert.ok(most <= 4, `at most 4 at once, saw ${most}`);
  const moved = await web.fetch("http://127.0.0.1:9/old");
  assert.equal(moved.ok && moved.finalUrl, "http://127.0.0.1:9/new");
  const ev = recorder.evidence();
  assert.equal(ev.fetched["http://127.0.0.1:9/old"], "T http://127.0.0.1:9/new");
  assert.equal(ev.fetched["http://127.0.0.1:9/new"], "T http://127.0.0.1:9/new");
  assert.equal(ev.pages, 12);
});

Deno.test("createAttemptWeb() calls a web unrestricted only when it is live and its policy refuses no host", async () => {
  const live = (workflow: string) =>
    createAttemptWeb(
      parseBundle({
        name: "w",
        files: new Map([
          ["workflow.edn", workflow],
          ["checker.js", "export function check() { return { checks: {}, reward: 1 }; }"],
          ["fixtures/a.md", "a"],
        ]),
      }),
      { mode: "live", live: { brave: { apiKey: "k", baseUrl: "http://127.0.0.1:9" } } },
    )!.web;
  assert.equal(live('{:title "L" :task "t"}').unrestricted, true);
  assert.equal(live('{:title "L" :task "t" :allowed-sources ["a.example"]}').unrestricted, false);
  assert.equal(live('{:title "L" :task "t" :blocked-sources ["b.example"]}').unrestricted, false);
  const frozen = createAttemptWeb(parseBundle(await readBundleDir(EXAMPLE)), {
    mode: "frozen",
    live: null,
  })!;
  assert.notEqual(frozen.web.unrestricted, true);
});

Deno.test("createAttemptWeb() under a user's policy: a frozen web refuses what the user blocks, and a live web it narrows is no longer unrestricted", async () => {
  const bundle = parseBundle(await readBundleDir(EXAMPLE));
  const user = sourcesPolicy({ block: ["bolt-hardware.example"] });
  const { web, recorder } = createAttemptWeb(bundle, { mode: "frozen", live: null }, user)!;
  assert.deepEqual(await web.fetch("https://bolt-hardware.example/"), {
    ok: false,
    denied: "blocked",
    message: "bolt-hardware.example is a blocked source for this task",
  });
  const found = await web.search("carpenters tools", 10);
  assert.ok(found.ok && found.hits.length > 0);
  assert.ok(found.ok && !found.hits.some((h) => h.url.includes("bolt-hardware.example")));
  assert.equal((await web.fetch("https://nailco.example/about")).ok, true);
  assert.deepEqual(recorder.evidence().denials, { blocked: 1 });

  const open = parseBundle({
    name: "w",
    files: new Map([
      ["workflow.edn", '{:title "L" :task "t" :web :live}'],
      ["checker.js", "export function check() { return { checks: {}, reward: 1 }; }"],
      ["fixtures/a.md", "a"],
    ]),
  });
  const setup = {
    mode: "live" as const,
    live: { brave: { apiKey: "k", baseUrl: "http://127.0.0.1:9" } },
  };
  assert.equal(createAttemptWeb(open, setup, null)!.web.unrestricted, true);
  // The model gateway forwards provider-side web tools only to an unrestricted web.
  assert.equal(createAttemptWeb(open, setup, user)!.web.unrestricted, false);
  assert.equal(hostWebClient.forBundle(open, { env: () => "k", policy: user }).mode, "live");
  assert.equal(
    hostWebClient.forBundle(open, { env: () => "k", policy: sourcesPolicy({ allow: [] }) }).mode,
    "off",
  );
});
