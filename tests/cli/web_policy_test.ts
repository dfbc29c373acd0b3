/**
 * A user's web policy composed with the bundle's: `--allow-sources`/`--block-sources`
 * (catalog_benchmark's allow_sources/block_sources) and the home's web-policy.edn narrow
 * what a bundle lets its attempts read. A scripted model (a local OpenAI server) fetches two
 * pages of a local web site on 127.0.0.1 that the bundle allows, under two names; blocking
 * one name refuses its fetch as `blocked` before the site is asked. The policy is part of
 * the experiment: CLI flags, MCP arguments and the home file give the same experiment,
 * another than without a policy, and experiments without one keep the ids they had.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runMain } from "../../main.ts";
import { memoryContext } from "../../cli/context.ts";
import { writeTree } from "../../adapters/files/bundle_dir.ts";
import { openHome } from "../../adapters/store/kv/home.ts";
import { memoryHome } from "../../adapters/store/memory/home.ts";
import { composeServices } from "../../adapters/compose.ts";
import { candidateKinds } from "../../adapters/candidates/registry.ts";
import { prepareBenchmark } from "../../core/engine/benchmark.ts";
import { callOp } from "../../core/ops/registry.ts";
import { catalogBenchmark } from "../../core/ops/catalog_run.ts";
import { syncBundle } from "../../core/ports/room_store.ts";
import { createCheckerPool } from "../../sandbox/checker_pool.ts";
import { testOpContext } from "../helpers/op_context.ts";
import { type FakeScript, startFakeOpenAI } from "../helpers/fake_providers.ts";
import type { DvergrError } from "../../core/errors.ts";
import { startPostgres } from "../helpers/postgres.ts";

const CHECKER = `export function check({ files }) {
  const wrote = (files["/out/answer.txt"] ?? "").trim() !== "";
  return { checks: { "wrote?": wrote }, reward: wrote ? 1 : 0 };
}`;

/** A live bundle that allows both names of the local site and blocks another host. */
const LIVE_FILES = new Map([
  [
    "workflow.edn",
    '{:title "Local pages" :task "Read the pages; write /out/answer.txt." :fetched true\n' +
    ' :allowed-sources ["127.0.0.1" "localhost"] :blocked-sources ["answers.example"]\n' +
    " :timeout-ms 60000}",
  ],
  ["checker.js", CHECKER],
  ["fixtures/docs/a.md", "a"],
]);

const NO_WEB_FILES = new Map([
  ["workflow.edn", '{:title "No web" :task "Write /out/answer.txt."}'],
  ["checker.js", CHECKER],
  ["fixtures/docs/a.md", "a"],
]);

/** A local site on 127.0.0.1; what Host each request named. */
function startSite() {
  const hosts: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    hosts.push(new URL(req.url).hostname);
    return new Response(`<html><title>Page</title><body>Page of ${req.url}</body></html>`, {
      headers: { "content-type": "text/html" },
    });
  });
  return { hosts, port: server.addr.port, close: () => server.shutdown() };
}

/** Fetches the site as 127.0.0.1, then as localhost, then writes its answer. */
function reader(port: number): FakeScript {
  return (t) => {
    const turn = (t.body.messages as { role: string }[]).filter((m) => m.role === "assistant")
      .length;
    const call = (name: string, input: unknown) => ({ toolCalls: [{ name, input }] });
    if (turn === 0) return call("web_fetch", { url: `http://127.0.0.1:${port}/one` });
    if (turn === 1) return call("web_fetch", { url: `http://localhost:${port}/two` });
    if (turn === 2) return call("write_file", { path: "/out/answer.txt", content: "read" });
    return { text: "Done." };
  };
}

interface Run {
  code: number;
  out: string;
  err: string;
}

async function dvergr(env: Record<string, string>, ...args: string[]): Promise<Run> {
  const ctx = memoryContext({ env });
  const code = await runMain(args, ctx);
  return { code, out: ctx.out.join(""), err: ctx.err.join("") };
}

