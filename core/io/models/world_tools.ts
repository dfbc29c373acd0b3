/**
 * The world's tools for the agent loop: list_files, read_file and (profile "developer"
 * only) write_file, limited to the attempt's writable directories. A tool that fails tells
 * the model why in its result; it never ends the attempt.
 */
import type { WorldFiles } from "../../bench/candidate.ts";
import type { ToolCall, ToolResult, ToolSpec } from "./types.ts";

/** Bump when a tool's name, description, arguments or behaviour changes (it is in identities). */
export const WORLD_TOOLS_VERSION = 1;
export const WORLD_TOOL_NAMES = ["list_files", "read_file", "write_file"] as const;
export const WRITING_PROFILE = "developer";

/** Characters of a file read_file returns; the rest is cut with a note. */
export const READ_LIMIT = 60_000;
/** Paths list_files returns. */
export const LIST_LIMIT = 1_000;
/** Characters write_file accepts. */
export const WRITE_LIMIT = 1_000_000;

export interface ToolWorld {
  world: WorldFiles;
  profile: string;
  writable: string[];
}

/** The tool set for a profile: read-only unless the profile is "developer". */
export function worldTools(profile: string, writable: string[]): ToolSpec[] {
  const tools: ToolSpec[] = [
    {
      name: "list_files",
      description:
        "List the files under a directory of the world, recursively, one absolute path per line " +
        '(e.g. "/docs/case.edn").',
      parameters: {
        type: "object",
        properties: {
          dir: { type: "string", description: 'An absolute world path, e.g. "/" or "/docs".' },
        },
        required: ["dir"],
      },
    },
    {
      name: "read_file",
      description:
        `Read a text file of the world by its absolute path. Text past ${READ_LIMIT} characters is cut.`,
      parameters: {
        type: "object",
        properties: {
          path: { type: "string", description: 'An absolute world path, e.g. "/docs/case.edn".' },
        },
        required: ["path"],
      },
    },
  ];
  if (profile === WRITING_PROFILE) {
    const dirs = writable.map(dirOf);
    tools.push({
      name: "write_file",
      description:
        "Write a text file (creating its directories), replacing any file at that path. " +
        (dirs.length > 0
          ? `Only paths under ${dirs.join(", ")} may be written.`
          : "No path may be written here."),
      parameters: {
        type: "object",
        properties: {
          path: { type: "string", description: 'An absolute world path, e.g. "/out/answer.edn".' },
          content: { type: "string", description: "The whole text of the file." },
        },
        required: ["path", "content"],
      },
    });
  }
  return tools;
}

function dirOf(w: string): string {
  const d = "/" + w.replace(/^\/+|\/+$/g, "");
  return d === "/" ? "/" : d + "/";
}

/** A model-given path as a world path, or the reason it is refused. */
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

function str(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Runs one tool call against the world; failures come back as error results. */
export async function runWorldTool(call: ToolCall, tw: ToolWorld): Promise<ToolResult> {
  const done = (content: string, isError = false): ToolResult => ({
    callId: call.id,
    name: call.name,
    content,
    isError,
  });
  const tools = worldTools(tw.profile, tw.writable).map((t) => t.name);
  if (!tools.includes(call.name)) {
    const why = call.name === "write_file"
      ? `the profile ${JSON.stringify(tw.profile)} is read-only`
      : `there is no tool ${JSON.stringify(call.name)}`;
    return done(`Error: ${why}. Tools: ${tools.join(", ")}`, true);
  }
  if (call.args === null) return done(`Error: ${call.argsProblem ?? "no arguments"}`, true);
  const a = call.args;
  try {
    switch (call.name) {
      case "list_files": {
        const dir = worldPath(a.dir ?? "/", "dir");
        if ("problem" in dir) return done(`Error: ${dir.problem}`, true);
        const paths = await tw.world.list(dir.path);
        if (paths.length === 0) return done(`(no files under ${dir.path})`);
        const shown = paths.slice(0, LIST_LIMIT).join("\n");
        return done(
          paths.length > LIST_LIMIT
            ? `${shown}\n[… ${paths.length - LIST_LIMIT} more paths not shown]`
            : shown,
        );
      }
      case "read_file": {
        const p = worldPath(a.path, "path");
        if ("problem" in p) return done(`Error: ${p.problem}`, true);
        const text = await tw.world.read(p.path);
        return done(
          text.length > READ_LIMIT
            ? `${
              text.slice(0, READ_LIMIT)
            }\n[… cut: the file has ${text.length} characters, ${READ_LIMIT} shown]`
            : text,
        );
      }
      case "write_file": {
        const p = worldPath(a.path, "path");
        if ("problem" in p) return done(`Error: ${p.problem}`, true);
        if (typeof a.content !== "string") {
          return done("Error: content must be a string (the whole text of the file)", true);
        }
        const dirs = tw.writable.map(dirOf);
        if (!dirs.some((d) => d === "/" || p.path.startsWith(d))) {
          return done(
            `Error: ${p.path} may not be written; only paths under ${dirs.join(", ") || "(none)"}`,
            true,
          );
        }
        if (a.content.length > WRITE_LIMIT) {
          return done(
            `Error: content has ${a.content.length} characters, over the limit of ${WRITE_LIMIT}`,
            true,
          );
        }
        await tw.world.write(p.path, a.content);
        return done(`Wrote ${a.content.length} characters to ${p.path}`);
      }
    }
  } catch (e) {
    return done(`Error: ${str(e)}`, true);
  }
  return done(`Error: there is no tool ${JSON.stringify(call.name)}`, true);
}
