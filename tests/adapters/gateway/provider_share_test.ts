/**
 * The attempt's share of the model provider, over real HTTP to a provider on 127.0.0.1 that
 * speaks the Anthropic Messages format: at most four requests in flight (the rest wait their
 * turn), refusals retried by the gateway as the provider asks while the attempt is within its
 * share, and a refusal the candidate's own burst caused a failure with its cause, never a fault.
 */
import assert from "node:assert/strict";
import { testRoute } from "../../helpers/model_route.ts";
import { createModelGateway, type ModelRoute } from "../../../adapters/gateway/model_gateway.ts";
import { gatewayOutcome } from "../../../adapters/gateway/attempt_gateway.ts";
import {
  FAIR_REQUESTS_PER_MINUTE,
  MAX_IN_FLIGHT,
  MAX_RETRY_WAIT_MS,
  retryWaitMs,
} from "../../../adapters/gateway/provider_share.ts";

const PRICES = { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 };

/**
 * A provider that answers each request with `reply(n)` (n counts from 1), holding each answer
 * until `release` is called or 20 ms passed; it counts the requests in flight at once.
 */
function provider(reply: (n: number) => { status: number; headers?: Record<string, string> }) {
  let n = 0;
  let inFlight = 0;
  const stats = { received: 0, maxInFlight: 0 };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    await req.json();
    const k = ++n;
    stats.received = k;
    stats.maxInFlight = Math.max(stats.maxInFlight, ++inFlight);
    await new Promise((r) => setTimeout(r, 20));
    inFlight--;
    const { status, headers } = reply(k);
    return status === 200
      ? Response.json({
        type: "message",
        content: [{ type: "text", text: "ok" }],
        usage: { input_tokens: 10, output_tokens: 2 },
      })
      : Response.json(
        { type: "error", error: { type: "rate_limit_error", message: "slow down" } },
        { status, headers },
      );
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, stats, close: () => server.shutdown() };
}

function route(baseUrl: string): ModelRoute {
  return testRoute(baseUrl, { prices: PRICES, maxTokens: 100 });
}

function gatewayTo(url: string, retryWait?: (res: Response | null, tries: number) => number) {
  return createModelGateway({
    route: () => route(url),
    budgetMicros: 10_000_000,
    maxRequests: 500,
    ...(retryWait ? { retryWait } : {}),
  });
}

function ask(gw: ReturnType<typeof gatewayTo>, text = "hi"): Promise<number> {
  return gw.handle(
    new Request("http://127.0.0.1:17801/v1/messages", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "claude",
        max_tokens: 5,
        messages: [{ role: "user", content: text }],
      }),
    }),
  ).then(async (res) => {
    await res.body?.cancel();
    return res.status;
  });
}

const BASE = {
  status: "completed" as const,
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  billedMicros: 0,
  listMicros: null,
  isolated: true,
  evidence: {},
};

async function outcomeOf(gw: ReturnType<typeof gatewayTo>) {
  const figures = await gw.settle();
  return {
    figures,
    outcome: gatewayOutcome(BASE, {
      mcpCalls: [],
      mcpToolLists: 0,
      modelRequests: gw.log,
      figures,
    }),
  };
}

Deno.test("the model gateway keeps at most four requests of an attempt in flight; the others wait their turn", async () => {
  const p = provider(() => ({ status: 200 }));
  const gw = gatewayTo(p.url);
  try {
    const statuses = await Promise.all(Array.from({ length: 12 }, () => ask(gw)));
    assert.deepEqual(statuses, Array(12).fill(200));
    assert.equal(p.stats.received, 12);
    assert.ok(p.stats.maxInFlight <= MAX_IN_FLIGHT, `${p.stats.maxInFlight} in flight`);
    const { outcome } = await outcomeOf(gw);
    assert.equal(outcome.status, "completed");
  } finally {
    await p.close();
  }
});

Deno.test("the model gateway retries a 429 of an attempt within its share after the provider's retry-after-ms", async () => {
  const p = provider((n) =>
    n === 1 ? { status: 429, headers: { "retry-after-ms": "300" } } : { status: 200 }
  );
  const gw = gatewayTo(p.url);
  try {
    const t0 = performance.now();
    assert.equal(await ask(gw), 200);
    // The provider's 300 ms: the gateway waited at least as it was asked.
    assert.ok(performance.now() - t0 >= 300, `${performance.now() - t0} ms`);
    assert.equal(p.stats.received, 2);
    assert.equal(gw.log[0].tries, 2);
    const { figures, outcome } = await outcomeOf(gw);
    assert.equal(figures.upstreamProblem, null);
    assert.equal(outcome.status, "completed");
  } finally {
    await p.close();
  }
});

Deno.test("a provider that keeps refusing an honest attempt within its share is a fault (the host's limit, not the candidate's doing)", async () => {
  const p = provider(() => ({ status: 529 }));
  const gw = gatewayTo(p.url, () => 0);
  try {
    assert.equal(await ask(gw), 529);
    assert.equal(p.stats.received, 2);
    const { figures, outcome } = await outcomeOf(gw);
    assert.match(figures.upstreamProblem ?? "", /answered 529$/);
    assert.equal(figures.overShare, null);
    assert.equal(outcome.status, "fault");
  } finally {
    await p.close();
  }
});

Deno.test("a burst over the attempt's share that the provider refuses with 429 fails the attempt with its cause, never a fault", async () => {
  // The provider allows 10 requests, then answers 429 asking for a second's wait.
  const p = provider((n) =>
    n <= 10 ? { status: 200 } : { status: 429, headers: { "retry-after": "1" } }
  );
  const gw = gatewayTo(p.url);
  const burst = FAIR_REQUESTS_PER_MINUTE + 10;
  try {
    const statuses = await Promise.all(Array.from({ length: burst }, () => ask(gw)));
    assert.equal(statuses.filter((s) => s === 200).length, 10);
    assert.equal(statuses.filter((s) => s === 429).length, burst - 10);
    const { figures, outcome } = await outcomeOf(gw);
    assert.equal(figures.upstreamProblem, null);
    assert.match(figures.overShare ?? "", /answered 429; the attempt had sent \d+ requests/);
    assert.equal(outcome.status, "crashed");
    assert.match(outcome.message ?? "", /^Over its share of the model provider: /);
    // Only requests refused while the attempt was still within its share were tried again.
    assert.ok(p.stats.received < burst + FAIR_REQUESTS_PER_MINUTE, `${p.stats.received}`);
  } finally {
    await p.close();
  }
});

Deno.test("retryWaitMs() honours retry-after-ms, retry-after in seconds or as a date, else backs off; never past its cap", () => {
  const res = (h: Record<string, string>) => new Response(null, { status: 429, headers: h });
  assert.equal(retryWaitMs(res({ "retry-after-ms": "250" }), 1), 250);
  assert.equal(retryWaitMs(res({ "retry-after": "2" }), 1), 2000);
  const now = Date.parse("2026-12-02T03:00:00Z");
  assert.equal(retryWaitMs(res({ "retry-after": "Wed, 02 Dec 2026 03:00:05 GMT" }), 1, now), 5000);
  assert.deepEqual([1, 2, 3].map((t) => retryWaitMs(res({}), t)), [1000, 2000, 4000]);
  assert.equal(retryWaitMs(null, 2), 2000);
  assert.equal(retryWaitMs(res({ "retry-after": "3600" }), 1), MAX_RETRY_WAIT_MS);
});
