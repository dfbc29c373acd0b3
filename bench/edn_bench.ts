/**
 * EDN and content-id throughput: `deno bench bench/edn_bench.ts`.
 *
 * The document is shaped like the larger bundle files (a certification-like map with
 * 5,000 entries of strings, keywords, numbers and nested maps, ~0.9 MB of text); the
 * bundle is 500 files of 2 KB, about the size of the bank-booking example.
 */
import { readEdn } from "../core/edn/read.ts";
import { writeEdn } from "../core/edn/write.ts";
import { toPlain } from "../core/edn/plain.ts";
import { contentId } from "../core/bundle/content_id.ts";

const rows = Array.from({ length: 5000 }, (_, i) => ({
  id: `B${String(i).padStart(4, "0")}`,
  status: i % 7 === 0 ? "excluded" : "certified",
  amount: i * 10.25,
  fields: { gegenkonto: String(1000 + i), bu: i % 10, text: `Rechnung Nr. ${i} "Büro" \n` },
  tags: ["a", "b", String(i % 13)],
}));
const TEXT = writeEdn({ cases: rows.length, rows });
const VALUE = readEdn(TEXT);
const FILES = new Map(
  Array.from({ length: 500 }, (_, i) => [`cases/${i}/fixtures/doc.txt`, "x".repeat(2000) + i]),
);

Deno.bench(`readEdn() ${(TEXT.length / 1e6).toFixed(2)} MB`, () => {
  readEdn(TEXT);
});
Deno.bench("writeEdn() the same value", () => {
  writeEdn(VALUE);
});
Deno.bench("toPlain() the same value", () => {
  toPlain(VALUE);
});
Deno.bench("contentId() 500 files of 2 KB", () => {
  contentId(FILES);
});
