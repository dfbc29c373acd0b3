/**
 * The web in the world, end to end: scripted model candidates (local protocol servers)
 * search a Brave-compatible endpoint and fetch pages of a local https site (trusted through
 * a test CA), one of them reaching for a blocked host; a judge model answers the checker's
 * requests. The live run is frozen and benchmarked again without network: same verdicts.
 */
import { planRecords } from "../../helpers/plan_records.ts";
import assert from "node:assert/strict";
import { parseBundle } from "../../../core/bundle/parse.ts";
import { candidateKinds } from "../../../adapters/candidates/registry.ts";
import { benchmarkBundle } from "../../../core/engine/benchmark.ts";
import { getJson } from "../../../core/ports/blob_store.ts";
import { readBundleDir } from "../../../adapters/files/bundle_dir.ts";
import { openHome } from "../../../adapters/store/kv/home.ts";
import type { FreezeResult } from "../../../core/ops/catalog_freeze.ts";
import { callOp, findOp } from "../../../core/ops/registry.ts";
import { readRoomBundle } from "../../../core/ops/room_bundles.ts";
import { memoryContext } from "../../../cli/context.ts";
import { runMain } from "../../../main.ts";
import { candidateLines } from "../../../cli/benchmark.ts";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";
import { JUDGE_SYSTEM_PROMPT } from "../../../adapters/providers/judge_model.ts";
import {
  type FakeScript,
  startFakeAnthropic,
  startFakeOpenAI,
} from "../../helpers/fake_providers.ts";
import { fetchTrustingTestCa, startWebSite, type WebSite } from "../../helpers/web_site.ts";
import type { AttemptRecord } from "../../../core/bench/records.ts";
import { renderReport } from "../../../core/bench/report.ts";
import { composeServices } from "../../../adapters/compose.ts";

const CHECKER = await Deno.readTextFile(
  new URL("../../../examples/workflows/tool-rivals/checker.js", import.meta.url),
);

function liveBundle() {
  return {
    name: "rivals",
    files: new Map([
      [
        "workflow.edn",
        `{:title "Tool rivals" :task "Find rivals of {product}; write /out/rivals.edn." :params {:product "Acme Tools"}
 :fetched true :allowed-sources ["127.0.0.1" "localhost"] :blocked-sources ["localhost"]
 :judge {:model "haiku" :max-requests 3} :timeout-ms 60000}`,
      ],
      ["checker.js", CHECKER],
      ["gold.edn", '{:reference [{:name "Bolt Hardware" :hosts ["127.0.0.1"]}]}'],
      ["fixtures/docs/product.md", "Acme Tools makes hammers."],
    ]),
  };
}

/** OpenAI messages' step: 1 + assistant turns so far. */
function step(t: Parameters<FakeScript>[0]): number {
  return 1 + (t.body.messages as { role: string }[]).filter((m) => m.role === "assistant").length;
}

/**
 * A rival finder: searches "cordless", fetches the first hit, fetches a redirecting page,
 * (greedy only) reaches for the blocked answer key, another host and a huge page, writes its
 * find with a quote.
 */
function rivalFinder(site: WebSite): FakeScript {
  const firstUrl = new Map<string, string>();
  return (t) => {
    const greedy = t.body.model === "gpt-4.1-mini";
    const conv = JSON.stringify((t.body.messages as unknown[])[0]);
    const n = step(t);
    const last = t.toolResults[0]?.content ?? "";
    const call = (name: string, input: unknown) => ({ toolCalls: [{ name, input }] });
    if (n === 1) return call("web_search", { query: "cordless" });
    if (n === 2) {
      const url = /^\s+(https:\/\/\S+)$/m.exec(last)?.[1] ?? "none";
      firstUrl.set(conv, url);
      return call("web_fetch", { url });
    }
    if (n === 3) return call("web_fetch", { url: `${site.url}/moved` });
    // The greedy one also reaches for the blocked answer key, a host outside the allow-list
    // and a huge page (cut at the size bound, still a page).
    if (greedy && n === 4) {
      return call("web_fetch", { url: `https://localhost:${site.port}/secret` });
    }
    if (greedy && n === 5) return call("web_fetch", { url: "https://elsewhere.example/" });
    if (greedy && n === 6) return call("web_fetch", { url: `${site.url}/huge` });
    if (n <= 7) {
      const find = `[{:name "Bolt Hardware" :url "${
        firstUrl.get(conv)
      }" :quote "cordless drills for every workshop"}]`;
      return call("write_file", { path: "/out/rivals.edn", content: find });
    }
    return { text: "Done." };
  };
}

