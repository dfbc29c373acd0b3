import assert from "node:assert/strict";
import {
  backoffDelay,
  endpoint,
  errorText,
  parseRetryAfter,
  postJson,
} from "../../../adapters/providers/http.ts";

const FAST = { maxTries: 4, baseDelayMs: 5, maxDelayMs: 20 };

/** A local server answering with the given responses in turn (the last one repeats). */
function server(responses: (() => Response)[]) {
  const times: number[] = [];
  const s = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    await req.text();
    times.push(Date.now());
    return responses[Math.min(times.length - 1, responses.length - 1)]();
  });
  return { url: `http://127.0.0.1:${s.addr.port}/v1/x`, times, close: () => s.shutdown() };
}

function call(url: string, extra: Partial<Parameters<typeof postJson>[0]> = {}) {
  return postJson({
    url,
    headers: {},
    body: { hello: "world" },
    signal: new AbortController().signal,
    deadline: Date.now() + 20_000,
    label: "test",
    retry: FAST,
    ...extra,
  });
}

Deno.test("parseRetryAfter() reads seconds, milliseconds and HTTP dates", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.equal(parseRetryAfter(new Headers({ "retry-after": "2" }), now), 2000);
  assert.equal(parseRetryAfter(new Headers({ "retry-after": "0.5" }), now), 500);
  assert.equal(
    parseRetryAfter(new Headers({ "retry-after-ms": "250", "retry-after": "9" }), now),
    250,
  );
  assert.equal(
    parseRetryAfter(new Headers({ "retry-after": "Thu, 01 Jan 2026 00:00:03 GMT" }), now),
    3000,
  );
  assert.equal(
    parseRetryAfter(new Headers({ "retry-after": "Wed, 31 Dec 2025 23:59:00 GMT" }), now),
    0,
  );
  assert.equal(parseRetryAfter(new Headers({ "retry-after": "soon" }), now), null);
  assert.equal(parseRetryAfter(new Headers(), now), null);
});

Deno.test("backoffDelay() doubles per try between half and all of the step, capped", () => {
  const p = { maxTries: 6, baseDelayMs: 1000, maxDelayMs: 30_000 };
  assert.equal(backoffDelay(1, p, () => 0), 500);
  assert.equal(backoffDelay(1, p, () => 0.999999), 1000);
  assert.equal(backoffDelay(3, p, () => 0), 2000);
  assert.equal(backoffDelay(10, p, () => 0.999999), 30_000);
});

Deno.test("endpoint() adds the API path once, whether or not the base ends in /v1", () => {
  assert.equal(
    endpoint("https://api.openai.com", "/v1/chat/completions"),
    "https://api.openai.com/v1/chat/completions",
  );
  assert.equal(
    endpoint("http://127.0.0.1:8080/v1/", "/v1/chat/completions"),
    "http://127.0.0.1:8080/v1/chat/completions",
  );
});

Deno.test("errorText() takes the provider's message from an error body", () => {
  assert.equal(
    errorText('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'),
    "Overloaded",
  );
  assert.equal(errorText("<html>bad gateway</html>"), "<html>bad gateway</html>");
  assert.equal(errorText(""), "(empty body)");
});

Deno.test("postJson() waits for retry-after on a 429, then returns the answer", async () => {
  const s = server([
    () =>
      new Response('{"error":{"message":"rate limited"}}', {
        status: 429,
        headers: { "retry-after": "1" },
      }),
    () => Response.json({ ok: 1 }),
  ]);
  try {
    const r = await call(s.url);
    assert.deepEqual(r, { ok: true, json: { ok: 1 }, status: 200, tries: 2 });
    assert.ok(
      s.times[1] - s.times[0] >= 990,
      `waited ${s.times[1] - s.times[0]} ms for a retry-after of 1 s`,
    );
  } finally {
    await s.close();
  }
});

Deno.test("postJson() gives up on repeated 5xx after the bounded number of tries", async () => {
  const s = server([() => new Response('{"error":{"message":"boom"}}', { status: 500 })]);
  try {
    const r = await call(s.url);
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.equal(r.failure, "http");
    assert.equal(r.tries, 4);
    assert.equal(r.status, 500);
    assert.match(r.message, /^test: gave up after 4 tries; last: HTTP 500: boom$/);
    assert.equal(s.times.length, 4);
  } finally {
    await s.close();
  }
});

Deno.test("postJson() does not retry a 400 and quotes the provider's message", async () => {
  const s = server([
    () => new Response('{"error":{"message":"max_tokens: too large"}}', { status: 400 }),
  ]);
  try {
    const r = await call(s.url);
    assert.ok(!r.ok);
    assert.equal(r.failure, "http");
    assert.equal(r.tries, 1);
    assert.equal(r.message, "test: HTTP 400: max_tokens: too large");
  } finally {
    await s.close();
  }
});

Deno.test("postJson() reports a 200 whose body is not JSON as malformed, without retrying", async () => {
  const s = server([() => new Response("{not json", { status: 200 })]);
  try {
    const r = await call(s.url);
    assert.ok(!r.ok);
    assert.equal(r.failure, "malformed");
    assert.equal(r.tries, 1);
    assert.match(r.message, /not JSON: "\{not json"/);
  } finally {
    await s.close();
  }
});

Deno.test("postJson() retries network errors", async () => {
  // A port that was just free: connections are refused.
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const r = await call(`http://127.0.0.1:${port}/v1/x`);
  assert.ok(!r.ok);
  assert.equal(r.failure, "network");
  assert.equal(r.tries, 4);
  assert.match(r.message, /network error/);
});

Deno.test("postJson() does not wait for a retry that would start after the deadline", async () => {
  const s = server([() => new Response("{}", { status: 429, headers: { "retry-after": "30" } })]);
  try {
    const started = Date.now();
    const r = await call(s.url, { deadline: Date.now() + 5_000 });
    assert.ok(!r.ok);
    assert.equal(r.failure, "deadline");
    assert.equal(r.tries, 1);
    assert.match(r.message, /in 30000 ms\) would start after the attempt's time/);
    assert.ok(Date.now() - started < 2_000);
  } finally {
    await s.close();
  }
});

Deno.test("postJson() stops waiting to retry when the signal fires", async () => {
  const s = server([() => new Response("{}", { status: 503, headers: { "retry-after": "10" } })]);
  try {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const started = Date.now();
    const r = await call(s.url, { signal: ac.signal });
    assert.ok(!r.ok);
    assert.equal(r.failure, "aborted");
    assert.ok(Date.now() - started < 2_000);
  } finally {
    await s.close();
  }
});
