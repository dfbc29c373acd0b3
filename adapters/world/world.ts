/**
 * Attempt worlds: a fresh directory per attempt, seeded with the bundle's shared fixtures
 * overlaid by the case's, seen through world paths ("/docs/a.md" is `<dir>/docs/a.md`).
 * After the candidate is done, the `:capture` directories are read back as a bounded
 * `{worldPath: text}` map and the world is removed.
 *
 * Paths are checked on every access: `..`, backslashes, NUL and symbolic links are refused,
 * so nothing a candidate leaves in its world (a link to /etc/passwd, say) can make the host
 * read or write outside it. Captures never follow links. One rule (checkedSegments) decides
 * every path of every world: on disk, being seeded, and in memory.
 *
 * Seeding, capture and the path checks of `files` use synchronous file calls: each is a few
 * microseconds of a local file system, where an asynchronous one also hands the call to a
 * thread and back (measured here: 20-70 us of CPU per call more, and an attempt made ~20 of
 * them). None can wait on anything a candidate controls: the seeded world is dvergr's own, an
 * lstat never waits, `files` reads and writes a file's content asynchronously, and the capture
 * opens without following links and without waiting for a FIFO's writer.
 *
 * Permissions: --allow-read and --allow-write on the temporary directory.
 */
import { closeSync, constants as fsConstants, fstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { DvergrError } from "../../core/errors.ts";
import { removeTreeQuietly } from "../files/fs.ts";
import { keepWorld, takeKeptWorld } from "./kept_worlds.ts";
import type { WorldFiles } from "../../core/bench/candidate.ts";
import type {
  Capture,
  CaptureLimits,
  SkipReason,
  World,
  WorldFactory,
} from "../../core/ports/world_factory.ts";

export const DEFAULT_CAPTURE_LIMITS: CaptureLimits = {
  maxFileBytes: 1 << 20,
  maxTotalBytes: 8 << 20,
  maxFiles: 2000,
  maxDepth: 32,
  maxEntries: 50_000,
};

/** Skipped entries listed one by one; beyond, they are only counted. */
const MAX_SKIPS_LISTED = 200;

/** The segments of a world path, or a PATH_INVALID error saying why it is refused. */
export function worldPathSegments(path: string): string[] {
  const refuse = (why: string) =>
    new DvergrError("PATH_INVALID", `Cannot use world path "${path}": it ${why}`, {
      hint: 'World paths are absolute and normalised, such as "/out/answer.edn"',
    });
  if (!path.startsWith("/")) throw refuse("is not absolute");
  if (path.includes("\0")) throw refuse("contains a NUL character");
  if (path.includes("\\")) throw refuse("contains a backslash");
  const segs = path.split("/").slice(1);
  if (segs.length === 1 && segs[0] === "") return [];
  for (const s of segs) {
    if (s === "") throw refuse("has an empty segment");
    if (s === "." || s === "..") throw refuse(`is not normalised ("${s}")`);
  }
  return segs;
}

function lstatOrNullSync(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

function outside(path: string, why: string): DvergrError {
  return new DvergrError("PATH_INVALID", `Cannot use world path "${path}": ${why}`, {
    hint: "A world's files are plain files and directories inside it",
  });
}

/** What a component of a world path is, as the path rule sees it (null: nothing there). */
type EntryKind = "dir" | "file" | "symlink" | "other" | null;

function entryKind(info: Deno.FileInfo | null): EntryKind {
  if (info === null) return null;
  return info.isSymlink ? "symlink" : info.isDirectory ? "dir" : info.isFile ? "file" : "other";
}

/**
 * The segments of the world path `path` once the one rule of every world (on disk, being
 * seeded, in memory) holds for it, and what is there (`at`): no component is a symbolic link,
 * every one before the last is a directory, and, for a write (`mkdir` given), the last is a
 * regular file or nothing. `kind(rel)` says what is at a relative path. A write makes a
 * missing directory on the way with `mkdir(rel)`; a read stops at the first missing component
 * (nothing lies below it).
 */
function checkedSegments(
  path: string,
  kind: (rel: string) => EntryKind,
  mkdir?: (rel: string) => void,
): { segs: string[]; at: EntryKind } {
  const segs = worldPathSegments(path);
  // The world's root is a directory.
  if (segs.length === 0) {
    if (mkdir) throw outside(path, "it is not a regular file");
    return { segs, at: "dir" };
  }
  let rel = "";
  let k: EntryKind = null;
  for (let i = 0; i < segs.length; i++) {
    rel = i === 0 ? segs[0] : `${rel}/${segs[i]}`;
    k = kind(rel);
    const last = i === segs.length - 1;
    if (k === null) {
      if (!mkdir) break;
      if (!last) mkdir(rel);
    } else if (k === "symlink") throw outside(path, `"/${rel}" is a symbolic link`);
    else if (!last && k !== "dir") throw outside(path, `"/${rel}" is not a directory`);
    else if (last && mkdir && k !== "file") throw outside(path, "it is not a regular file");
  }
  return { segs, at: k };
}

/**
 * An error of the file system (a name too long, no permission, a full disk, a file gone
 * meanwhile) as one naming the world path: whoever called the tool sees the world, never
 * where it lies on the host (`dir`).
 */
function worldError(dir: string, path: string, verb: string, e: unknown): never {
  if (e instanceof DvergrError) throw e;
  const words = (e instanceof Error ? e.message : String(e))
    .replace(/: [a-z_]+ '[^']*'( -> '[^']*')?$/, "").replaceAll(dir, "");
  throw new DvergrError("IO", `Cannot ${verb} world path "${path}": ${words}`, {
    hint: "A world's files are plain files and directories inside it",
    cause: e,
  });
}

/**
 * World file access over a directory. Every component of a path is checked with lstat: a
 * symbolic link anywhere on the way is refused, so a path can never leave the world.
 */
export function worldFiles(dir: string): WorldFiles {
  const onDisk = (rel: string) => entryKind(lstatOrNullSync(join(dir, rel)));
  const mkdirOnDisk = (rel: string) => Deno.mkdirSync(join(dir, rel));
  /**
   * Host path of a world path under the world's rule, and what is there, looked at with
   * synchronous lstat calls (a few microseconds each; see the module's doc); the file itself
   * is read or written asynchronously.
   */
  function hostPath(path: string, forWrite: boolean): { host: string; at: EntryKind } {
    const { segs, at } = checkedSegments(path, onDisk, forWrite ? mkdirOnDisk : undefined);
    return { host: join(dir, ...segs), at };
  }

  async function walk(host: string, world: string, out: string[]): Promise<void> {
    const entries: Deno.DirEntry[] = [];
    for await (const e of Deno.readDir(host)) entries.push(e);
    for (const e of entries) {
      const w = world === "/" ? `/${e.name}` : `${world}/${e.name}`;
      if (e.isDirectory) await walk(join(host, e.name), w, out);
      else if (e.isFile) out.push(w);
    }
  }

  const notFound = (path: string) =>
    new DvergrError("NOT_FOUND", `Cannot read world file "${path}": no such file`, {
      hint: "List the world's files to see what is there",
    });
  const inWorld = (path: string, verb: string) => (e: unknown): never => {
    if (verb === "read" && e instanceof Deno.errors.NotFound) throw notFound(path);
    return worldError(dir, path, verb, e);
  };

  return {
    async list(worldDir) {
      try {
        const { host, at } = hostPath(worldDir, false);
        if (at !== "dir") return [];
        const out: string[] = [];
        await walk(host, worldDir.replace(/\/+$/, "") || "/", out);
        return out.sort();
      } catch (e) {
        return inWorld(worldDir, "list")(e);
      }
    },
    async read(path) {
      try {
        const { host, at } = hostPath(path, false);
        if (at !== "file") throw notFound(path);
        return await Deno.readTextFile(host);
      } catch (e) {
        return inWorld(path, "read")(e);
      }
    },
    async write(path, text) {
      try {
        await Deno.writeTextFile(hostPath(path, true).host, text);
      } catch (e) {
        inWorld(path, "write")(e);
      }
    },
  };
}

/**
 * Creates a world: a fresh directory under `parent` (default: the system's temporary
 * directory) seeded with `fixtures` (world path → text, written in sorted order), plus
 * the empty directories `mkdirs` (the capture directories, so a candidate finds them).
 */
export function createWorld(
  fixtures: Record<string, string>,
  opts: { parent?: string; mkdirs?: string[] } = {},
): Promise<World> {
  try {
    return Promise.resolve(createWorldSync(fixtures, opts));
  } catch (e) {
    return Promise.reject(e);
  }
}

/** A fresh directory in `parent`, made with it when it is missing (a removed home's worlds). */
function makeWorldDir(parent: string | undefined): string {
  try {
    return Deno.makeTempDirSync({ dir: parent, prefix: "world-" });
  } catch (e) {
    if (!parent || !(e instanceof Deno.errors.NotFound)) throw e;
    Deno.mkdirSync(parent, { recursive: true });
    return Deno.makeTempDirSync({ dir: parent, prefix: "world-" });
  }
}

/**
 * Writes `fixtures` into the fresh world `dir` (sorted, as `files.write` would, under the same
 * rule): no look at the disk, since only this call has written there (and `empty`, the empty
 * top-level directories of a kept directory: kept_worlds.ts); what it made is kept in `kinds`
 * (a relative path → "dir" or "file").
 */
function seedWorld(dir: string, fixtures: Record<string, string>, empty: string[] = []): void {
  const kinds = new Map<string, "dir" | "file">(empty.map((d) => [d, "dir"]));
  const seeded = (rel: string) => kinds.get(rel) ?? null;
  const mkdir = (rel: string) => {
    Deno.mkdirSync(join(dir, rel));
    kinds.set(rel, "dir");
  };
  for (const path of Object.keys(fixtures).sort()) {
    try {
      const rel = checkedSegments(path, seeded, mkdir).segs.join("/");
      // createNew: a file never written over, nor a link followed, should one be there.
      Deno.writeTextFileSync(join(dir, rel), fixtures[path], { createNew: true });
      kinds.set(rel, "file");
    } catch (e) {
      worldError(dir, path, "write", e);
    }
  }
}

/** The top-level directories a world of `fixtures` and `mkdirs` has (bad paths: none). */
function topLevelDirs(fixtures: Record<string, string>, mkdirs: string[]): Set<string> {
  const out = new Set<string>();
  for (
    const [path, isDir] of [
      ...Object.keys(fixtures).map((p) => [p, false] as const),
      ...mkdirs.map((d) => [d, true] as const),
    ]
  ) {
    try {
      const segs = worldPathSegments(path);
      if (segs.length > (isDir ? 0 : 1)) out.add(segs[0]);
    } catch {
      // Refused where it is seeded, with the world's error.
    }
  }
  return out;
}

/**
 * Seeds the world `dir` with `fixtures` and the directories `mkdirs`; `empty`: the empty
 * top-level directories of a kept directory (kept_worlds.ts), those this world has no
 * directory of removed first.
 */
function fillWorld(
  dir: string,
  fixtures: Record<string, string>,
  mkdirs: string[],
  empty: string[],
): void {
  const dirs = empty.length === 0 ? null : topLevelDirs(fixtures, mkdirs);
  for (const d of empty) if (!dirs!.has(d)) Deno.removeSync(join(dir, d));
  seedWorld(dir, fixtures, empty.filter((d) => dirs!.has(d)));
  for (const d of mkdirs) Deno.mkdirSync(join(dir, ...worldPathSegments(d)), { recursive: true });
}

function createWorldSync(
  fixtures: Record<string, string>,
  opts: { parent?: string; mkdirs?: string[] },
): World {
  const { parent } = opts;
  const kept = parent ? takeKeptWorld(parent) : null;
  const dir = kept?.dir ?? makeWorldDir(parent);
  const own = worldFiles(dir);
  // Whether anything wrote through `files` (the model loop, the world gateway's MCP tools): such
  // a world is never kept, since a write of theirs may still be under way when the attempt ends.
  let written = false;
  const files: WorldFiles = {
    ...own,
    write(path, text) {
      written = true;
      return own.write(path, text);
    },
  };
  try {
    fillWorld(dir, fixtures, opts.mkdirs ?? [], kept?.dirs ?? []);
  } catch (e) {
    removeTreeQuietly(dir);
    // The world's files name world paths; the host's own trouble (a full disk) names its place.
    if (e instanceof DvergrError && e.code === "IO") {
      throw new DvergrError("IO", `Cannot make the world in "${dir}": ${e.message}`, {
        hint: "Free space on its file system, or make it writable, then run the command again",
        cause: e.cause,
      });
    }
    throw e;
  }
  return {
    dir,
    files,
    capture(dirs, limits) {
      try {
        return Promise.resolve(captureDirs(dir, dirs, { ...DEFAULT_CAPTURE_LIMITS, ...limits }));
      } catch (e) {
        return Promise.reject(e);
      }
    },
    async remove(how) {
      if (how?.reusable && !written && parent && keepWorld(dir, parent)) return;
      await Deno.remove(dir, { recursive: true }).catch(async (e) => {
        if (e instanceof Deno.errors.NotFound) return;
        // A candidate may have taken write permission away from its own directories.
        await new Deno.Command("chmod", { args: ["-R", "u+rwX", dir] }).output().catch(() => {});
        await Deno.remove(dir, { recursive: true });
      });
    },
  };
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads regular files under the world directories `dirs` of the world at `root`. Nothing the
 * candidate left makes it throw for the candidate's sake: an entry that cannot be read (too
 * deep, a name too long, no permission, gone meanwhile) is skipped with its reason, and the
 * walk is bounded in depth and in entries.
 */
function captureDirs(root: string, dirs: string[], limits: CaptureLimits): Capture {
  const found: { world: string; host: string }[] = [];
  const skipped: Capture["skipped"] = [];
  let skippedUnlisted = 0;
  const skip = (path: string, reason: SkipReason, bytes?: number) => {
    if (skipped.length < MAX_SKIPS_LISTED) {
      skipped.push(bytes === undefined ? { path, reason } : { path, reason, bytes });
    } else skippedUnlisted++;
  };
  let entriesSeen = 0;

  function walk(host: string, world: string, depth: number): void {
    if (depth > limits.maxDepth) return skip(world, "too-deep");
    const entries: Deno.DirEntry[] = [];
    try {
      for (const e of Deno.readDirSync(host)) {
        if (++entriesSeen > limits.maxEntries) {
          skip(world, "too-many");
          break;
        }
        entries.push(e);
      }
    } catch (e) {
      if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) return;
      // ENAMETOOLONG, EACCES, ELOOP…: what the candidate left cannot be read; skip it.
      return skip(world, "unreadable");
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const w = `${world}/${e.name}`;
      const h = join(host, e.name);
      if (e.isSymlink) skip(w, "symlink");
      else if (e.isDirectory) walk(h, w, depth + 1);
      else if (e.isFile) found.push({ world: w, host: h });
      else skip(w, "special");
    }
  }

  const seen = new Set<string>();
  for (const d of dirs) {
    const segs = worldPathSegments(d);
    // The capture directory itself must be a real directory reached without links.
    let host = root;
    let ok = true;
    for (const s of segs) {
      host = join(host, s);
      let info: Deno.FileInfo | null;
      try {
        info = lstatOrNullSync(host);
      } catch {
        info = null;
      }
      if (info === null || info.isSymlink || !info.isDirectory) {
        if (info?.isSymlink) skip("/" + segs.join("/"), "symlink");
        ok = false;
        break;
      }
    }
    const world = "/" + segs.join("/");
    if (ok && !seen.has(world)) {
      seen.add(world);
      walk(host, segs.length ? world : "", 0);
    }
  }

  found.sort((a, b) => (a.world < b.world ? -1 : a.world > b.world ? 1 : 0));
  const files: Record<string, string> = {};
  let bytes = 0;
  let kept = 0;
  for (const f of found) {
    if (f.world in files) continue;
    let info: Deno.FileInfo | null;
    try {
      info = lstatOrNullSync(f.host);
    } catch {
      skip(f.world, "unreadable");
      continue;
    }
    if (info === null || !info.isFile) continue;
    if (info.size > limits.maxFileBytes) {
      skip(f.world, "too-large", info.size);
      continue;
    }
    if (kept >= limits.maxFiles) {
      skip(f.world, "too-many", info.size);
      continue;
    }
    if (bytes + info.size > limits.maxTotalBytes) {
      skip(f.world, "over-total", info.size);
      continue;
    }
    const data = readCaptured(f.host, info, limits.maxFileBytes);
    if (typeof data === "string") {
      skip(f.world, data);
      continue;
    }
    let text: string;
    try {
      text = utf8.decode(data);
    } catch {
      skip(f.world, "binary", data.length);
      continue;
    }
    if (text.includes("\0")) {
      skip(f.world, "binary", data.length);
      continue;
    }
    files[f.world] = text;
    bytes += data.length;
    kept++;
  }
  skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const over = entriesSeen > limits.maxEntries ? { overEntries: limits.maxEntries } : {};
  return { files, skipped, skippedUnlisted, bytes, ...over };
}