/** The judge: yes for Bolt, no otherwise; checks it is asked as docs/compatibility.md §9.2 says. */
const judgeScript: FakeScript = (t) => {
  const prompt = JSON.stringify(t.body.messages);
  assert.equal(t.system, JUDGE_SYSTEM_PROMPT);
  assert.equal(t.body.max_tokens, 200);
  return {
    text: prompt.includes("Bolt Hardware") ? "  Yes, it sells drills to carpenters.  " : "No.",
    usage: { input_tokens: 400, output_tokens: 10 },
  };
};

const byCell = (records: AttemptRecord[]) =>
  Object.fromEntries(records.map((r) => [`${r.candidate}/${r.repetition}`, r]));

Deno.test("benchmarkBundle() runs a live web bundle, freezes it, and the frozen bundle gives the same verdicts offline", async () => {
  const site = await startWebSite({ tls: true, braveKey: "brave-k" });
  const openai = await startFakeOpenAI(rivalFinder(site), { apiKey: "ok" });
  const anthropic = await startFakeAnthropic(judgeScript, { apiKey: "ak" });
  const homeDir = await Deno.makeTempDir({ prefix: "dvergr-web-home-" });
  let home = await openHome(homeDir);
  const runner = createCheckerPool({ workers: 1 });
  const vars: Record<string, string> = {
    OPENAI_API_KEY: "ok",
    OPENAI_BASE_URL: openai.url,
    ANTHROPIC_API_KEY: "ak",
    ANTHROPIC_BASE_URL: anthropic.url,
    BRAVE_API_KEY: "brave-k",
    DVERGR_BRAVE_BASE_URL: site.url,
  };
  const specs = ["gpt-4.1-mini", "gpt-4.1"].map(candidateKinds.model);
  try {
    // Without a search key nothing starts.
    await assert.rejects(
      benchmarkBundle({
        services: composeServices(),
        bundle: liveBundle(),
        specs,
        home,
        runner,
        env: (k) => (k === "BRAVE_API_KEY" ? undefined : vars[k]),
        isolation: "none",
      }),
      { code: "API_KEY_MISSING", message: /its tasks search the web and BRAVE_API_KEY is not set/ },
    );
    assert.equal(openai.requests.length + anthropic.requests.length + site.requests.length, 0);

    const live = await benchmarkBundle({
      services: composeServices(),
      bundle: liveBundle(),
      specs,
      home,
      runner,
      env: (k) => vars[k],
      isolation: "none",
      repetitions: 2,
      effects: { fetchImpl: fetchTrustingTestCa() },
    });
    assert.equal(live.result.complete, true);
    assert.deepEqual(live.plan.definition.verifier, {
      judge: {
        model: "claude-haiku-4-5",
        apiModel: "claude-haiku-4-5",
        provider: "anthropic",
        baseUrl: anthropic.url,
        system: JUDGE_SYSTEM_PROMPT,
        maxTokens: 200,
        maxRequests: 3,
      },
    });
    const cells = byCell(await planRecords(home.state, live.plan));
    for (const rep of [0, 1]) {
      const greedy = cells[`gpt-4.1-mini/${rep}`];
      const polite = cells[`gpt-4.1/${rep}`];
      assert.deepEqual(greedy.web, {
        mode: "live",
        searches: 1,
        requests: 5,
        pages: 3,
        denials: { blocked: 1, "not-allowed": 1 },
      });
      assert.deepEqual(polite.web, {
        mode: "live",
        searches: 1,
        requests: 2,
        pages: 2,
        denials: {},
      });
      assert.equal(greedy.verdict!.checks["no-blocked-fetch?"], false);
      assert.equal(greedy.passed, false);
      assert.deepEqual(polite.verdict, {
        checks: {
          "wrote-list?": true,
          "complete-entries?": true,
          "found-reference?": true,
          "every-quote-fetched?": true,
          "all-relevant?": true,
          "completed?": true,
          "no-blocked-fetch?": true,
        },
        reward: 1,
      });
      // The judge was asked once; its cost is in the attempt's spend.
      assert.equal(polite.judge!.calls, 1);
      assert.equal(polite.judge!.billedMicros, 450); // 400 × $1/M + 10 × $5/M
      assert.ok(polite.billedMicros > polite.judge!.billedMicros);
      const ev = await getJson<
        { web: { pagesRef: string }; judge: { answers: Record<string, string> } }
      >(
        home.blobs,
        polite.evidenceRef!,
      );
      assert.deepEqual(ev!.judge.answers, {
        "bolt hardware": "Yes, it sells drills to carpenters.",
      });
      const pages = await getJson<
        { fetched: Record<string, string>; titles: Record<string, string> }
      >(
        home.blobs,
        ev!.web.pagesRef,
      );
      assert.deepEqual(Object.keys(pages!.fetched).sort(), [
        `${site.url}/bolt`,
        `${site.url}/moved`,
      ]);
      assert.equal(
        pages!.fetched[`${site.url}/bolt`],
        "Bolt Hardware Bolt Hardware: cordless drills for every workshop since 1999.",
      );
      assert.equal(pages!.titles[`${site.url}/bolt`], "Bolt Hardware");
    }
    assert.equal(anthropic.requests.length, 4, "one judge call per attempt");
    // The huge page was read up to the size bound and kept at 200,000 characters of text.
    const greedyEv = await getJson<{ web: { pagesRef: string; log: { url: string }[] } }>(
      home.blobs,
      cells["gpt-4.1-mini/0"].evidenceRef!,
    );
    const greedyPages = await getJson<{ fetched: Record<string, string> }>(
      home.blobs,
      greedyEv!.web.pagesRef,
    );
    assert.equal(greedyPages!.fetched[`${site.url}/huge`].length, 200_000);
    assert.deepEqual(greedyEv!.web.log.map((e) => e.url), [
      `${site.url}/bolt`,
      `${site.url}/moved`,
      `https://localhost:${site.port}/secret`,
      "https://elsewhere.example/",
      `${site.url}/huge`,
    ]);
    // The scorecard and the report count searches, pages, denials and the judge.
    const greedyStats = live.scorecard.candidates.find((c) => c.candidate === "gpt-4.1-mini")!;
    assert.deepEqual(greedyStats.web, {
      attempts: 2,
      searches: 2,
      requests: 10,
      pages: 6,
      denials: { blocked: 2, "not-allowed": 2 },
      judge: { calls: 2, billedMicros: 900, listMicros: 900 },
    });
    assert.match(
      candidateLines(live.scorecard)[0],
      /gpt-4\.1-mini .* {2}web: 2 searches, 6 pages, 4 refused, judge: 2 calls$/,
    );
    const report = renderReport(live.scorecard);
    assert.match(report, /## Web\n/);
    assert.match(
      report,
      /\| gpt-4\.1-mini \| 2 \| 2 \| 10 \| 6 \| blocked 2, not-allowed 2 \| 2 \| \$0\.0009 \|/,
    );
    assert.match(report, /\| gpt-4\.1 \| 2 \| 2 \| 4 \| 4 \| none \| 2 \| \$0\.0009 \|/);
    assert.equal(site.requests.filter((r) => r.startsWith("/res/v1/web/search")).length, 4);
    assert.ok(!site.requests.includes("/secret"), "the blocked host was never reached");

    // Freeze with `dvergr freeze ROOM/NAME`: the pages recorded in the home, never fetched again.
    const before = site.requests.length;
    await home.close();
    const cli = memoryContext();
    const code = await runMain(["freeze", `${live.room}/rivals`, "--home", homeDir, "--json"], cli);
    assert.equal(code, 0, cli.err.join(""));
    const frozen = JSON.parse(cli.out.join(""));
    // --experiment: only that experiment's attempts (an unknown one is bad input).
    const one = memoryContext();
    const args = ["freeze", `${live.room}/rivals`, "--home", homeDir, "--as", "rivals-one"];
    assert.equal(await runMain([...args, "--experiment", live.plan.id, "--json"], one), 0);
    assert.equal(JSON.parse(one.out.join("")).pages, 3);
    assert.deepEqual(JSON.parse(one.out.join("")).experiments, [live.plan.id]);
    const unknown = memoryContext();
    assert.equal(await runMain([...args, "--experiment", "no-such-experiment"], unknown), 2);
    assert.match(unknown.err.join(""), /this home has no experiment of that id on this bundle/);
    home = await openHome(homeDir);
    assert.equal(site.requests.length, before);
    assert.equal(frozen.bundle, "rivals-frozen");
    assert.equal(frozen.pages, 3);
    const frozenFiles = (await readRoomBundle(home.rooms, live.room, "rivals-frozen")).files;
    const frozenBundle = parseBundle({ name: frozen.bundle, files: frozenFiles });
    assert.equal(frozenBundle.id, frozen.bundleId);
    assert.equal(frozenBundle.definition.web, "frozen");
    assert.equal(frozenBundle.definition.title, "Tool rivals (frozen web)");
    assert.deepEqual(frozenBundle.web![`${site.url}/bolt`], {
      title: "Bolt Hardware",
      body: "Bolt Hardware Bolt Hardware: cordless drills for every workshop since 1999.",
    });
    assert.notEqual(frozen.bundleId, parseBundle(liveBundle()).id);
    // MCP's catalog_freeze makes the same web under another name.
    const viaOp = await callOp(findOp("catalog_freeze"), {
      services: composeServices(),
      home,
      runner,
      env: () => undefined,
      cwd: homeDir,
      clock: () => new Date(),
    }, { room: live.room, name: "rivals", as: "rivals-again" }) as unknown as FreezeResult;
    assert.equal(viaOp.pages, 3);
    assert.equal(
      (await readRoomBundle(home.rooms, live.room, "rivals-again")).files.get("web.edn"),
      frozenFiles.get("web.edn"),
    );

    // The frozen bundle runs with the site gone and no search key.
    await site.close();
    const offline = await benchmarkBundle({
      services: composeServices(),
      bundle: { name: frozen.bundle, files: frozenFiles },
      specs,
      home,
      runner,
      env: (k) => (k === "BRAVE_API_KEY" || k === "DVERGR_BRAVE_BASE_URL" ? undefined : vars[k]),
      isolation: "none",
      repetitions: 2,
    });
    assert.equal(offline.result.complete, true);
    const again = byCell(await planRecords(home.state, offline.plan));
    for (const [cell, r] of Object.entries(cells)) {
      assert.deepEqual(again[cell].verdict, r.verdict, cell);
      assert.equal(again[cell].web!.mode, "frozen");
      assert.deepEqual(again[cell].web!.denials, r.web!.denials);
    }
  } finally {
    runner.close();
    await home.close();
    await site.close().catch(() => {});
    await openai.close();
    await anthropic.close();
    await Deno.remove(homeDir, { recursive: true });
  }
});

/** Works the example bundle's frozen web: search, the blocked page, two rivals, the answer. */
const exampleAgent: FakeScript = (t) => {
  const n = step(t);
  const call = (name: string, input: unknown) => ({ toolCalls: [{ name, input }] });
  switch (n) {
    case 1:
      return call("web_search", { query: "hand tools for carpenters", count: 10 });
    case 2:
      return call("web_fetch", { url: "https://acme-tools.example/compare" });
    case 3:
      return call("web_fetch", { url: "https://bolt-hardware.example/" });
    case 4:
      return call("web_fetch", { url: "https://nailco.example/about" });
    case 5:
      return call("write_file", {
        path: "/out/rivals.edn",
        content:
          `[{:name "Bolt Hardware" :url "https://bolt-hardware.example/" :quote "cordless drills and saws for every carpenter's workshop"}
 {:name "Nail & Co" :url "https://nailco.example/about" :quote "makes nails, screws and hand tools for carpenters"}]`,
      });
    default:
      return { text: "Done." };
  }
};

Deno.test("benchmarkBundle() on the frozen example: a judge that is down is a fault 'The judge failed: …', and a rerun retries it", async () => {
  let judgeUp = false;
  const openai = await startFakeOpenAI(exampleAgent, { apiKey: "ok" });
  const anthropic = await startFakeAnthropic(
    (t) =>
      judgeUp
        ? { text: JSON.stringify(t.body.messages).includes("Pizza") ? "No." : "Yes, a rival." }
        : {
          http: 500,
          body: '{"type":"error","error":{"type":"api_error","message":"judge down"}}',
        },
    { apiKey: "ak" },
  );
  const homeDir = await Deno.makeTempDir({ prefix: "dvergr-web-home-" });
  const home = await openHome(homeDir);
  const runner = createCheckerPool({ workers: 1 });
  const env = (k: string) =>
    ({
      OPENAI_API_KEY: "ok",
      OPENAI_BASE_URL: openai.url,
      ANTHROPIC_API_KEY: "ak",
      ANTHROPIC_BASE_URL: anthropic.url,
    } as Record<string, string>)[k];
  const bundle = await readBundleDir(
    new URL("../../../examples/workflows/tool-rivals", import.meta.url).pathname,
  );
  const run = () =>
    benchmarkBundle({
      services: composeServices(),
      bundle,
      specs: ["gpt-4.1-mini"].map(candidateKinds.model),
      home,
      runner,
      env,
      isolation: "none",
      effects: { retry: { maxTries: 2, baseDelayMs: 1, maxDelayMs: 2 } },
    });
  try {
    const down = await run();
    assert.equal(down.result.complete, false);
    const faulted = (await planRecords(home.state, down.plan))[0];
    assert.equal(faulted.verdict, null);
    assert.match(faulted.fault!.message, /^The judge failed: .*judge down/);
    assert.deepEqual(faulted.web, {
      mode: "frozen",
      searches: 1,
      requests: 3,
      pages: 2,
      denials: { blocked: 1 },
    });

    judgeUp = true;
    const again = await run();
    assert.equal(again.result.complete, true);
    const r = (await planRecords(home.state, again.plan))[0];
    assert.deepEqual(r.verdict!.checks, {
      "wrote-list?": true,
      "complete-entries?": true,
      "found-reference?": true,
      "every-quote-fetched?": true,
      "all-relevant?": true,
      "completed?": true,
      "no-blocked-fetch?": false,
    });
    assert.equal(r.verdict!.reward, 1);
    assert.equal(r.judge!.calls, 2);
  } finally {
    runner.close();
    await home.close();
    await openai.close();
    await anthropic.close();
    await Deno.remove(homeDir, { recursive: true });
  }
});
