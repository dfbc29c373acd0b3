/**
 * Bundles on disk: read a directory into a file map, write a file map into a
 * directory atomically. Needs --allow-read (and --allow-write to write).
 *
 * What a read costs is the kernel's, in the system calls Deno makes per operation; this
 * module adds none per entry (the root's stat and real path once, a link's when there is one).
 * A 1,000-case dataset bundle (3,001 directories, 2,003 files; ~75 ms of this thread in a cold
 * process, ~65 warm) takes 5 calls per directory listed (openat, fstat, getdents64 twice,
 * close) and, per file read, openat, statx, lseek, two reads, close and one readlink per
 * segment of its absolute path (~14,000): without --allow-all, Deno resolves every path it
 * opens to its real path first (denoland/deno#28702), for relative paths, readTextFile, open
 * and fetch of a file: URL alike. Those readlinks are ~15 ms of the read (with -A: 80 -> 62 ms
 * cold), and dvergr's permissions are fixed. Other ways of reading that were measured and not
 * kept: docs/dead-ends.md.
 */
import { basename, dirname, join, sep } from "../../core/path.ts";
import { relative, resolve } from "./resolve.ts";
import { DvergrError } from "../../core/errors.ts";
import type { FileBundle, FileMap } from "../../core/bundle/file_map.ts";
import { relativePathProblem, sortedFiles } from "../../core/bundle/file_map.ts";

/**
 * The longest stretch of synchronous reading before the event loop gets a turn (a server
 * reading a big bundle keeps answering). A turn costs a few milliseconds, so it is taken by
 * time rather than every so many files.
 */
const SLICE_MS = 50;

/** A pacer that gives the event loop a turn once SLICE_MS have passed since the last. */
function pacer(): () => Promise<void> | undefined {
  let last = performance.now();
  return () => {
    if (performance.now() - last < SLICE_MS) return undefined;
    return new Promise<void>((r) => setTimeout(r, 0)).then(() => {
      last = performance.now();
    });
  };
}

/**
 * Reads every regular file below `dir` (hidden files included) as UTF-8 text. The
 * bundle's name is the directory's last segment. A symlink may point only inside
 * the bundle; a non-UTF-8 file, a special file or a path dvergr refuses is an error
 * naming the file.
 */
export async function readBundleDir(dir: string): Promise<FileBundle> {
  const root = resolve(dir);
  let info: Deno.FileInfo;
  // The root's stat and real path synchronously, as the walk lists: two calls of a few
  // microseconds each, where their async forms cost `dvergr check` ~0.35 ms of thread hops.
  try {
    info = Deno.statSync(root);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new DvergrError("NOT_FOUND", `Cannot read bundle "${dir}": no such directory`, {
        hint: "Give the path of a bundle directory (it holds workflow.edn)",
      });
    }
    throw e;
  }
  if (!info.isDirectory) {
    throw new DvergrError("NOT_FOUND", `Cannot read bundle "${dir}": not a directory`, {
      hint: "Give the path of a bundle directory (it holds workflow.edn)",
    });
  }
  const realRoot = Deno.realPathSync(root);
  const paths: string[] = [];
  const pace = pacer();
  await walk({ realRoot, shown: dir, out: paths, pace }, realRoot, "", [realRoot]);
  const files: FileMap = new Map();
  // ignoreBOM keeps a leading U+FEFF in the text: it is part of the file, so of the
  // content id (the earlier system reads files as Java does, BOM included).
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  for (const rel of paths) {
    // Small files read synchronously cost a fraction of a thread hop each (a 1,000-case
    // bundle: 25 ms, not 50-250 ms).
    const turn = pace();
    if (turn) await turn;
    const bytes = Deno.readFileSync(`${realRoot}${sep}${rel}`);
    try {
      files.set(rel, decoder.decode(bytes));
    } catch {
      throw new DvergrError(
        "BUNDLE_INVALID",
        `Cannot read bundle "${dir}": ${rel} is not UTF-8 text`,
        {
          hint: "Bundle files are text; convert it (iconv -f WINDOWS-1252 -t UTF-8) or remove it",
          details: { file: rel },
        },
      );
    }
  }
  return { name: basename(root), files: sortedFiles(files) };
}