Deno.test("prepareBenchmark(): without a user policy experiment ids are those of before; a policy enters the id only when it narrows a web", async () => {
  const services = composeServices();
  const idOf = async (
    files: Map<string, string>,
    sources?: { allow?: string[]; block?: string[] },
    policyFile?: string,
  ) => {
    const home = await memoryHome();
    try {
      if (policyFile !== undefined) {
        await Deno.writeTextFile(join(home.dir, "web-policy.edn"), policyFile);
      }
      const p = await prepareBenchmark({
        services,
        bundle: { name: "local", files },
        specs: [candidateKinds.parse("builtin:noop")],
        home,
        env: () => undefined,
        sources,
      });
      return { id: p.plan.id, verifier: p.plan.definition.verifier };
    } finally {
      await home.close();
    }
  };
  // Pinned: what these experiments were before a user's policy existed.
  const LIVE_ID = "d7ffc10c-bcc5-e707-9b5b-f6bf62db30e8";
  const NO_WEB_ID = "0b54ed53-7a8e-ab62-bf22-91608dacfa30";
  const OK = "export function check() { return { checks: { ok: true }, reward: 1 }; }";
  const live = new Map([
    [
      "workflow.edn",
      '{:title "Live" :task "Read the page." :fetched true :allowed-sources ["127.0.0.1" "localhost"] :blocked-sources ["answers.example"]}',
    ],
    ["checker.js", OK],
    ["fixtures/a.md", "a"],
  ]);
  const noWeb = new Map([
    ["workflow.edn", '{:title "No web" :task "Write the answer."}'],
    ["checker.js", OK],
    ["fixtures/a.md", "a"],
  ]);
  assert.deepEqual(await idOf(live), { id: LIVE_ID, verifier: undefined });
  assert.equal((await idOf(noWeb)).id, NO_WEB_ID);
  // A bundle without a web has nothing to narrow; a policy that narrows nothing is none.
  assert.equal((await idOf(noWeb, { block: ["localhost"] })).id, NO_WEB_ID);
  assert.equal((await idOf(live, { allow: ["127.0.0.1", "localhost", "b.example"] })).id, LIVE_ID);
  assert.equal((await idOf(live, undefined, "{}")).id, LIVE_ID);
  const blocked = await idOf(live, { block: ["localhost"] });
  assert.notEqual(blocked.id, LIVE_ID);
  assert.deepEqual(blocked.verifier, {
    webPolicy: { allow: ["127.0.0.1", "localhost"], deny: ["answers.example", "localhost"] },
  });
  // The home's file and the flags compose: the same policy either way is the same experiment.
  const file = '{:blocked-sources ["localhost"]}';
  assert.equal((await idOf(live, undefined, file)).id, blocked.id);
  assert.equal((await idOf(live, { allow: ["127.0.0.1", "localhost"] }, file)).id, blocked.id);
  assert.equal(
    (await idOf(live, { block: ["localhost"] }, '{:allowed-sources ["127.0.0.1" "localhost"]}'))
      .id,
    blocked.id,
  );
});

