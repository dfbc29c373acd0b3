/**
 * The script evaluated first in every fresh QuickJS context, before the EDN reader and
 * checker.js. It is plain JavaScript for QuickJS, kept as text.
 *
 * It is called with two host functions, `hostLog` (accepts a string, ignores anything
 * else) and `hostEdn` (strings in, a JSON string out: see edn_bridge.ts), and
 * - defines the global `edn`: `edn.parse(text, file?)` → plain values (EDN keywords become
 *   strings without the colon, maps objects, vectors/lists/sets arrays); bad EDN throws an
 *   Error named "EdnSyntaxError" with `line`, `column` and `hint`; `edn.stringify(value,
 *   pretty?)` → EDN text (object keys become keywords). Only strings cross to the host;
 *   results come back as JSON text parsed in here, so checker code never holds a host
 *   object;
 * - installs `console` (log, info, warn, error, debug, trace): each call becomes one line
 *   handed to `hostLog`; the host keeps a bounded number of bounded lines;
 * - replaces `Math.random` with a fixed-seed generator, so a checker that draws random
 *   numbers still gives the same verdict for the same input (`Date` is QuickJS's own and
 *   reads the clock: checkers may compare dates with today); a generator.js call starts it
 *   from the world's seed instead (`reseed`), so each world draws its own numbers;
 * - returns, out of reach of checker.js, the helpers the worker uses afterwards, captured
 *   before checker.js can replace any global: `parse` (JSON.parse, for the input),
 *   `serialize` (the result as JSON text; values JSON cannot carry — undefined, NaN,
 *   ±Infinity, functions, symbols, bigints — become `{"\u0000dvergr": "<what it was>"}`
 *   so the host can name them), `describe` (a thrown value as JSON text:
 *   `{kind, isError, name, message, stack, text}`, every part read defensively) and
 *   `reseed` (starts `Math.random` from a number: a generate call's world seed).
 */
export const PRELUDE_SOURCE = `(function (hostLog, hostEdn) {
  "use strict";
  const g = globalThis;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const toText = String;
  const finite = Number.isFinite;
  const imul = Math.imul;
  const ErrorType = Error;
  const TypeErrorType = TypeError;
  const RangeErrorType = RangeError;
  const freeze = Object.freeze;
  const defineProperty = Object.defineProperty;
  const apply = Reflect.apply;
  const slice = String.prototype.slice;
  const MAX_LINE = 2000;
  const MARK = "\\u0000dvergr";

  function clip(s) {
    return s.length > MAX_LINE ? apply(slice, s, [0, MAX_LINE]) : s;
  }
  function show(v) {
    if (typeof v === "string") return v;
    try {
      const s = stringify(v);
      if (typeof s === "string") return s;
    } catch (_) { /* fall through to String() */ }
    try { return toText(v); } catch (_) { return "[a value that cannot be shown]"; }
  }
  function log() {
    let line = "";
    for (let i = 0; i < arguments.length && line.length <= MAX_LINE; i++) {
      line += (i > 0 ? " " : "") + show(arguments[i]);
    }
    hostLog(clip(line));
  }
  const con = {};
  const names = ["log", "info", "warn", "error", "debug", "trace"];
  for (let i = 0; i < names.length; i++) con[names[i]] = log;
  defineProperty(g, "console", { value: con, writable: true, configurable: true });

  let seed = 0x2f6b1d35;
  defineProperty(Math, "random", {
    value: function random() {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = seed;
      t = imul(t ^ (t >>> 15), t | 1);
      t ^= t + imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
    writable: true,
    configurable: true,
  });

  function bridge(op, text, arg) {
    const r = parse(hostEdn(op, text, arg));
    if (r.error === undefined) return r.ok;
    const d = r.error;
    const e = d.name === "TypeError"
      ? new TypeErrorType(d.message)
      : d.name === "RangeError"
      ? new RangeErrorType(d.message)
      : new ErrorType(d.message);
    if (d.name === "EdnSyntaxError") {
      e.name = "EdnSyntaxError";
      e.line = d.line;
      e.column = d.column;
      e.hint = d.hint;
    }
    throw e;
  }
  const edn = freeze({
    parse: function parse(text, file) {
      if (typeof text !== "string") throw new TypeErrorType("edn.parse needs a string");
      return bridge("parse", text, typeof file === "string" ? file : "");
    },
    stringify: function stringifyEdn(value, pretty) {
      bridge("ready", "", ""); // past the time limit, fail before the costly JSON.stringify
      const json = stringify(value);
      if (typeof json !== "string") {
        throw new TypeErrorType("edn.stringify needs a value that JSON can carry");
      }
      return bridge("stringify", json, pretty === true ? "pretty" : "");
    },
  });
  defineProperty(g, "edn", { value: edn, writable: true, configurable: true });

  function mark(what) {
    const o = {};
    defineProperty(o, MARK, { value: what, enumerable: true });
    return o;
  }
  function replacer(_key, v) {
    switch (typeof v) {
      case "number": return finite(v) ? v : mark(toText(v));
      case "undefined": return mark("undefined");
      case "function": return mark("a function");
      case "symbol": return mark("a symbol");
      case "bigint": return mark("a bigint");
      default: return v;
    }
  }
  function serialize(v) {
    return stringify(v, replacer);
  }
  function read(e, key) {
    try {
      const v = e[key];
      if (v === undefined || v === null) return undefined;
      return clip(toText(v));
    } catch (_) {
      return undefined;
    }
  }
  function describe(e) {
    const out = { kind: e === null ? "null" : typeof e, isError: false };
    if (e !== null && (typeof e === "object" || typeof e === "function")) {
      try { out.isError = e instanceof ErrorType; } catch (_) { /* a hostile hasInstance */ }
      out.name = read(e, "name");
      out.message = read(e, "message");
      out.stack = read(e, "stack");
      try { out.text = clip(show(e)); } catch (_) { /* leave it out */ }
    } else {
      out.text = clip(show(e));
    }
    try { return stringify(out); } catch (_) { return '{"kind":"unknown","isError":false}'; }
  }
  function reseed(s) {
    seed = typeof s === "number" && finite(s) ? s | 0 : seed;
  }
  return { parse: parse, serialize: serialize, describe: describe, reseed: reseed };
})`;
