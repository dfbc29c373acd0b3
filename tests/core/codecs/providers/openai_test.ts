import assert from "node:assert/strict";
import { openaiBody, parseOpenAIResponse } from "../../../../core/codecs/providers/openai.ts";
import type { ChatMessage } from "../../../../core/codecs/providers/conversation.ts";

const conversation: ChatMessage[] = [
  { role: "user", text: "Sum it" },
  {
    role: "assistant",
    text: "",
    toolCalls: [
      {
        id: "call_1",
        name: "list_files",
        args: { dir: "/" },
        argsProblem: null,
        rawArguments: '{"dir":"/"}',
      },
      { id: "call_2", name: "read_file", args: null, argsProblem: "bad", rawArguments: "{oops" },
    ],
  },
  {
    role: "tool",
    results: [
      { callId: "call_1", name: "list_files", content: "/docs/a.txt", isError: false },
      { callId: "call_2", name: "read_file", content: "Error: bad", isError: true },
    ],
  },
];

Deno.test("openaiBody() sends the system message, tool_calls with their JSON text, and one tool message per result", () => {
  const body = openaiBody("gpt-4.1", {
    system: "Be brief.",
    messages: conversation,
    tools: [{ name: "list_files", description: "List", parameters: { type: "object" } }],
    maxTokens: 500,
  }, false);
  assert.deepEqual(body, {
    model: "gpt-4.1",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Sum it" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "list_files", arguments: '{"dir":"/"}' },
          },
          { id: "call_2", type: "function", function: { name: "read_file", arguments: "{oops" } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "/docs/a.txt" },
      { role: "tool", tool_call_id: "call_2", content: "Error: bad" },
    ],
    tools: [{
      type: "function",
      function: { name: "list_files", description: "List", parameters: { type: "object" } },
    }],
    max_completion_tokens: 500,
  });
  const compat = openaiBody("local", { system: "s", messages: [], tools: [], maxTokens: 7 }, true);
  assert.equal(compat.max_tokens, 7);
  assert.equal(compat.max_completion_tokens, undefined);
  assert.equal(compat.tools, undefined);
});

Deno.test("parseOpenAIResponse() counts cached tokens as the cached part of the prompt tokens", () => {
  const turn = parseOpenAIResponse({
    choices: [{ message: { role: "assistant", content: "done" }, finish_reason: "stop" }],
    usage: {
      prompt_tokens: 5000,
      completion_tokens: 300,
      prompt_tokens_details: { cached_tokens: 4000 },
      completion_tokens_details: { reasoning_tokens: 120 },
    },
  }, false);
  assert.equal(turn.text, "done");
  assert.deepEqual(turn.usage, { input: 5000, output: 300, cacheRead: 4000, cacheWrite: 0 });
  assert.equal(turn.reasoningTokens, 120);
  assert.equal(turn.stopReason, "stop");
});

Deno.test("parseOpenAIResponse() turns broken argument JSON into a problem for the model, not an error", () => {
  const turn = parseOpenAIResponse({
    choices: [{
      message: {
        content: null,
        tool_calls: [
          {
            id: "c1",
            type: "function",
            function: { name: "write_file", arguments: '{"path": "/out/a"' },
          },
          { id: "c2", type: "function", function: { name: "list_files", arguments: "[1]" } },
          { type: "function", function: { name: "list_files", arguments: { dir: "/" } } },
        ],
      },
      finish_reason: "tool_calls",
    }],
    usage: { prompt_tokens: 1, completion_tokens: 1 },
  }, false);
  assert.equal(turn.toolCalls[0].args, null);
  assert.match(turn.toolCalls[0].argsProblem!, /not valid JSON/);
  assert.equal(turn.toolCalls[0].rawArguments, '{"path": "/out/a"');
  assert.match(turn.toolCalls[1].argsProblem!, /must be a JSON object/);
  assert.deepEqual(turn.toolCalls[2].args, { dir: "/" });
  assert.equal(turn.toolCalls[2].id, "call_2");
});

Deno.test("parseOpenAIResponse() requires usage from OpenAI but not from a compatible server", () => {
  const body = { choices: [{ message: { content: "hi" }, finish_reason: "stop" }] };
  assert.throws(() => parseOpenAIResponse(body, false), /no usage/);
  const turn = parseOpenAIResponse(body, true);
  assert.equal(turn.usageReported, false);
  assert.deepEqual(turn.usage, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
});

Deno.test("parseOpenAIResponse() refuses bodies without choices or with impossible usage", () => {
  assert.throws(() => parseOpenAIResponse({ usage: {} }, false), /no choices\[0\]/);
  assert.throws(() => parseOpenAIResponse({ choices: [{}] }, false), /has no message/);
  assert.throws(
    () =>
      parseOpenAIResponse({
        choices: [{ message: { content: "" } }],
        usage: {
          prompt_tokens: 5,
          completion_tokens: 1,
          prompt_tokens_details: { cached_tokens: 9 },
        },
      }, false),
    /more cached tokens \(9\) than prompt tokens \(5\)/,
  );
  assert.throws(
    () =>
      parseOpenAIResponse({
        choices: [{ message: { content: 5 } }],
        usage: { prompt_tokens: 1, completion_tokens: 1 },
      }, false),
    /neither text nor null/,
  );
});
