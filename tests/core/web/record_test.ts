import assert from "node:assert/strict";
import { FETCHED_PAGE_LIMIT, FETCHED_TEXT_LIMIT, WebRecorder } from "../../../core/web/record.ts";

Deno.test("WebRecorder keeps the first 40 distinct pages in fetch order, latest text, 200,000 characters each", () => {
  const r = new WebRecorder("live");
  for (let i = 0; i < 45; i++) {
    r.request({ url: `https://p${i}.example/`, status: 200 });
    r.page([`https://p${i}.example/`], `page ${i}`, i === 0 ? "First" : null);
  }
  r.page(["https://p0.example/"], "x".repeat(FETCHED_TEXT_LIMIT + 5), null);
  r.request({ url: "https://blocked.example/", denied: "blocked", message: "no" });
  r.request({ url: "https://blocked.example/a", denied: "blocked", message: "no" });
  r.request({ url: "http://10.0.0.1/", denied: "private-address", message: "no" });
  r.search("q");
  const ev = r.evidence();
  const urls = Object.keys(ev.fetched);
  assert.equal(urls.length, FETCHED_PAGE_LIMIT);
  assert.equal(urls[0], "https://p0.example/");
  assert.equal(urls[39], "https://p39.example/");
  assert.equal(ev.fetched["https://p0.example/"].length, FETCHED_TEXT_LIMIT);
  assert.deepEqual(ev.titles, {});
  assert.deepEqual(r.summary(), {
    mode: "live",
    searches: 1,
    requests: 48,
    pages: 45,
    denials: { blocked: 2, "private-address": 1 },
  });
});
