/**
 * Room ops: create and list rooms, read their history (toolset "rooms"), and list, read
 * and write their files (toolset "files"). A room is a git repository in the home; a
 * write is one commit of exactly the given paths, and history is kept.
 */
import { Buffer } from "node:buffer";
import { z } from "zod";
import { DvergrError } from "../errors.ts";
import { defineOp, type Op } from "./op.ts";
import { fileInTheWay, roomPathProblem } from "./room_bundles.ts";
import type { CommitInfo, RoomStore } from "../ports/room_store.ts";
import { listPageFields, pageList, pageParams, pageText, textPageFields } from "./paging.ts";
import { defineFormat, fields } from "../json_format.ts";

const commitShape = z.object({
  id: z.string().describe("The commit's id (git)"),
  message: z.string(),
  at: fields.time,
});

const ROOM_CREATE_FORMAT = defineFormat(
  "room-create",
  1,
  "A room made (or found already there) by room_create / `dvergr room create`.",
  z.object({
    room: fields.room,
    title: z.string().optional(),
    created: z.boolean().describe("false: the room was there already and is left as it is"),
    head: commitShape,
  }),
);
const ROOM_LIST_FORMAT = defineFormat(
  "room-list",
  1,
  "The rooms of a home with their commits (room_list / `dvergr room list`).",
  z.object({
    rooms: z.array(z.object({ room: fields.room, commits: z.number().int(), head: commitShape })),
  }),
);
const ROOM_LOG_FORMAT = defineFormat(
  "room-log",
  1,
  "A page of a room's commits, newest first (room_log / `dvergr room log`).",
  z.object({ room: fields.room, ...listPageFields, commits: z.array(commitShape) }),
);
const ROOM_FILES_FORMAT = defineFormat(
  "room-files",
  1,
  "A page of a room's files with their sizes (room_files / `dvergr room files`).",
  z.object({
    room: fields.room,
    prefix: z.string().nullable(),
    count: z.number().int().describe("Files under the prefix in all"),
    offset: listPageFields.offset,
    nextOffset: listPageFields.nextOffset,
    note: listPageFields.note,
    files: z.array(z.object({ path: z.string(), bytes: z.number().int() })),
  }),
);
const ROOM_READ_FORMAT = defineFormat(
  "room-read",
  1,
  "A page of one room file's text or base64 (room_read / `dvergr room read --json`).",
  z.object({
    room: fields.room,
    path: z.string(),
    bytes: z.number().int().describe("The whole file's size in UTF-8 bytes"),
    encoding: z.enum(["text", "base64"]),
    ...textPageFields,
    content: z.string(),
  }),
);
const ROOM_WRITE_FORMAT = defineFormat(
  "room-write",
  1,
  "What one room_write / `dvergr room write` committed.",
  z.object({
    room: fields.room,
    commit: z.string().describe("The room's head after the write"),
    changed: z.boolean().describe("false: the room held this already; no commit"),
    written: z.array(z.string()),
    deleted: z.array(z.string()),
  }),
);

const room = z.string().describe("Room slug: lowercase letters, digits and dashes, e.g. `books`");

/** A commit as ops return it. */
export interface CommitView {
  id: string;
  message: string;
  at: string;
}

function commitView(c: CommitInfo): CommitView {
  return { id: c.id, message: c.message, at: c.at };
}

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

function pathError(path: string, why: string): DvergrError {
  return new DvergrError(
    "PATH_INVALID",
    `Cannot use room path ${JSON.stringify(path)}: it ${why}`,
    {
      hint:
        "Room paths are relative POSIX paths such as `workflows/x/workflow.edn` or `tables/q3.csv`",
      details: { path },
    },
  );
}

/** Refuses a path that may not be written to or read from a room. */
export function checkRoomPath(path: string): void {
  const why = roomPathProblem(path);
  if (why) throw pathError(path, why);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The UTF-8 text of base64 content; rooms hold text, so other bytes are refused. */
export function decodeBase64Text(path: string, b64: string): string {
  const clean = b64.replace(/\s+/g, "");
  if (clean.length % 4 !== 0 || !BASE64.test(clean)) {
    throw new DvergrError(
      "USAGE",
      `Cannot write ${JSON.stringify(path)}: its content is not valid base64`,
      { hint: 'Send base64 text (RFC 4648), or pass encoding "text"', details: { path } },
    );
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(clean, "base64"));
  } catch {
    throw new DvergrError(
      "USAGE",
      `Cannot write ${
        JSON.stringify(path)
      }: its bytes are not UTF-8 text, and rooms hold text files`,
      {
        hint: "Convert it to UTF-8 first (e.g. iconv -f WINDOWS-1252 -t UTF-8)",
        details: { path },
      },
    );
  }
}

