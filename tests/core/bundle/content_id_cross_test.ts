/**
 * contentId() against a second, independent derivation of docs/compatibility.md §3.2 written here
 * from the text alone (bytes by hand, the UUID bits with BigInt), on bundles with the
 * inputs the first implementation's authors were least likely to try.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { contentId } from "../../../core/bundle/content_id.ts";

const sha = (b: Uint8Array) => new Uint8Array(createHash("sha512").update(b).digest());
const cat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), at += p.length;
  return out;
};
const safe = (b: Uint8Array) =>
  b.length >= 1024 ? sha(b) : cat(b, b.map((x) => ((x << 24) >> 24) >= 1 && x <= 29 ? 1 : 0));
const str = (s: string) => cat(Uint8Array.of(3), safe(new TextEncoder().encode(s)));
const vec = (...items: Uint8Array[]) => cat(Uint8Array.of(9), sha(cat(...items)));
function map(entries: [Uint8Array, Uint8Array][]): Uint8Array {
  if (entries.length === 0) return Uint8Array.of(10);
  const acc = new Uint8Array(32);
  for (const [k, v] of entries) vec(k, v).slice(0, 32).forEach((b, i) => acc[i] ^= b);
  return cat(Uint8Array.of(10), acc);
}
function uuid(coerced: Uint8Array): string {
  const h = sha(coerced);
  let hi = 0n, lo = 0n;
  for (let i = 0; i < 8; i++) hi = (hi << 8n) | BigInt(h[i]);
  for (let i = 8; i < 16; i++) lo = (lo << 8n) | BigInt(h[i]);
  hi = ((hi | 0x5000n) & 0x7fffffffffff5fffn) & ~(3n << 62n);
  lo = (lo | (1n << 63n)) & ~(1n << 62n);
  const x = hi.toString(16).padStart(16, "0") + lo.toString(16).padStart(16, "0");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}
function independentId(files: Map<string, string>): string {
  const kw = cat(Uint8Array.of(5), safe(new TextEncoder().encode(":dvergr/room-workflow")));
  return uuid(vec(kw, map([...files].map(([p, t]) => [str(p), str(t)]))));
}

/** A small fixed-seed generator (mulberry32), so a failure names a reproducible map. */
function rng(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  "a",
  "Z",
  "ü",
  "ß",
  "中文",
  "😀",
  "🇩🇪",
  "\r\n",
  "\n",
  "\t",
  "\u0001",
  "\u001d",
  "\u001e",
  "\u007f",
  "\u00a0",
  "\ufeff",
  " ",
  '{:k "v"}',
  "é",
  "\u0000",
];

function randomText(r: () => number, bytes: number): string {
  let s = "";
  let n = 0;
  while (n < bytes) {
    const piece = PIECES[Math.floor(r() * PIECES.length)];
    s += piece;
    n += new TextEncoder().encode(piece).length;
  }
  return s;
}

Deno.test("contentId() agrees with an independent derivation on the reference vector", () => {
  const files = new Map([
    ["workflow.edn", '{:title "T" :task "Do it."}'],
    ["checker.clj", "(ns c) (defn check [_] {:checks {:ok? true} :reward 1.0})"],
    ["fixtures/a.md", "x"],
  ]);
  assert.equal(independentId(files), "2009b08f-92a1-5af7-8637-bf82ff4c0e6d");
  assert.equal(contentId(files), independentId(files));
  assert.equal(contentId(new Map()), independentId(new Map()));
});

Deno.test("contentId() agrees with an independent derivation on texts of exactly 1023, 1024 and 1025 UTF-8 bytes", () => {
  for (const n of [0, 1, 511, 512, 1022, 1023, 1024, 1025, 4096]) {
    for (const unit of ["x", "ü", "\u0001"]) {
      const text = unit === "ü"
        ? "ü".repeat(Math.floor(n / 2)) + "x".repeat(n % 2)
        : unit.repeat(n);
      assert.equal(new TextEncoder().encode(text).length, n);
      const files = new Map([["fixtures/f.txt", text], [
        `cases/${"ü".repeat(n % 7)}/gold.edn`,
        text,
      ]]);
      assert.equal(contentId(files), independentId(files), `${n} bytes of ${JSON.stringify(unit)}`);
    }
  }
});

Deno.test("contentId() agrees with an independent derivation on 300 random bundles (unicode paths, CRLF, empty files, control bytes)", () => {
  const r = rng(20261130);
  for (let i = 0; i < 300; i++) {
    const files = new Map<string, string>();
    const count = 1 + Math.floor(r() * (i % 50 === 0 ? 400 : 12));
    for (let j = 0; j < count; j++) {
      const path = `fixtures/${
        randomText(r, 1 + Math.floor(r() * 12)).replace(/[\s/\\]/g, "_").replaceAll("\u0000", "_")
      }-${j}.md`;
      const size = [0, 1, 1023, 1024, 1025, Math.floor(r() * 3000)][Math.floor(r() * 6)];
      files.set(path, randomText(r, size));
    }
    assert.equal(contentId(files), independentId(files), `bundle ${i}`);
  }
});