/** Opening never follows a link in the last segment and never waits for a FIFO's writer. */
const CAPTURE_OPEN_FLAGS = fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0) |
  (fsConstants.O_NONBLOCK ?? 0);

/**
 * Reads at most `max` bytes of the regular file the walk found at `path` (`seen` is its
 * lstat). A process that outlives its candidate may swap the path for a link, a FIFO or
 * another file meanwhile (or a directory above it for a link): what is opened must be the
 * very file the walk saw, else the reason it is skipped is returned instead.
 */
function readCaptured(path: string, seen: Deno.FileInfo, max: number): Uint8Array | SkipReason {
  let fd: number;
  try {
    fd = openSync(path, CAPTURE_OPEN_FLAGS);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ELOOP") return "symlink";
    if (code === "ENOENT" || code === "ENXIO") return "changed";
    return "unreadable";
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return info.isSymbolicLink() ? "symlink" : "special";
    if (seen.ino !== null && (info.ino !== seen.ino || info.dev !== seen.dev)) return "changed";
    // Its size and a byte more (a file that grew since gets room up to one byte past `max`).
    let buf = new Uint8Array(Math.min(max, info.size) + 1);
    let n = 0;
    for (;;) {
      if (n === buf.length) {
        if (n > max) break;
        const grown = new Uint8Array(max + 1);
        grown.set(buf);
        buf = grown;
      }
      const bytesRead = readSync(fd, buf, n, buf.length - n, null);
      if (bytesRead === 0) break;
      n += bytesRead;
    }
    return n > max ? "too-large" : buf.subarray(0, n);
  } catch {
    return "unreadable";
  } finally {
    try {
      closeSync(fd);
    } catch {
      // Already gone.
    }
  }
}

