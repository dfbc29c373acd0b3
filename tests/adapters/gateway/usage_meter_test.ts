import assert from "node:assert/strict";
import { SseUsageMeter, usageOfJson } from "../../../adapters/gateway/usage_meter.ts";

function events(list: unknown[]): string {
  return list.map((d) => `event: x\ndata: ${JSON.stringify(d)}\n\n`).join("");
}

Deno.test("usageOfJson() counts Anthropic cache reads and writes into input", () => {
  const m = usageOfJson("anthropic-messages", {
    usage: {
      input_tokens: 100,
      cache_read_input_tokens: 30,
      cache_creation_input_tokens: 5,
      output_tokens: 7,
    },
  });
  assert.deepEqual(m, {
    usage: { input: 135, output: 7, cacheRead: 30, cacheWrite: 5 },
    reported: true,
    tools: { webSearch: 0, webFetch: 0 },
  });
});

Deno.test("usageOfJson() reads Chat Completions and Responses usage; none is not reported", () => {
  assert.deepEqual(
    usageOfJson("openai-chat", {
      usage: {
        prompt_tokens: 50,
        completion_tokens: 9,
        prompt_tokens_details: { cached_tokens: 20 },
      },
    }).usage,
    { input: 50, output: 9, cacheRead: 20, cacheWrite: 0 },
  );
  assert.deepEqual(
    usageOfJson("openai-responses", {
      usage: { input_tokens: 70, output_tokens: 3, input_tokens_details: { cached_tokens: 64 } },
    }).usage,
    { input: 70, output: 3, cacheRead: 64, cacheWrite: 0 },
  );
  assert.equal(usageOfJson("openai-chat", { choices: [] }).reported, false);
});

Deno.test("SseUsageMeter reads Anthropic message_start and the last message_delta, split anywhere", () => {
  const text = events([
    {
      type: "message_start",
      message: {
        usage: {
          input_tokens: 10,
          cache_read_input_tokens: 200,
          cache_creation_input_tokens: 3,
          output_tokens: 1,
        },
      },
    },
    { type: "content_block_delta", delta: { type: "text_delta", text: "usage is a word" } },
    { type: "message_delta", usage: { output_tokens: 12 } },
    { type: "message_delta", usage: { output_tokens: 25 } },
    { type: "message_stop" },
  ]);
  // Every split point gives the same figures.
  for (const at of [1, 17, 64, 150, text.length - 3]) {
    const m = new SseUsageMeter("anthropic-messages");
    m.push(text.slice(0, at));
    m.push(text.slice(at));
    assert.deepEqual(m.result(), {
      usage: { input: 213, output: 25, cacheRead: 200, cacheWrite: 3 },
      reported: true,
      final: true,
      tools: { webSearch: 0, webFetch: 0 },
    });
  }
  // Cut before its closing message_delta: usage seen, but not final.
  const cut = new SseUsageMeter("anthropic-messages");
  cut.push(text.slice(0, text.indexOf("message_delta")));
  assert.deepEqual([cut.result().reported, cut.result().final], [true, false]);
});

Deno.test("SseUsageMeter reads response.completed of the Responses API and the usage chunk of Chat", () => {
  const r = new SseUsageMeter("openai-responses");
  r.push(events([
    { type: "response.created", response: { usage: null } },
    {
      type: "response.completed",
      response: {
        usage: {
          input_tokens: 900,
          input_tokens_details: { cached_tokens: 800 },
          output_tokens: 44,
        },
      },
    },
  ]));
  assert.deepEqual(r.result().usage, { input: 900, output: 44, cacheRead: 800, cacheWrite: 0 });
  const c = new SseUsageMeter("openai-chat");
  c.push(
    'data: {"choices":[{"delta":{"content":"hi"}}]}\r\n\r\n' +
      'data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":2}}\r\n\r\ndata: [DONE]\r\n\r\n',
  );
  assert.deepEqual(c.result(), {
    usage: { input: 12, output: 2, cacheRead: 0, cacheWrite: 0 },
    reported: true,
    final: true,
    tools: { webSearch: 0, webFetch: 0 },
  });
  const none = new SseUsageMeter("openai-chat");
  none.push('data: {"choices":[]}\n\n');
  assert.equal(none.result().reported, false);
});
