import { Buffer } from "node:buffer";
import { INPUT_LIMITS, readInputFile } from "../adapters/files/input_file.ts";
import { resolve } from "node:path";
import { parseCommandArgs, rangeFlag } from "./args.ts";
import type { CliContext } from "./context.ts";
import { HOME_HELP, roomHomeDir, withOpContext } from "./home_arg.ts";
import { printJson } from "./render.ts";
import { usageError } from "../core/errors.ts";
import { callOp } from "../core/ops/registry.ts";
import {
  roomCreate,
  roomFiles,
  roomList,
  roomLog,
  roomRead,
  roomWrite,
} from "../core/ops/rooms.ts";
import { readBundleDir } from "../adapters/files/bundle_dir.ts";

export const HELP = `dvergr room <create|list|files|read|write|log> [ROOM] [PATH] [options]

Rooms are git repositories in the home: every write is one commit and history is kept.
Bundles live in a room as workflows/<name>/ (see \`dvergr list\`, \`dvergr import\`).

  dvergr room create ROOM                  create an empty room (one commit)
  dvergr room list                         every room with its commits and latest commit
  dvergr room files ROOM [PREFIX]          the room's files (only under PREFIX/)
  dvergr room read ROOM PATH               print one file
  dvergr room write ROOM PATH --text T     write one file, as one commit
  dvergr room write ROOM PATH --file F     write one file from a local file
  dvergr room write ROOM PATH --delete     remove one file (history keeps it)
  dvergr room write ROOM PREFIX --dir D    write every file of directory D under PREFIX/,
                                           as one commit (other files stay as they are)
  dvergr room log ROOM [--limit N]         the room's commits, newest first

Paths are relative (\`..\`, absolute paths, .git, NUL and backslashes are refused); rooms
hold UTF-8 text files.

Options:
${HOME_HELP}
  --text T        room write: the file's new text
  --file F        room write: a local file with the new content (UTF-8 text)
  --delete        room write: remove PATH
  --dir D         room write: a local directory whose files go under PREFIX/
  --message M     room write: the commit message (default: the paths written)
  --limit N       room log: most commits to show (default 50)
  --base64        room read: print the file's bytes as base64
  --json          print the result as JSON
  -h, --help      show this help

Examples:
  dvergr room create contracts
  dvergr room write contracts workflows/recall --dir ./recall

Exit status: 0 done; 2 bad input (no such room or file, a refused path).
`;

export const OPTIONS = {
  home: { type: "string" },
  text: { type: "string" },
  file: { type: "string" },
  delete: { type: "boolean" },
  dir: { type: "string" },
  message: { type: "string" },
  limit: { type: "string" },
  base64: { type: "boolean" },
  json: { type: "boolean" },
} as const;

const ACTIONS = ["create", "list", "files", "read", "write", "log"] as const;
type Action = typeof ACTIONS[number];