/** What a walk of one bundle directory keeps: its root, its name for messages, what it found. */
interface Walk {
  realRoot: string;
  shown: string;
  out: string[];
  pace: () => Promise<void> | undefined;
}

/**
 * Walks the directory `at`, the bundle path `rel` ("" for the root, else checked already):
 * the real paths of the directories from the root down to it are `ancestors` (its own last),
 * which a symbolic link may not lead back to. Paths are built by joining names (a name holds
 * no "/", and the walk never meets "." or ".."), so each entry's check is its name's.
 */
async function walk(w: Walk, at: string, rel: string, ancestors: string[]): Promise<void> {
  const { realRoot, shown } = w;
  const realAt = ancestors[ancestors.length - 1];
  // Listed synchronously: an async listing costs several thread hops per directory, and a
  // dataset bundle has a directory or two per case (1,000 cases: 40 ms, not 100-270 ms).
  const turn = w.pace();
  if (turn) await turn;
  for (const e of Deno.readDirSync(at)) {
    const full = `${at}${sep}${e.name}`;
    const path = rel === "" ? e.name : `${rel}/${e.name}`;
    // Deno gives a name that is not UTF-8 with U+FFFD in place of its bad bytes.
    const why = e.name.includes("\ufffd")
      ? "has a name that is not UTF-8 text (bundle files are named in UTF-8)"
      : relativePathProblem(e.name);
    if (why) {
      throw new DvergrError(
        "PATH_INVALID",
        `Cannot read bundle "${shown}": path "${path}" ${why}`,
        {
          hint: "Rename the file",
        },
      );
    }
    if (e.isSymlink) {
      let target: string;
      try {
        target = await Deno.realPath(full);
      } catch {
        throw new DvergrError(
          "PATH_INVALID",
          `Cannot read bundle "${shown}": ${path} is a broken symbolic link`,
          { hint: "Remove the link or restore its target" },
        );
      }
      if (target !== realRoot && !target.startsWith(realRoot + sep)) {
        throw new DvergrError(
          "PATH_INVALID",
          `Cannot read bundle "${shown}": ${path} is a symbolic link leaving the bundle (to ${target})`,
          { hint: "Copy the file into the bundle instead of linking to it" },
        );
      }
      const st = await Deno.stat(target);
      if (st.isDirectory) {
        if (ancestors.includes(target)) {
          const back = target === realRoot
            ? "the bundle's own directory"
            : `${relative(realRoot, target).split(sep).join("/")}/`;
          throw new DvergrError(
            "PATH_INVALID",
            `Cannot read bundle "${shown}": ${path} is a symbolic link that loops back to ${back}`,
            { hint: "Remove the link: a bundle is a tree of files, and this one would never end" },
          );
        }
        await walk(w, full, path, [...ancestors, target]);
      } else if (st.isFile) w.out.push(path);
      continue;
    }
    if (e.isDirectory) {
      await walk(w, full, path, [...ancestors, `${realAt}${sep}${e.name}`]);
    } else if (e.isFile) w.out.push(path);
    else {
      throw new DvergrError(
        "PATH_INVALID",
        `Cannot read bundle "${shown}": ${path} is not a regular file`,
        { hint: "Bundles hold only regular text files" },
      );
    }
  }
}

/**
 * Writes a file map as the directory `dir`, atomically: the files go to a temporary
 * sibling which is then renamed into place, so a crash leaves either the old
 * directory or the new one. An existing non-empty `dir` is refused unless `force`,
 * in which case it is replaced whole.
 */
