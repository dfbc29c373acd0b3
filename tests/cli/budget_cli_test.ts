/**
 * `--budget-dollars` holds for a command candidate that fires 30 model requests at once
 * through its world gateway, each asking for 64,000 output tokens ($0.96 at $15/M) of a
 * provider on 127.0.0.1 that bills every request all the output it was allowed.
 */
import assert from "node:assert/strict";
import { dvergrWithPath as dvergr } from "../helpers/cli.ts";
import { wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";

Deno.test("dvergr benchmark --budget-dollars 0.10 holds against 30 model requests of one attempt in parallel", async () => {
  let received = 0;
  const provider = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const body = await req.json();
      received++;
      return Response.json({
        type: "message",
        content: [{ type: "text", text: "w1" }],
        usage: { input_tokens: 20, output_tokens: body.max_tokens },
      });
    },
  );
  const dir = await writeBundleTo(wordDataset(1));
  const home = await Deno.makeTempDir();
  await Deno.writeTextFile(
    `${home}/models.edn`,
    `{:models {"greedy" {:provider :anthropic :base-url "http://127.0.0.1:${provider.addr.port}"
      :prices {:input 3 :output 15}}}}`,
  );
  const ask = `curl -s -o /dev/null "$ANTHROPIC_BASE_URL/v1/messages" ` +
    `-H 'content-type: application/json' ` +
    `-d '{"model":"greedy","max_tokens":64000,"messages":[{"role":"user","content":"w?"}]}'`;
  try {
    const r = await dvergr([
      "benchmark",
      dir,
      "--candidate",
      `burst=cmd:for i in $(seq 30); do ${ask} & done; wait; cat docs/q.txt > out/answer.txt`,
      "--budget-dollars",
      "0.10",
      "--home",
      home,
      "--json",
    ], { ANTHROPIC_API_KEY: "sk-test-real-key" });
    assert.equal(r.code, 0, r.err);
    const card = JSON.parse(r.out).scorecard.candidates[0];
    // deno-lint-ignore no-console -- the measured figures, for the record
    console.error(`billed $${card.cost.billedMicros / 1e6}, ${received} of 30 forwarded`);
    assert(received >= 1 && received < 30, `${received} requests reached the provider`);
    assert(card.cost.billedMicros > 0 && card.cost.billedMicros <= 100_000, r.out);
    assert.equal(card.outcomes.budget, 1);
  } finally {
    await provider.shutdown();
    await Deno.remove(home, { recursive: true });
    await Deno.remove(dir.slice(0, dir.lastIndexOf("/")), { recursive: true });
  }
});
