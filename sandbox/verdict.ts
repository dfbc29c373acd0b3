/**
 * Validation of what checker.js returns, on the host: the verdict of `check` and the
 * requests of `judgeRequests`, read from the JSON text the sandbox produced.
 */
import type { GeneratedWorld, JudgeRequest, Verdict } from "../core/checker.ts";

/** How the sandbox marks a value JSON cannot carry (see sandbox/prelude.ts). */
const MARK = "\u0000dvergr";

export type Validated<T> = { ok: true; value: T } | { ok: false; message: string };

type Schemas = typeof import("./verdict_schemas.ts");
let loaded: Schemas | undefined;
/** Thrown by a reader that needs the schemas before they are loaded. */
const NOT_LOADED = new Error("sandbox/verdict_schemas.ts is not loaded");

function schemas(): Schemas {
  if (loaded === undefined) throw NOT_LOADED;
  return loaded;
}

/**
 * Loads the schemas the readers' failure paths need (zod's): their fast paths take what a
 * well-formed checker returns without them. Literal, so that `deno compile` includes it.
 */
export async function loadVerdictSchemas(): Promise<void> {
  loaded ??= await import("./verdict_schemas.ts");
}

/** `read()` run with the schemas loaded first when it needs them (once per process). */
export async function withVerdictSchemas<T>(read: () => T): Promise<T> {
  try {
    return read();
  } catch (e) {
    if (e !== NOT_LOADED) throw e;
  }
  await loadVerdictSchemas();
  return read();
}

/**
 * Reads a verdict from the JSON text of `check`'s result: `{checks: {name: boolean},
 * reward: number in [0, 1]}`, extra keys tolerated and dropped. On failure the message
 * reads `The checker returned no verdict: reward: expected a number in [0, 1], got 2`.
 */
export function readVerdict(json: string): Validated<Verdict> {
  const value = decode(json);
  const fast = plainVerdict(value);
  if (fast) return { ok: true, value: fast };
  const wrong = schemas().verdictProblem(value);
  if (wrong !== null) return { ok: false, message: `The checker returned no verdict: ${wrong}` };
  const raw = value as { checks: Record<string, boolean>; reward: number };
  // Built from the parsed object with define semantics, so a check named "__proto__"
  // stays a check and never touches a prototype.
  return {
    ok: true,
    value: { checks: Object.fromEntries(Object.entries(raw.checks)), reward: raw.reward },
  };
}

/**
 * The verdict of the common case, checked without zod (thousands of verdicts a second go
 * through here): a plain object whose `checks` is a plain object of booleans and whose
 * `reward` is a number in [0, 1]. Anything else returns null and goes to the schema, which
 * says what is wrong.
 */
function plainVerdict(value: unknown): Verdict | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const { checks, reward } = value as { checks?: unknown; reward?: unknown };
  if (typeof reward !== "number" || !(reward >= 0 && reward <= 1)) return null;
  if (typeof checks !== "object" || checks === null || Array.isArray(checks)) return null;
  const entries = Object.entries(checks);
  for (const [, v] of entries) if (typeof v !== "boolean") return null;
  // Built with define semantics, so a check named "__proto__" stays a check.
  return { checks: Object.fromEntries(entries), reward };
}

/** Judge requests of the common case, checked without zod; else null (the schema says why). */
function plainRequests(value: unknown): JudgeRequest[] | null {
  if (!Array.isArray(value)) return null;
  const out: JudgeRequest[] = [];
  for (const q of value) {
    if (typeof q !== "object" || q === null || Array.isArray(q)) return null;
    const { id, prompt } = q as { id?: unknown; prompt?: unknown };
    if (typeof id !== "string" || typeof prompt !== "string") return null;
    out.push({ id, prompt });
  }
  return out;
}

/**
 * Reads judge requests from the JSON text of `judgeRequests`' result: an array of
 * `{id: string, prompt: string}` (extra keys dropped); null or undefined is no request.
 */
export function readJudgeRequests(json: string): Validated<JudgeRequest[]> {
  const value = decode(json);
  if (value === null || isMark(value, "undefined")) return { ok: true, value: [] };
  const fast = plainRequests(value);
  if (fast) return { ok: true, value: fast };
  const wrong = schemas().requestsProblem(value);
  if (wrong !== null) return { ok: false, message: `judgeRequests returned no requests: ${wrong}` };
  const requests = value as { id: string; prompt: string }[];
  return { ok: true, value: requests.map((q) => ({ id: q.id, prompt: q.prompt })) };
}

/**
 * Whether `value` is `{files: {path: text}}` (other keys aside), checked without zod; else
 * null (the schema says why). A "__proto__" path goes to the schema too.
 */
function plainFiles(value: unknown): true | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const { files } = value as { files?: unknown };
  if (typeof files !== "object" || files === null || Array.isArray(files)) return null;
  if (Object.getPrototypeOf(files) !== Object.prototype || Object.hasOwn(files, "__proto__")) {
    return null;
  }
  for (const text of Object.values(files)) if (typeof text !== "string") return null;
  return true;
}

/**
 * Reads a generated world from the JSON text of generator.js's `generate`: `{files: {path:
 * text}, gold}` (extra keys dropped), gold any JSON value but null; a value JSON cannot carry
 * (undefined, NaN, a function) anywhere in it is refused, naming where. World paths are
 * checked by the caller (core/bundle/generator.ts).
 */
export function readGenerated(json: string, file = "generator.js"): Validated<GeneratedWorld> {
  const value = decode(json);
  const no = (why: string) => ({
    ok: false as const,
    message: `${file}'s generate returned no world: ${why}`,
  });
  const files = plainFiles(value);
  const wrong = files === null ? schemas().worldProblem(value) : null;
  if (wrong !== null) return no(wrong);
  const gold = (value as { gold?: unknown }).gold;
  if (gold === undefined || gold === null || isMark(gold, "undefined")) {
    return no("gold: missing (every world needs the gold its checker grades against)");
  }
  const bad = markIn(gold, "gold");
  if (bad) return no(`${bad.path}: ${bad.what} cannot be gold (JSON cannot carry it)`);
  return {
    ok: true,
    value: {
      files: Object.fromEntries(Object.entries((value as { files: object }).files)),
      gold,
    },
  };
}

/** The first value JSON could not carry inside `v` (a sandbox mark), with its path. */
function markIn(v: unknown, path: string): { path: string; what: string } | null {
  if (typeof v === "symbol") return { path, what: v.description ?? "a value" };
  if (v === null || typeof v !== "object") return null;
  for (const [k, x] of Object.entries(v)) {
    const found = markIn(x, Array.isArray(v) ? `${path}[${k}]` : `${path}.${k}`);
    if (found) return found;
  }
  return null;
}

/** The mark as it appears in JSON text (JSON escapes U+0000): text without it has none. */
const MARK_TEXT = JSON.stringify(MARK).slice(1, -1);

/** JSON text to a value, with the sandbox's marks turned into symbols naming the value. */
function decode(json: string): unknown {
  // The reviver runs for every value: most verdicts carry no mark and skip it.
  if (!json.includes(MARK_TEXT)) return JSON.parse(json);
  return JSON.parse(json, (_key, v) => {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const keys = Object.keys(v);
      if (keys.length === 1 && keys[0] === MARK && typeof v[MARK] === "string") {
        return Symbol(v[MARK]);
      }
    }
    return v;
  });
}

function isMark(v: unknown, what: string): boolean {
  return typeof v === "symbol" && v.description === what;
}