export async function writeBundleDir(
  dir: string,
  files: FileMap,
  opts: { force?: boolean } = {},
): Promise<void> {
  const target = resolve(dir);
  for (const p of files.keys()) {
    const why = relativePathProblem(p);
    if (why) {
      throw new DvergrError("PATH_INVALID", `Cannot write "${dir}": path "${p}" ${why}`, {
        hint: "This is a bug in whatever produced the file map; please report it",
      });
    }
  }
  const existing = await dirState(target);
  if (existing === "file") {
    throw new DvergrError("TARGET_EXISTS", `Cannot write "${dir}": a file of that name exists`, {
      hint: "Choose another output directory",
    });
  }
  if (existing === "non-empty" && !opts.force) {
    throw new DvergrError(
      "TARGET_EXISTS",
      `Cannot write "${dir}": the directory exists and is not empty`,
      { hint: "Choose another directory, or pass --force to replace it" },
    );
  }
  await Deno.mkdir(dirname(target), { recursive: true });
  const tag = `${Date.now().toString(36)}-${crypto.randomUUID().slice(0, 8)}`;
  const tmp = `${target}.tmp-${tag}`;
  try {
    await writeTree(tmp, files);
    if (existing === "missing") {
      await Deno.rename(tmp, target);
    } else {
      const old = `${target}.old-${tag}`;
      await Deno.rename(target, old);
      await Deno.rename(tmp, target);
      await Deno.remove(old, { recursive: true });
    }
  } catch (e) {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
    throw e;
  }
}

/** How many files writeTree writes at once (measured on 15,600 files: 16, 64 and 256 within noise of each other). */
const WRITE_CONCURRENCY = 64;
/** How many directories writeTree makes between two turns of the event loop. */
const MKDIR_SLICE = 512;

/**
 * Writes files under `root` (created when missing). Built for bundles of 100,000 cases,
 * where creating files and directories is the whole cost: each directory is made
 * once, parents first, by a synchronous mkdir (no recursive probing, no thread hop);
 * the files are then written by a pool of concurrent writers, so the kernel's work on
 * one overlaps another's.
 */
export async function writeTree(root: string, files: FileMap): Promise<void> {
  const base = resolve(root);
  await Deno.mkdir(base, { recursive: true });
  const dirs = directoriesOf(files);
  for (let i = 0; i < dirs.length; i++) {
    // A server writing a bundle keeps answering: let other tasks run now and then.
    if (i % MKDIR_SLICE === MKDIR_SLICE - 1) await new Promise((r) => setTimeout(r, 0));
    try {
      Deno.mkdirSync(join(base, dirs[i]));
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    }
  }
  const entries = [...files.entries()];
  const enc = new TextEncoder();
  let next = 0;
  let failure: { error: unknown } | null = null;
  const writer = async () => {
    while (next < entries.length && failure === null) {
      const [p, text] = entries[next++];
      try {
        await Deno.writeFile(join(base, p), enc.encode(text));
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  // Every writer has stopped before this returns or throws, so a caller removing the
  // half-written tree does not race a write.
  await Promise.all(Array.from({ length: Math.min(WRITE_CONCURRENCY, entries.length) }, writer));
  if (failure !== null) throw (failure as { error: unknown }).error;
}

/** Every directory the files lie in, ancestors included, each once, parents first. */
function directoriesOf(files: FileMap): string[] {
  const dirs = new Set<string>();
  const out: string[] = [];
  const add = (d: string) => {
    if (d === "" || dirs.has(d)) return;
    dirs.add(d);
    const slash = d.lastIndexOf("/");
    if (slash > 0) add(d.slice(0, slash));
    out.push(d);
  };
  for (const p of files.keys()) add(p.slice(0, Math.max(0, p.lastIndexOf("/"))));
  return out;
}

async function dirState(path: string): Promise<"missing" | "empty" | "non-empty" | "file"> {
  try {
    const st = await Deno.stat(path);
    if (!st.isDirectory) return "file";
    for await (const _ of Deno.readDir(path)) return "non-empty";
    return "empty";
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return "missing";
    throw e;
  }
}