Deno.test("dvergr benchmark --block-sources and the home's web-policy.edn refuse a host the bundle allows; catalog_benchmark's block_sources is the same experiment", async () => {
  const site = startSite();
  const openai = await startFakeOpenAI(reader(site.port), { apiKey: "ok" });
  const root = await Deno.makeTempDir({ prefix: "dvergr-web-policy-" });
  const env = {
    OPENAI_API_KEY: "ok",
    OPENAI_BASE_URL: openai.url,
    // A live web needs a search key before any cell; nothing here searches.
    BRAVE_API_KEY: "brave-k",
    DVERGR_BRAVE_BASE_URL: `http://127.0.0.1:${site.port}`,
  };
  const bundle = join(root, "local");
  await writeTree(bundle, LIVE_FILES);
  const bench = async (home: string, ...extra: string[]) => {
    const r = await dvergr(
      env,
      "benchmark",
      bundle,
      "--models",
      "gpt-4.1-mini",
      "--home",
      home,
      ...extra,
      "--json",
    );
    assert.equal(r.code, 0, r.out + r.err);
    const j = JSON.parse(r.out);
    return { experiment: j.experiment as string, web: j.scorecard.candidates[0].web };
  };
  try {
    // The bundle's policy alone: both names are read.
    const open = await bench(join(root, "open"));
    assert.deepEqual(site.hosts, ["127.0.0.1", "localhost"]);
    assert.deepEqual(open.web.denials, {});

    // Blocked by the user: refused as the bundle's blocked sources are, the site not asked.
    site.hosts.length = 0;
    const flagged = await bench(join(root, "flags"), "--block-sources", "localhost");
    assert.deepEqual(site.hosts, ["127.0.0.1"]);
    assert.deepEqual(flagged.web.denials, { blocked: 1 });
    assert.equal(flagged.web.pages, 1);
    assert.notEqual(flagged.experiment, open.experiment);

    // The home's file applies to every benchmark in that home: the same experiment.
    const fileHome = join(root, "file");
    await Deno.mkdir(fileHome);
    await Deno.writeTextFile(join(fileHome, "web-policy.edn"), '{:blocked-sources ["localhost"]}');
    site.hosts.length = 0;
    const filed = await bench(fileHome);
    assert.equal(filed.experiment, flagged.experiment);
    assert.deepEqual(site.hosts, ["127.0.0.1"]);
    assert.deepEqual(filed.web.denials, { blocked: 1 });

    // catalog_benchmark with block_sources: the CLI's experiment (kept: nothing runs again).
    const home = await openHome(join(root, "flags"));
    const pool = createCheckerPool({ workers: 1 });
    try {
      const ctx = { ...testOpContext(home, pool), env: (k: string) => env[k as keyof typeof env] };
      const mcp = await callOp(catalogBenchmark, ctx, {
        room: "local",
        name: "local",
        models: ["gpt-4.1-mini"],
        block_sources: ["localhost"],
      }) as Record<string, unknown>;
      assert.equal(mcp.experiment, flagged.experiment);
      assert.equal(mcp.complete, true);
    } finally {
      pool.close();
      await home.close();
    }
    // …and the same arguments on a home of its own plan the same experiment.
    const other = await openHome(join(root, "mcp"));
    try {
      await other.rooms.createRoom("local");
      await syncBundle(other.rooms, "local", "local", LIVE_FILES);
      const prepared = await prepareBenchmark({
        services: composeServices(),
        bundle: { name: "local", files: LIVE_FILES },
        room: "local",
        specs: [candidateKinds.model("gpt-4.1-mini")],
        home: other,
        env: (k) => env[k as keyof typeof env],
        sources: { block: ["localhost"] },
      });
      assert.equal(prepared.plan.id, flagged.experiment);
    } finally {
      await other.close();
    }
  } finally {
    await openai.close();
    await site.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("dvergr benchmark refuses a malformed web-policy.edn naming its file, line and field, before anything is written", async () => {
  const root = await Deno.makeTempDir({ prefix: "dvergr-web-policy-" });
  try {
    const bundle = join(root, "local");
    await writeTree(bundle, NO_WEB_FILES);
    const home = join(root, "home");
    await Deno.mkdir(home);
    const file = join(home, "web-policy.edn");
    await Deno.writeTextFile(
      file,
      '{:allowed-sources ["a.example"]\n :block-sources ["b.example"]}',
    );
    const r = await dvergr({}, "benchmark", bundle, "--candidate", "builtin:noop", "--home", home);
    assert.equal(r.code, 2, r.out + r.err);
    assert.match(
      r.err,
      new RegExp(
        `Cannot read the web policy ${file} line 2: :block-sources: unknown key \\(known: :allowed-sources, :blocked-sources\\)`,
      ),
    );
    assert.match(r.err, /hint: Write \{:allowed-sources \["docs\.example\.com"\]/);
    const h = await openHome(home);
    try {
      assert.deepEqual(await h.rooms.listRooms(), []);
      assert.deepEqual(await h.state.listExperiments(), []);
    } finally {
      await h.close();
    }
    // The flags are read as strictly, on both surfaces.
    const url = await dvergr(
      {},
      "benchmark",
      bundle,
      "--candidate",
      "builtin:noop",
      "--home",
      home,
      "--allow-sources",
      "https://a.example/docs",
    );
    assert.equal(url.code, 2);
    assert.match(url.err, /Cannot use --allow-sources: "https:\/\/a\.example\/docs" is a URL/);
    await assert.rejects(
      () => catalogBenchmark.input.parseAsync({ room: "r", name: "n", block_sources: [""] }),
    );
    const mem = await memoryHome();
    const pool = createCheckerPool({ workers: 1 });
    try {
      await assert.rejects(
        () =>
          callOp(catalogBenchmark, testOpContext(mem, pool), {
            room: "r",
            name: "n",
            candidates: ["builtin:noop"],
            block_sources: ["a.example:80"],
          }),
        (e: DvergrError) =>
          e.code === "USAGE" && /Cannot use block_sources: "a\.example:80"/.test(e.message),
      );
    } finally {
      pool.close();
      await mem.close();
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

const cluster = await startPostgres();
Deno.test.afterAll(async () => await cluster?.stop());

Deno.test({
  name:
    "an experiment enqueued with --block-sources carries its policy to workers, which apply it, not their own home's file",
  ignore: cluster === null,
  async fn() {
    const url = await cluster!.database();
    const root = await Deno.makeTempDir({ prefix: "dvergr-web-policy-" });
    try {
      const bundle = join(root, "local");
      await writeTree(bundle, LIVE_FILES);
      const enqueued = await dvergr(
        {},
        "benchmark",
        bundle,
        "--candidate",
        "builtin:noop",
        "--block-sources",
        "localhost",
        "--home",
        join(root, "here"),
        "--store",
        url,
        "--enqueue",
        "--json",
      );
      assert.equal(enqueued.code, 0, enqueued.out + enqueued.err);
      const { experiment } = JSON.parse(enqueued.out);
      // The worker's machine has a policy of its own, which would make another experiment.
      const there = join(root, "there");
      await Deno.mkdir(there);
      await Deno.writeTextFile(
        join(there, "web-policy.edn"),
        '{:allowed-sources ["127.0.0.1"]}',
      );
      const worker = await dvergr(
        {},
        "worker",
        "--store",
        url,
        "--home",
        there,
        "--experiment",
        experiment,
        "--idle-exit",
        "60",
        "--json",
      );
      assert.equal(worker.code, 0, worker.out + worker.err);
      assert.doesNotMatch(worker.err, /plans as/);
      const shown = await dvergr({}, "show", experiment, "--store", url, "--json");
      assert.equal(shown.code, 0, shown.err);
      const s = JSON.parse(shown.out);
      // The worker planned the enqueued experiment and graded its one cell.
      assert.deepEqual(s.cells.map((c: { outcome: string }) => c.outcome), ["failed"]);
      assert.equal(s.workers[0].records, 1);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});
