/**
 * A request for a model that is not the attempt's is a failure, never a fault: a candidate
 * that asks for `local` (an OpenAI-compatible server on the host's loopback) whenever it
 * does not know the answer is refused by the gateway before anything is sent, and the
 * attempt fails with that cause; nothing is retried, so it ranks with its honest twin.
 * Before, the gateway forwarded the request to 127.0.0.1:8080, the refused connection made
 * the cell a fault, and the fault ran again.
 */
import assert from "node:assert/strict";
import { benchmarkTwins } from "../helpers/twins.ts";

const ASK_LOCAL = `curl -s -o /dev/null "$OPENAI_BASE_URL/chat/completions" ` +
  `-H 'content-type: application/json' ` +
  `-d '{"model":"local","max_tokens":5,"messages":[{"role":"user","content":"w?"}]}'`;

Deno.test("dvergr benchmark fails an attempt that asks for a model not its own, and ranks it with its honest twin", async () => {
  // The run and a rerun of the same command: nothing is left to retry.
  await benchmarkTwins("asker", ASK_LOCAL, {
    repetitions: 2,
    runs: 2,
    each: ({ cards, failureCauses }) => {
      assert.equal(cards.asker.outcomes.crashed, 3);
      assert.match(
        failureCauses.asker[0].cause,
        /^Refused a model request: model "local" is not one of this attempt's models/,
      );
    },
  });
});