/** Positionals each action takes: [required, optional]. */
const ARITY: Record<Action, [string[], string[]]> = {
  create: [["ROOM"], []],
  list: [[], []],
  files: [["ROOM"], ["PREFIX"]],
  read: [["ROOM", "PATH"], []],
  write: [["ROOM", "PATH"], []],
  log: [["ROOM"], []],
};

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("room", args, OPTIONS);
  return { values, positionals };
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { values, positionals } = opts;
  const [action, ...rest] = positionals;
  if (!ACTIONS.includes(action as Action)) {
    throw usageError(
      action === undefined
        ? `"dvergr room" needs an action`
        : `Unknown action "dvergr room ${action}"`,
      `Actions: ${ACTIONS.join(", ")}. Run \`dvergr room --help\``,
    );
  }
  const act = action as Action;
  const [required, optional] = ARITY[act];
  if (rest.length < required.length || rest.length > required.length + optional.length) {
    const usage = [...required, ...optional.map((o) => `[${o}]`)].join(" ");
    throw usageError(
      `"dvergr room ${act}" takes ${usage || "no arguments"}, got ${
        rest.length ? rest.map((r) => JSON.stringify(r)).join(" ") : "none"
      }`,
      "Run `dvergr room --help`",
    );
  }
  const home = roomHomeDir(values.home, ctx);
  const out = (s: string) => ctx.stdout(s + "\n");

  switch (act) {
    case "create":
      return await withOpContext(ctx, home, { create: true }, async (op) => {
        const r = await callOp(roomCreate, op, { room: rest[0] });
        if (values.json) printJson(ctx, roomCreate.output, r);
        else {
          out(
            r.created
              ? `Created room ${r.room} in ${home} (commit ${short(r.head.id)})`
              : `Room ${r.room} already exists in ${home}; left as it is`,
          );
        }
        return 0;
      });
    case "list":
      return await withOpContext(ctx, home, {}, async (op) => {
        const r = await callOp(roomList, op, {});
        if (values.json) printJson(ctx, roomList.output, r);
        else if (r.rooms.length === 0) out(`No rooms in ${home}`);
        else {
          const w = Math.max(...r.rooms.map((x) => x.room.length));
          for (const x of r.rooms) {
            out(
              `${x.room.padEnd(w)}  ${String(x.commits).padStart(4)} commit${
                x.commits === 1 ? " " : "s"
              }  ${x.head.at}  ${x.head.message}`,
            );
          }
        }
        return 0;
      });
    case "files":
      return await withOpContext(ctx, home, {}, async (op) => {
        const r = await callOp(roomFiles, op, {
          room: rest[0],
          ...(rest[1] !== undefined ? { prefix: rest[1] } : {}),
        });
        if (values.json) printJson(ctx, roomFiles.output, r);
        else {
          for (const f of r.files) out(`${String(f.bytes).padStart(9)}  ${f.path}`);
          out(`${r.count} file${r.count === 1 ? "" : "s"}${r.prefix ? ` under ${r.prefix}/` : ""}`);
        }
        return 0;
      });
    case "read":
      return await withOpContext(ctx, home, {}, async (op) => {
        const r = await callOp(roomRead, op, {
          room: rest[0],
          path: rest[1],
          encoding: values.base64 ? "base64" : "text",
        });
        if (values.json) printJson(ctx, roomRead.output, r);
        else ctx.raw.stdout(values.base64 ? r.content + "\n" : r.content); // as `cat` would
        return 0;
      });
    case "log":
      return await withOpContext(ctx, home, {}, async (op) => {
        const limit = rangeFlag("room", "limit", values.limit, "logLimit");
        const r = await callOp(roomLog, op, {
          room: rest[0],
          ...(limit !== undefined ? { limit } : {}),
        });
        if (values.json) printJson(ctx, roomLog.output, r);
        else {
          for (const c of r.commits) out(`${short(c.id)}  ${c.at}  ${c.message}`);
          if (r.total > r.commits.length) {
            out(`… ${r.total - r.commits.length} older (--limit ${r.total} shows all)`);
          }
        }
        return 0;
      });
    case "write": {
      const [room, path] = rest;
      const { files, encoding } = await writeContent(ctx, path, values);
      return await withOpContext(ctx, home, {}, async (op) => {
        const r = await callOp(roomWrite, op, {
          room,
          files,
          encoding,
          ...(values.message !== undefined ? { message: values.message } : {}),
        });
        if (values.json) printJson(ctx, roomWrite.output, r);
        else if (!r.changed) out(`Room ${room} already holds this; no commit`);
        else {
          const parts = [
            r.written.length ? `wrote ${count(r.written.length, "file")}` : "",
            r.deleted.length ? `removed ${count(r.deleted.length, "file")}` : "",
          ].filter(Boolean).join(", ");
          out(`Room ${room}: ${parts} (commit ${short(r.commit)})`);
        }
        return 0;
      });
    }
  }
}

/** The files map of `room write` from its one source flag. */
async function writeContent(
  ctx: CliContext,
  path: string,
  values: { text?: string; file?: string; delete?: boolean; dir?: string },
): Promise<{ files: Record<string, string | null>; encoding: "text" | "base64" }> {
  const given = (["text", "file", "delete", "dir"] as const).filter((k) => values[k] !== undefined);
  if (given.length !== 1) {
    throw usageError(
      `"dvergr room write" needs exactly one of --text, --file, --delete or --dir${
        given.length ? `, got ${given.map((g) => `--${g}`).join(" and ")}` : ""
      }`,
      "Run `dvergr room --help`",
    );
  }
  if (values.text !== undefined) return { files: { [path]: values.text }, encoding: "text" };
  if (values.delete) return { files: { [path]: null }, encoding: "text" };
  if (values.file !== undefined) {
    const file = resolve(ctx.cwd, values.file);
    const bytes = await readInputFile(file, {
      shown: values.file,
      what: "--file",
      maxBytes: INPUT_LIMITS.text,
      hint: "Give the path of a local file with --file",
    });
    // As base64, so the op checks that the bytes are UTF-8 text.
    return { files: { [path]: Buffer.from(bytes).toString("base64") }, encoding: "base64" };
  }
  const { files } = await readBundleDir(resolve(ctx.cwd, values.dir!));
  if (files.size === 0) {
    throw usageError(
      `Cannot write directory "${values.dir}": it has no files`,
      "Give a directory that holds the files to write",
    );
  }
  const prefix = path.replace(/\/+$/, "");
  const out: Record<string, string> = {};
  for (const [p, t] of files) out[`${prefix}/${p}`] = t;
  return { files: out, encoding: "text" };
}

function short(id: string): string {
  return id.slice(0, 10);
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
