import assert from "node:assert/strict";
import {
  addUsage,
  costMicros,
  costPico,
  formatDollars,
  picoPerToken,
  uncachedInput,
} from "../../../core/models/cost.ts";

const SONNET = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const GPT41 = { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 2 };

Deno.test("costMicros() prices uncached input, cache reads, cache writes and output each at its rate", () => {
  // 4700 prompt tokens of which 3000 read from and 500 written to the cache:
  // 1200 × 3 + 800 × 15 + 3000 × 0.3 + 500 × 3.75 = 3600 + 12000 + 900 + 1875
  assert.equal(
    costMicros({ input: 4700, output: 800, cacheRead: 3000, cacheWrite: 500 }, SONNET),
    18375,
  );
  // OpenAI: 5000 prompt tokens of which 4000 cached, 300 completion: 1000 × 2 + 4000 × 0.5 + 300 × 8
  assert.equal(
    costMicros({ input: 5000, output: 300, cacheRead: 4000, cacheWrite: 0 }, GPT41),
    6400,
  );
});

Deno.test("costMicros() is exact for fractional prices and rounds half up once", () => {
  const mini = { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0.15 };
  // 1 cached token at 0.075 µ$ rounds to 0; 7 at 0.075 = 0.525 → 1
  assert.equal(costMicros({ input: 1, output: 0, cacheRead: 1, cacheWrite: 0 }, mini), 0);
  assert.equal(costMicros({ input: 7, output: 0, cacheRead: 7, cacheWrite: 0 }, mini), 1);
  // 0.1 + 0.2 style float error does not leak: 3 tokens at 0.1 + 6 at 0.05 = 0.6 → 1
  assert.equal(
    costPico({ input: 9, output: 0, cacheRead: 6, cacheWrite: 0 }, {
      ...FREE(),
      input: 0.1,
      cacheRead: 0.05,
    }),
    600_000n,
  );
  // Summing usages first and pricing once equals the exact total
  const a = { input: 1343, output: 77, cacheRead: 1001, cacheWrite: 9 };
  const b = { input: 1667, output: 23, cacheRead: 999, cacheWrite: 1 };
  assert.equal(costMicros(addUsage(a, b), mini), 362); // 1000×.15 + 100×.6 + 2000×.075 + 10×.15 = 361.5 → 362
});

Deno.test("costMicros() handles a million-token, high-price call without losing precision", () => {
  const opus41 = { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 };
  assert.equal(
    costMicros(
      { input: 3_000_000, output: 1_000_000, cacheRead: 1_000_000, cacheWrite: 1_000_000 },
      opus41,
    ),
    110_250_000,
  );
});

Deno.test("uncachedInput() is the prompt less its cached parts, never below zero", () => {
  assert.equal(uncachedInput({ input: 4700, output: 1, cacheRead: 3000, cacheWrite: 500 }), 1200);
  assert.equal(uncachedInput({ input: 0, output: 0, cacheRead: 5, cacheWrite: 0 }), 0);
});

Deno.test("picoPerToken() keeps six decimals of a dollars-per-million price", () => {
  assert.equal(picoPerToken(0.275), 275_000n);
  assert.equal(picoPerToken(0.000001), 1n);
  assert.equal(picoPerToken(3), 3_000_000n);
});

Deno.test("formatDollars() shows four decimals", () => {
  assert.equal(formatDollars(18375), "$0.0184");
  assert.equal(formatDollars(500_000), "$0.5000");
});

function FREE() {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
}
