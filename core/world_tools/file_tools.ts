/**
 * The world's file tools: list_files, read_file and (profile "developer" only) write_file,
 * limited to the attempt's writable directories (docs/compatibility.md §1.3 :profile, :capture).
 */
import type { WorldFiles } from "../bench/candidate.ts";
import type { ToolOutput, ToolWorld, WorldTool } from "./types.ts";

export const WRITING_PROFILE = "developer";

/** Characters of a file read_file returns; the rest is cut with a note. */
export const READ_LIMIT = 60_000;
/** Paths list_files returns. */
export const LIST_LIMIT = 1_000;
/** Characters write_file accepts. */
export const WRITE_LIMIT = 1_000_000;
/**
 * Bytes write_file may leave in one world: the files it wrote, each at its last size. The
 * world is on the host's disk, beside no quota of the sandbox's: without a bound, a candidate
 * calling write_file in a loop fills the host's disk (1.5 GB in 86 s measured). Eight times
 * what a capture reads back (8 MiB).
 */
export const WRITE_TOTAL_LIMIT = 64 * 1024 * 1024;

/** What write_file left in each world: bytes by path, and their sum. */
const written = new WeakMap<WorldFiles, { sizes: Map<string, number>; total: number }>();

function dirOf(w: string): string {
  const d = "/" + w.replace(/^\/+|\/+$/g, "");
  return d === "/" ? "/" : d + "/";
}

/** A caller-given path as a world path, or the reason it is refused. */
function worldPath(raw: unknown, what: string): { path: string } | { problem: string } {
  if (typeof raw !== "string" || raw.trim() === "") {
    return { problem: `${what} must be a non-empty string` };
  }
  let p = raw.trim();
  if (p.includes("\0") || p.includes("\\")) {
    return { problem: `${what} ${JSON.stringify(raw)} has a NUL or backslash` };
  }
  if (!p.startsWith("/")) p = "/" + p;
  const segs = p.split("/").filter((s) => s !== "" && s !== ".");
  if (segs.includes("..")) {
    return { problem: `${what} ${JSON.stringify(raw)} leaves the world ("..")` };
  }
  return { path: "/" + segs.join("/") };
}

const ok = (content: string): ToolOutput => ({ content, isError: false });
const fail = (content: string): ToolOutput => ({ content: `Error: ${content}`, isError: true });

const listFiles: WorldTool = {
  name: "list_files",
  readOnly: true,
  openWorld: false,
  inputSchema: {
    type: "object",
    properties: {
      dir: { type: "string", description: 'An absolute world path, e.g. "/" or "/docs".' },
    },
    required: ["dir"],
    additionalProperties: false,
  },
  offered: () => true,
  description: () =>
    "List the files under a directory of the world, recursively, one absolute path per line " +
    '(e.g. "/docs/case.edn").',
  async run(args, world) {
    const dir = worldPath(args.dir ?? "/", "dir");
    if ("problem" in dir) return fail(dir.problem);
    const paths = await world.files.list(dir.path);
    if (paths.length === 0) return ok(`(no files under ${dir.path})`);
    const shown = paths.slice(0, LIST_LIMIT).join("\n");
    return ok(
      paths.length > LIST_LIMIT
        ? `${shown}\n[… ${paths.length - LIST_LIMIT} more paths not shown]`
        : shown,
    );
  },
};

const readFile: WorldTool = {
  name: "read_file",
  readOnly: true,
  openWorld: false,
  inputSchema: {
    type: "object",
    properties: {
      path: { type: "string", description: 'An absolute world path, e.g. "/docs/case.edn".' },
    },
    required: ["path"],
    additionalProperties: false,
  },
  offered: () => true,
  description: () =>
    `Read a text file of the world by its absolute path. Text past ${READ_LIMIT} characters is cut.`,
  async run(args, world) {
    const p = worldPath(args.path, "path");
    if ("problem" in p) return fail(p.problem);
    const text = await world.files.read(p.path);
    return ok(
      text.length > READ_LIMIT
        ? `${
          text.slice(0, READ_LIMIT)
        }\n[… cut: the file has ${text.length} characters, ${READ_LIMIT} shown]`
        : text,
    );
  },
};

const writeFile: WorldTool = {
  name: "write_file",
  readOnly: false,
  openWorld: false,
  inputSchema: {
    type: "object",
    properties: {
      path: { type: "string", description: 'An absolute world path, e.g. "/out/answer.edn".' },
      content: { type: "string", description: "The whole text of the file." },
    },
    required: ["path", "content"],
    additionalProperties: false,
  },
  offered: (world: ToolWorld) => world.profile === WRITING_PROFILE,
  description(world: ToolWorld) {
    const dirs = world.writable.map(dirOf);
    return "Write a text file (creating its directories), replacing any file at that path. " +
      (dirs.length > 0
        ? `Only paths under ${dirs.join(", ")} may be written.`
        : "No path may be written here.");
  },
  async run(args, world) {
    const p = worldPath(args.path, "path");
    if ("problem" in p) return fail(p.problem);
    if (typeof args.content !== "string") {
      return fail("content must be a string (the whole text of the file)");
    }
    const dirs = world.writable.map(dirOf);
    if (!dirs.some((d) => d === "/" || p.path.startsWith(d))) {
      return fail(`${p.path} may not be written; only paths under ${dirs.join(", ") || "(none)"}`);
    }
    if (args.content.length > WRITE_LIMIT) {
      return fail(
        `content has ${args.content.length} characters, over the limit of ${WRITE_LIMIT}`,
      );
    }
    const left = written.get(world.files) ?? { sizes: new Map<string, number>(), total: 0 };
    const bytes = new TextEncoder().encode(args.content).length;
    const total = left.total - (left.sizes.get(p.path) ?? 0) + bytes;
    if (total > WRITE_TOTAL_LIMIT) {
      return fail(
        `writing ${p.path} would leave ${total} bytes written by write_file in this world, ` +
          `over the limit of ${WRITE_TOTAL_LIMIT}`,
      );
    }
    await world.files.write(p.path, args.content);
    left.sizes.set(p.path, bytes);
    left.total = total;
    written.set(world.files, left);
    return ok(`Wrote ${args.content.length} characters to ${p.path}`);
  },
};

export const FILE_TOOLS: readonly WorldTool[] = [listFiles, readFile, writeFile];
