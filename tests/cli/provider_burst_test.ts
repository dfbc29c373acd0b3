/**
 * A refusal of the model provider that the candidate's own burst caused is a failure, never a
 * fault: a candidate that, when it does not know the answer, fires 70 model requests (over its
 * fair share of 60 a minute) at a provider on 127.0.0.1 that answers 429 after 10 requests of
 * an attempt fails those attempts with the cause named, nothing is retried in the run or the
 * rerun, and it ranks with its honest twin. Before, the gateway made any attempt whose last
 * model request was answered 429 a fault, run again on every rerun. Wall time ~15 s.
 */
import assert from "node:assert/strict";
import { benchmarkTwins } from "../helpers/twins.ts";

/** 70 requests at once, each naming the attempt's cell in its message. */
const BURST = `for i in $(seq 70); do ` +
  `curl -s -o /dev/null "$ANTHROPIC_BASE_URL/v1/messages" -H 'content-type: application/json' ` +
  `-d "{\\"model\\":\\"limited\\",\\"max_tokens\\":5,\\"messages\\":[{\\"role\\":\\"user\\",` +
  `\\"content\\":\\"$DVERGR_CASE-$DVERGR_REPETITION\\"}]}" & done; wait; ` +
  `echo no > out/answer.txt`;

Deno.test("dvergr benchmark fails an attempt whose own burst the provider refused with 429, and ranks it with its honest twin", async () => {
  const perCell = new Map<string, number>();
  const provider = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const body = await req.json();
      const cell = String(body.messages?.[0]?.content);
      const n = (perCell.get(cell) ?? 0) + 1;
      perCell.set(cell, n);
      if (n > 10) {
        return Response.json(
          { type: "error", error: { type: "rate_limit_error", message: "rate limited" } },
          { status: 429, headers: { "retry-after": "1" } },
        );
      }
      return Response.json({
        type: "message",
        content: [{ type: "text", text: "?" }],
        usage: { input_tokens: 10, output_tokens: 1 },
      });
    },
  );
  try {
    await benchmarkTwins("burster", BURST, {
      repetitions: 2,
      runs: 2,
      home: (home) =>
        Deno.writeTextFile(
          `${home}/models.edn`,
          `{:models {"limited" {:provider :anthropic :base-url ` +
            `"http://127.0.0.1:${provider.addr.port}" :prices {:input 1 :output 5}}}}`,
        ),
      env: { ANTHROPIC_API_KEY: "sk-test-real-key" },
      each: ({ cards, failureCauses }) => {
        assert.equal(cards.burster.outcomes.crashed, 3, JSON.stringify(failureCauses.burster));
        assert.match(
          failureCauses.burster[0].cause,
          /^Over its share of the model provider: http:\/\/127\.0\.0\.1:\d+ answered 429; the attempt had sent \d+ requests/,
        );
      },
    });
    // The bursts reached the provider (three cells, once: the rerun kept every cell).
    assert.equal(perCell.size, 3);
  } finally {
    await provider.shutdown();
  }
});