async function headOf(
  ctx: { home: { rooms: { log(s: string): Promise<CommitInfo[]> } } },
  slug: string,
) {
  return (await ctx.home.rooms.log(slug))[0];
}

/** A slug from a title: lowercase letters and digits, other runs become one dash. */
export function slugOf(title: string): string {
  const slug = title.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
    .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 64).replace(/-+$/, "");
  if (slug === "") {
    throw new DvergrError(
      "USAGE",
      `Cannot derive a room slug from the title ${
        JSON.stringify(title)
      }: it has no letters or digits`,
      { hint: 'Give a slug as well, e.g. {title, slug: "books"}' },
    );
  }
  return slug;
}

export const roomCreate = defineOp({
  name: "room_create",
  title: "Create a room",
  description:
    "Creates an empty room (a git repository in the home, one initial commit): {title, slug?} (the slug is derived from the title when absent) or {room}. Idempotent: an existing room is left as it is and reported with created=false.",
  kind: "write",
  toolset: "rooms",
  idempotent: true,
  roomScoped: true,
  input: z.strictObject({
    room: room.optional(),
    title: z.string().min(1).max(200).optional().describe(
      'What the room is for, e.g. "Books"; its slug is derived from it unless given',
    ),
    slug: z.string().optional().describe("The room's slug (same as `room`)"),
  }),
  output: ROOM_CREATE_FORMAT,
  async handler(ctx, input) {
    if (input.room !== undefined && input.slug !== undefined && input.room !== input.slug) {
      throw new DvergrError(
        "USAGE",
        `Cannot create a room named both "${input.room}" (room) and "${input.slug}" (slug)`,
        { hint: "Give one of room and slug" },
      );
    }
    const given = input.room ?? input.slug;
    if (given === undefined && input.title === undefined) {
      throw new DvergrError("USAGE", "Cannot create a room without a title or a slug", {
        hint: 'Call room_create {title: "Books"} or {title: "Books", slug: "books"}',
      });
    }
    const slug = given ?? slugOf(input.title!);
    const created = await ctx.home.rooms.createRoom(slug);
    return {
      room: slug,
      ...(input.title !== undefined ? { title: input.title } : {}),
      created,
      head: commitView(await headOf(ctx, slug)),
    };
  },
});

export const roomList = defineOp({
  name: "room_list",
  title: "List rooms",
  description:
    "Lists every room of the home, sorted, with its number of commits and its latest commit.",
  kind: "read",
  toolset: "rooms",
  idempotent: true,
  input: z.strictObject({}),
  output: ROOM_LIST_FORMAT,
  async handler(ctx) {
    const slugs = await ctx.home.rooms.listRooms();
    const rooms = [];
    for (const slug of slugs) {
      const log = await ctx.home.rooms.log(slug);
      rooms.push({ room: slug, commits: log.length, head: commitView(log[0]) });
    }
    return { rooms };
  },
});

export const roomLog = defineOp({
  name: "room_log",
  title: "A room's history",
  description:
    "The commits of a room, newest first (at most `limit`, default 50, from `offset`): id, message and time. Every room_write and every import is one commit.",
  kind: "read",
  toolset: "rooms",
  idempotent: true,
  roomScoped: true,
  input: z.strictObject({
    room,
    ...pageParams("commit", 10_000, 50),
  }),
  output: ROOM_LOG_FORMAT,
  async handler(ctx, input) {
    const log = await ctx.home.rooms.log(input.room);
    const page = pageList(log, input.offset ?? 0, input.limit ?? 50, "room_log with offset");
    const { items, ...rest } = page;
    return { room: input.room, ...rest, commits: items.map(commitView) };
  },
});

