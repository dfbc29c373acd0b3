import assert from "node:assert/strict";
import {
  anthropicBody,
  parseAnthropicResponse,
} from "../../../../core/codecs/providers/anthropic.ts";
import type { ChatMessage } from "../../../../core/codecs/providers/conversation.ts";

const conversation: ChatMessage[] = [
  { role: "user", text: "Sum /docs/a.txt" },
  {
    role: "assistant",
    text: "Reading.",
    toolCalls: [{
      id: "toolu_1",
      name: "read_file",
      args: { path: "/docs/a.txt" },
      argsProblem: null,
      rawArguments: "",
    }],
  },
  {
    role: "tool",
    results: [{ callId: "toolu_1", name: "read_file", content: "no such file", isError: true }],
  },
];

Deno.test("anthropicBody() sends tool_use and tool_result blocks, with a cache breakpoint on the newest block", () => {
  const body = anthropicBody("claude-haiku-4-5", {
    system: "Be brief.",
    messages: conversation,
    tools: [{ name: "read_file", description: "Read", parameters: { type: "object" } }],
    maxTokens: 1000,
  });
  assert.deepEqual(body, {
    model: "claude-haiku-4-5",
    max_tokens: 1000,
    system: "Be brief.",
    messages: [
      { role: "user", content: [{ type: "text", text: "Sum /docs/a.txt" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Reading." },
          { type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "/docs/a.txt" } },
        ],
      },
      {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: "no such file",
          is_error: true,
          cache_control: { type: "ephemeral" },
        }],
      },
    ],
    tools: [{ name: "read_file", description: "Read", input_schema: { type: "object" } }],
  });
});

Deno.test("parseAnthropicResponse() reads text, tool calls and all four usage counts", () => {
  const turn = parseAnthropicResponse({
    type: "message",
    content: [
      { type: "text", text: "Writing." },
      { type: "tool_use", id: "t1", name: "write_file", input: { path: "/out/a", content: "x" } },
      { type: "tool_use", id: "t2", name: "list_files", input: "oops" },
    ],
    stop_reason: "tool_use",
    usage: {
      input_tokens: 1200,
      output_tokens: 800,
      cache_read_input_tokens: 3000,
      cache_creation_input_tokens: 500,
    },
  });
  assert.equal(turn.text, "Writing.");
  assert.equal(turn.stopReason, "tool_use");
  // input_tokens leaves the cached parts out; Usage.input counts them in
  assert.deepEqual(turn.usage, { input: 4700, output: 800, cacheRead: 3000, cacheWrite: 500 });
  assert.deepEqual(turn.toolCalls[0].args, { path: "/out/a", content: "x" });
  assert.equal(turn.toolCalls[1].args, null);
  assert.match(turn.toolCalls[1].argsProblem!, /must be a JSON object, got "oops"/);
});

Deno.test("parseAnthropicResponse() treats absent or null cache counts as zero", () => {
  const turn = parseAnthropicResponse({
    content: [{ type: "text", text: "ok" }],
    stop_reason: "end_turn",
    usage: { input_tokens: 10, output_tokens: 2, cache_read_input_tokens: null },
  });
  assert.deepEqual(turn.usage, { input: 10, output: 2, cacheRead: 0, cacheWrite: 0 });
});

Deno.test("parseAnthropicResponse() refuses a body without content or usage", () => {
  assert.throws(
    () => parseAnthropicResponse({ usage: { input_tokens: 1, output_tokens: 1 } }),
    /no content array/,
  );
  assert.throws(() => parseAnthropicResponse({ content: [] }), /no usage/);
  assert.throws(
    () => parseAnthropicResponse({ content: [], usage: { input_tokens: "7", output_tokens: 1 } }),
    /usage.input_tokens is "7"/,
  );
  assert.throws(
    () =>
      parseAnthropicResponse({
        content: [{ type: "tool_use", input: {} }],
        usage: { input_tokens: 1, output_tokens: 1 },
      }),
    /lacks its id or name/,
  );
  assert.throws(() => parseAnthropicResponse("hello"), /not a JSON object/);
});