/**
 * A world that only lives in memory, for candidates that see it only through `files` (the
 * built-in ones): nothing is written to disk, and a capture gives what a directory world
 * would give for the same writes, under the same limits (a file is its UTF-8 bytes).
 * `dir` is empty: there is no directory for a process to run in.
 */
export function createMemoryWorld(
  fixtures: Record<string, string>,
  opts: { mkdirs?: string[] } = {},
): World {
  const texts = new Map<string, string>();
  const dirs = new Set<string>(["/"]);
  const addDirs = (segs: string[]) => {
    for (let i = 1; i <= segs.length; i++) dirs.add("/" + segs.slice(0, i).join("/"));
  };
  const files: WorldFiles = {
    list(worldDir) {
      const prefix = "/" + worldPathSegments(worldDir).join("/");
      const under = prefix === "/" ? "/" : prefix + "/";
      return Promise.resolve([...texts.keys()].filter((p) => p.startsWith(under)).sort());
    },
    read(path) {
      const text = texts.get("/" + worldPathSegments(path).join("/"));
      if (text === undefined) {
        return Promise.reject(
          new DvergrError("NOT_FOUND", `Cannot read world file "${path}": no such file`, {
            hint: "List the world's files to see what is there",
          }),
        );
      }
      return Promise.resolve(text);
    },
    write(path, text) {
      try {
        put(path, text);
        return Promise.resolve();
      } catch (e) {
        return Promise.reject(e);
      }
    },
  };
  const inMemory = (rel: string) =>
    dirs.has("/" + rel) ? "dir" : texts.has("/" + rel) ? "file" : null;
  const mkdir = (rel: string) => dirs.add("/" + rel);
  function put(path: string, text: string): void {
    texts.set("/" + checkedSegments(path, inMemory, mkdir).segs.join("/"), text);
  }
  for (const path of Object.keys(fixtures).sort()) put(path, fixtures[path]);
  for (const d of opts.mkdirs ?? []) addDirs(worldPathSegments(d));
  return {
    dir: "",
    files,
    async capture(captureDirs, limits) {
      const l = { ...DEFAULT_CAPTURE_LIMITS, ...limits };
      const found = new Set<string>();
      for (const d of captureDirs) {
        for (const p of await files.list(d)) {
          const depth = p.split("/").length -
            ("/" + worldPathSegments(d).join("/")).split("/").length - 1;
          if (depth <= l.maxDepth) found.add(p);
        }
      }
      const out: Capture = { files: {}, skipped: [], skippedUnlisted: 0, bytes: 0 };
      let kept = 0;
      for (const p of [...found].sort()) {
        const text = texts.get(p)!;
        const size = new TextEncoder().encode(text).length;
        const skip = (reason: SkipReason) => {
          if (out.skipped.length < MAX_SKIPS_LISTED) {
            out.skipped.push({ path: p, reason, bytes: size });
          } else out.skippedUnlisted++;
        };
        if (size > l.maxFileBytes) skip("too-large");
        else if (kept >= l.maxFiles) skip("too-many");
        else if (out.bytes + size > l.maxTotalBytes) skip("over-total");
        else if (text.includes("\0")) skip("binary");
        else {
          out.files[p] = text;
          out.bytes += size;
          kept++;
        }
      }
      return out;
    },
    remove: () => Promise.resolve(),
  };
}

/** Worlds as the engine makes them: directories under a parent, or in memory. */
export const worldFactory: WorldFactory = {
  create: createWorld,
  memory: createMemoryWorld,
};
