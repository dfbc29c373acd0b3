/**
 * A record of the checkers that loaded: `dvergr check` without an answer asks the sandbox only
 * whether the checker loads (no syntax error, no throw, its top level ends), which costs a
 * sandbox start (~0.3 s: a worker, QuickJS, the checker). A checker that loaded once with the
 * same call in the same sandbox loads again, so such a call's verdict is kept on disk: in a
 * directory named by a hash (keyHex: SHA-512's first half) of the sandbox's identity
 * (dvergr's version and its sandbox modules) and the checker's source, a file named by the
 * hash of the call's input. Only
 * verdicts are kept: a checker that does not load, faults or times out is asked again every
 * time, so its problem is always found afresh. Whether a checker has a directory at all
 * (loadsKept) is known from its source alone, before the bundle is parsed.
 *
 * Where: `$XDG_CACHE_HOME/dvergr/checker-loads`, else `$HOME/.cache/dvergr/checker-loads`;
 * nothing is kept without either. A file that cannot be read or written is a miss.
 *
 * Permissions: --allow-read/--allow-write of the cache directory and of sandbox/.
 */
import { join } from "../core/path.ts";
import { sha256Hex } from "../core/sha256.ts";
import { sha512 } from "../core/sha512.ts";
import type { CheckerInput, CheckerRun, CheckerRunner } from "../core/checker.ts";
import { VERSION } from "../core/version.ts";

/** The sandbox identity of this dvergr, computed once. */
let identity: string | null = null;
/** Its computation off this thread (prepareSandboxIdentity), while it runs. */
let preparing = false;

/**
 * The sandbox's identity: dvergr's version `version`, Deno's and, from a source tree, its
 * sandbox modules and deno.json, which pins QuickJS's version (a compiled binary's version
 * stands for them).
 */
export function sandboxIdentity(version = VERSION): string {
  if (version === VERSION && identity !== null) return identity;
  let digest: string;
  try {
    const files = sandboxFiles();
    const record = digestRecord(version, files);
    digest = (record && keptDigest(record)) ?? sha256Hex(sourceText(version, files));
    if (record) keepDigest(record, digest);
  } catch {
    // A compiled binary: its version stands for its modules.
    digest = sha256Hex(identityHead(version));
  }
  if (version === VERSION) identity = digest;
  return digest;
}

/**
 * Starts computing this dvergr's identity off this thread (crypto.subtle hashes on Deno's
 * blocking pool) when it is not kept: a command that starts a sandbox before its cache
 * holds anything (a first check) needs it only once its pool exists, and hashing ~240 KB
 * here would cost its main thread ~15-30 ms. sandboxIdentity() called before it is done
 * computes it itself (the same digest). Resolves when it is done (never rejects).
 */
export function prepareSandboxIdentity(): Promise<void> {
  if (identity !== null || preparing) return Promise.resolve();
  let files: string[];
  let record: DigestRecord | null;
  try {
    files = sandboxFiles();
    record = digestRecord(VERSION, files);
    const kept = record && keptDigest(record);
    if (kept) {
      identity = kept;
      return Promise.resolve();
    }
  } catch {
    return Promise.resolve();
  }
  preparing = true;
  return crypto.subtle.digest("SHA-256", new TextEncoder().encode(sourceText(VERSION, files)))
    .then((buf) => {
      const digest = Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0"))
        .join("");
      identity ??= digest;
      if (record) keepDigest(record, digest);
    })
    .catch(() => {})
    .finally(() => preparing = false);
}

/** This module's directory, as a path ending in "/". */
const SANDBOX_DIR = decodeURIComponent(new URL("./", import.meta.url).pathname);

/**
 * The paths of the sandbox modules and deno.json, in the order they are hashed: strings,
 * not URLs (a URL object per file was ~2.7 ms of a check's main thread).
 */
function sandboxFiles(): string[] {
  const names = [...Deno.readDirSync(SANDBOX_DIR)].filter((e) => e.isFile).map((e) => e.name)
    .sort();
  return [...names.map((name) => SANDBOX_DIR + name), SANDBOX_DIR.replace(/[^/]+\/$/, "deno.json")];
}

function identityHead(version: string): string {
  return `dvergr ${version} deno ${Deno.version.deno}\n`;
}

/** What the identity hashes: its head and each file's name and text. */
function sourceText(version: string, files: string[]): string {
  // The bytes node:crypto's createHash was given (sources are UTF-8), hashed without
  // node:crypto: its first import boots Node's compatibility layer (~15 ms of a check).
  let text = identityHead(version);
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  for (const file of files) {
    const name = file.slice(file.lastIndexOf("/") + 1);
    text += name + decoder.decode(Deno.readFileSync(file));
  }
  return text;
}

/** Files changed this recently may still be written: their digest is not kept. */
const SETTLE_MS = 2000;

/**
 * Where the digest of the sandbox modules is kept, with a fingerprint of their stats (inode,
 * size, modification and change time): hashing the ~240 KB of them cost ~10-15 ms of every
 * check's start, the stats ~2. A file written since has a new change time, which no tool
 * sets back. One record per version and directory of modules (its name a short hash of
 * both).
 */
interface DigestRecord {
  file: string;
  fingerprint: string;
  /** The latest modification or change time of the files, in ms. */
  newest: number;
}