export const roomFiles = defineOp({
  name: "room_files",
  title: "List a room's files",
  description:
    "Lists the files of a room's workspace at its latest commit (only those under `prefix/` when given), sorted, with their size in bytes: at most `limit` (default 500) from `offset`.",
  kind: "read",
  toolset: "files",
  idempotent: true,
  roomScoped: true,
  input: z.strictObject({
    room,
    prefix: z.string().optional().describe("A directory such as `workflows/recall`"),
    ...pageParams("file", 1000, 500),
  }),
  output: ROOM_FILES_FORMAT,
  async handler(ctx, input) {
    const prefix = input.prefix?.replace(/\/+$/, "") || undefined;
    if (prefix !== undefined) checkRoomPath(prefix);
    const files = await ctx.home.rooms.readFiles(input.room, prefix);
    const { items, total, ...rest } = pageList(
      [...files],
      input.offset ?? 0,
      input.limit ?? 500,
      "room_files with offset",
    );
    return {
      room: input.room,
      prefix: prefix ?? null,
      count: total,
      ...rest,
      files: items.map(([path, text]) => ({ path, bytes: utf8Bytes(text) })),
    };
  },
});

export const roomRead = defineOp({
  name: "room_read",
  title: "Read a room file",
  description:
    'Reads one file of a room at its latest commit: its text (encoding "text", the default) or its UTF-8 bytes as base64 (encoding "base64"), a page of at most 40,000 characters from `offset`; a longer file\'s result says the offset of the next page (`nextOffset`).',
  kind: "read",
  toolset: "files",
  idempotent: true,
  roomScoped: true,
  input: z.strictObject({
    room,
    path: z.string().describe("Relative path, e.g. `workflows/recall/workflow.edn`"),
    encoding: z.enum(["text", "base64"]).optional().describe('"text" (default) or "base64"'),
    ...pageParams("character", 40_000, 40_000),
  }),
  output: ROOM_READ_FORMAT,
  async handler(ctx, input) {
    checkRoomPath(input.path);
    const slash = input.path.lastIndexOf("/");
    const parent = slash < 0 ? undefined : input.path.slice(0, slash);
    const text = (await ctx.home.rooms.readFiles(input.room, parent)).get(input.path);
    if (text === undefined) {
      const files = await ctx.home.rooms.readFiles(input.room, input.path);
      throw new DvergrError(
        "NOT_FOUND",
        `Cannot read ${JSON.stringify(input.path)} in room ${input.room}: ${
          files.size > 0 ? `it is a directory of ${files.size} files` : "no such file"
        }`,
        {
          hint: files.size > 0
            ? `List them with room_files (dvergr room files ${input.room} ${input.path})`
            : `List the room's files with room_files (dvergr room files ${input.room})`,
          details: { room: input.room, path: input.path },
        },
      );
    }
    const encoding = input.encoding ?? "text";
    const whole = encoding === "base64" ? Buffer.from(text, "utf8").toString("base64") : text;
    const page = pageText(whole, input.offset ?? 0, input.limit, "room_read with offset");
    // A base64 page ends on a whole group of 4, so each page decodes on its own.
    if (encoding === "base64" && page.nextOffset !== null) {
      const keep = page.text.length - (page.text.length % 4);
      if (keep > 0) {
        Object.assign(
          page,
          pageText(whole, page.offset, keep, "room_read with offset"),
        );
      }
    }
    const { text: content, ...rest } = page;
    return {
      room: input.room,
      path: input.path,
      bytes: utf8Bytes(text),
      encoding,
      ...rest,
      content,
    };
  },
});

/**
 * A file's new content as room_write takes it: `{text}`, `{base64}`, a plain string (read
 * as `encoding` says) or null. Declared loosely for the tool schema (a closed schema allows
 * no oneOf), and checked by contentOf.
 */
const fileValue = z.unknown().meta({
  type: ["object", "string", "null"],
  description: '{"text": "…"}, {"base64": "…"}, a plain string, or null (removes the path)',
});

/** The text a room_write value gives a path, or null to remove it; anything else is refused. */
export function contentOf(
  path: string,
  value: unknown,
  encoding: "text" | "base64" | undefined,
): string | null {
  if (value === null) return null;
  if (typeof value === "string") {
    return encoding === "base64" ? decodeBase64Text(path, value) : value;
  }
  if (typeof value === "object" && !Array.isArray(value)) {
    const keys = Object.keys(value as object);
    const v = value as Record<string, unknown>;
    if (keys.length === 1 && typeof v.text === "string") return v.text;
    if (keys.length === 1 && typeof v.base64 === "string") return decodeBase64Text(path, v.base64);
  }
  throw new DvergrError(
    "USAGE",
    `Cannot write ${JSON.stringify(path)}: its value is ${
      JSON.stringify(value)?.slice(0, 80)
    }, not {"text": string}, {"base64": string}, a string or null`,
    {
      hint: 'Give each path {"text": "…"}, {"base64": "…"} or null (removes it)',
      details: { path },
    },
  );
}