/** The record of `files`; null when nothing can be kept (no cache directory, no inodes). */
function digestRecord(version: string, files: string[]): DigestRecord | null {
  let cache: string | null;
  try {
    cache = dvergrCacheDir((name) => Deno.env.get(name));
  } catch {
    return null;
  }
  if (cache === null) return null;
  let fingerprint = identityHead(version);
  let newest = 0;
  for (const file of files) {
    const st = Deno.statSync(file);
    if (st.ino === null || st.mtime === null || st.ctime === null) return null;
    const times = `${st.mtime.getTime()} ${st.ctime.getTime()}`;
    fingerprint += `${file} ${st.ino} ${st.size} ${times}\n`;
    newest = Math.max(newest, st.mtime.getTime(), st.ctime.getTime());
  }
  const name = `${fnv1a(`${version} ${files[0]}`)}.txt`;
  return { file: join(cache, "sandbox-digests", name), fingerprint, newest };
}

/** The digest kept for the record's fingerprint, or null. */
function keptDigest(record: DigestRecord): string | null {
  try {
    const [digest, ...rest] = Deno.readTextFileSync(record.file).split("\n");
    if (rest.join("\n") === record.fingerprint && /^[0-9a-f]{64}$/.test(digest)) return digest;
  } catch {
    // Not kept yet.
  }
  return null;
}

/** Keeps `digest` for the record's fingerprint, unless a file may still be being written. */
function keepDigest(record: DigestRecord, digest: string): void {
  if (Date.now() - record.newest <= SETTLE_MS || keptDigest(record) === digest) return;
  try {
    Deno.mkdirSync(join(record.file, ".."), { recursive: true });
    const tmp = `${record.file}.${crypto.randomUUID()}.tmp`;
    Deno.writeTextFileSync(tmp, `${digest}\n${record.fingerprint}`);
    Deno.renameSync(tmp, record.file);
  } catch {
    // Not kept: the next start hashes again.
  }
}

/** FNV-1a (32 bits) of `text`, in hex: a file name, not a check (the record holds that). */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, "0");
}

/** dvergr's cache directory, from the environment (null: none). */
export function dvergrCacheDir(env: (name: string) => string | undefined): string | null {
  const base = env("XDG_CACHE_HOME") || (env("HOME") ? join(env("HOME")!, ".cache") : "");
  return base ? join(base, "dvergr") : null;
}

/** Where the records are kept, from the environment (null: nowhere). */
export function loadCacheDir(env: (name: string) => string | undefined): string | null {
  const dir = dvergrCacheDir(env);
  return dir === null ? null : join(dir, "checker-loads");
}

const encoder = new TextEncoder();

/**
 * The key of `text` in the records' names: the first 32 bytes of the SHA-512 of its UTF-8, in
 * hex. SHA-512, not SHA-256: a check hashes the bundle's content id with SHA-512 anyway
 * (core/bundle/content_id.ts), and each hash's WebAssembly block function is compiled on its
 * first call; one compiled instead of two is ~1-2 ms of a check whose load is kept.
 */
function keyHex(text: string): string {
  const digest = sha512(encoder.encode(text));
  let hex = "";
  for (let i = 0; i < 32; i++) hex += digest[i].toString(16).padStart(2, "0");
  return hex;
}

/** The last checker key computed: a check asks for it twice (loadsKept, then its load). */
let lastKey: { text: string; hex: string } | undefined;

/** The directory of the kept loads of checker `source` in the sandbox `identity`. */
function checkerDir(dir: string, source: string, identity = sandboxIdentity()): string {
  const text = `${identity}\0${source}`;
  if (lastKey?.text !== text) lastKey = { text, hex: keyHex(text) };
  return join(dir, lastKey.hex);
}

function fileOf(dir: string, source: string, input: CheckerInput): string {
  const key = keyHex(JSON.stringify(input));
  return join(checkerDir(dir, source), `${key}.json`);
}

/**
 * Whether any load of checker `source` in the sandbox `identity` (this one) is kept in `dir`;
 * two stats.
 */
export function loadsKept(dir: string, source: string, identity?: string): boolean {
  try {
    // Nothing kept at all (a first check): known without the sandbox's identity.
    if (!Deno.statSync(dir).isDirectory) return false;
    return Deno.statSync(checkerDir(dir, source, identity ?? sandboxIdentity())).isDirectory;
  } catch {
    return false;
  }
}

/**
 * `runner` whose `check` answers from the records in `dir` when it has this call's verdict,
 * and records each new verdict there. Calls with options (a time limit of their own) are not
 * kept.
 */
export function loadCachingRunner(runner: CheckerRunner, dir: string): CheckerRunner {
  return {
    ...runner,
    async check(source, input, opts) {
      if (opts !== undefined) return await runner.check(source, input, opts);
      const file = fileOf(dir, source, input);
      try {
        // Read synchronously: a small file, where an async read costs a thread hop and an
        // event loop turn (~0.3 ms of a check whose load is kept).
        const kept = JSON.parse(Deno.readTextFileSync(file)) as CheckerRun;
        if (kept.ok) return kept;
      } catch {
        // Not kept (or unreadable): ask the sandbox.
      }
      const run = await runner.check(source, input);
      if (run.ok) {
        // Written at once: the first async write of a process loads Deno's web streams
        // (~5 ms), and a one-shot command exits right after.
        try {
          Deno.mkdirSync(checkerDir(dir, source), { recursive: true });
          const tmp = `${file}.${crypto.randomUUID()}.tmp`;
          Deno.writeTextFileSync(tmp, JSON.stringify(run));
          Deno.renameSync(tmp, file);
        } catch {
          // Not kept: the next check asks the sandbox again.
        }
      }
      return run;
    },
    judgeRequests: (source, input, opts) => runner.judgeRequests(source, input, opts),
    generate: (source, request, opts) => runner.generate(source, request, opts),
    close: () => runner.close(),
  };
}