export const roomWrite = defineOp({
  name: "room_write",
  title: "Write room files",
  description:
    'Writes exactly the given paths of a room as one commit: each value is the file\'s new content as {"text": …} or {"base64": …} (base64 of UTF-8 text), or a plain string (text, or base64 with encoding "base64"); null removes the path. Other files stay as they are; history is kept. Paths are relative; `..`, absolute paths, `.git` (and names file systems take for it, such as `.git.` or `git~1`), NUL and backslashes are refused, and so is a write that would make a path both a file and a directory (remove the file with null in the same call). No commit when nothing changes.',
  kind: "write",
  toolset: "files",
  roomScoped: true,
  input: z.strictObject({
    room,
    files: z.record(z.string(), fileValue).describe(
      'Path → {"text": content}, {"base64": content}, a plain string, or null to remove the path',
    ),
    encoding: z.enum(["text", "base64"]).optional().describe(
      'How the contents are given: "text" (default) or "base64"',
    ),
    message: z.string().optional().describe("Commit message (default: the paths written)"),
  }),
  output: ROOM_WRITE_FORMAT,
  async handler(ctx, input) {
    const entries = Object.entries(input.files);
    if (entries.length === 0) {
      throw new DvergrError("USAGE", `Cannot write to room ${input.room}: no files given`, {
        hint: 'Pass files as {"path": "content"}, with null to remove a path',
      });
    }
    const changes = new Map<string, string | null>();
    for (const [path, value] of entries) {
      checkRoomPath(path);
      const text = contentOf(path, value, input.encoding);
      if (text !== null && !text.isWellFormed()) {
        throw new DvergrError(
          "USAGE",
          `Cannot write ${
            JSON.stringify(path)
          }: its text is not UTF-8 (it holds an unpaired surrogate), and rooms hold UTF-8 text`,
          {
            hint: "Send whole characters: a surrogate pair, or the text as base64 of UTF-8",
            details: { path },
          },
        );
      }
      changes.set(path, text);
    }
    await checkNoClobber(ctx.home.rooms, input.room, changes);
    const written = [...changes].filter(([, c]) => c !== null).map(([p]) => p).sort();
    const deleted = [...changes].filter(([, c]) => c === null).map(([p]) => p).sort();
    const before = (await headOf(ctx, input.room)).id;
    const message = input.message?.trim() || defaultMessage(written, deleted);
    const commit = await ctx.home.rooms.writeFiles(input.room, changes, message);
    return { room: input.room, commit, changed: commit !== before, written, deleted };
  },
});

/**
 * Refuses a write that would silently remove files: a file where a directory is (its files
 * would go), or a path below a file (the file would go), unless the same write removes them.
 */
async function checkNoClobber(
  rooms: RoomStore,
  room: string,
  changes: Map<string, string | null>,
): Promise<void> {
  const removed = (p: string) => changes.has(p) && changes.get(p) === null;
  const parents = new Set<string>();
  for (const [path, text] of changes) {
    if (text === null) continue;
    const below = [...(await rooms.readFiles(room, path)).keys()].filter((p) => !removed(p));
    if (below.length > 0) {
      throw pathError(
        path,
        `is a directory of ${below.length} files, which writing a file there would remove`,
      );
    }
    const slash = path.lastIndexOf("/");
    if (slash > 0) parents.add(path.slice(0, slash));
  }
  for (const dir of parents) {
    const blocker = await fileInTheWay(rooms, room, dir);
    if (blocker !== null && !removed(blocker)) {
      const path = [...changes.keys()].find((p) => p.startsWith(blocker + "/"))!;
      throw pathError(
        path,
        `goes below ${blocker}, and ${blocker} is a file (writing it would remove that file)`,
      );
    }
  }
}

function defaultMessage(written: string[], deleted: string[]): string {
  const part = (verb: string, paths: string[]) =>
    paths.length === 0
      ? []
      : [`${verb} ${paths.length <= 3 ? paths.join(", ") : `${paths.length} files`}`];
  return [...part("Write", written), ...part("Remove", deleted)].join("; ");
}

/** The room ops, in the order tools are listed. */
export const ROOM_OPS: Op[] = [roomCreate, roomList, roomLog, roomFiles, roomRead, roomWrite];
