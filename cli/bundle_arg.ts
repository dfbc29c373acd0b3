import { join } from "../core/path.ts";
import { resolve } from "../adapters/files/resolve.ts";
import { DvergrError, usageError } from "../core/errors.ts";
import type { FileBundle } from "../core/bundle/file_map.ts";
import { readBundleDir } from "../adapters/files/bundle_dir.ts";
import type { CliContext } from "./context.ts";
import { type OptionSpec, parseCommandArgs } from "./args.ts";
import { isDir, pathExists } from "../adapters/files/fs.ts";
import { importLater } from "./import_later.ts";

/** Where a bundle argument was read from. */
export type BundleSource =
  | { kind: "dir"; dir: string }
  | { kind: "room"; room: string; name: string; home: string };

export interface BundleArg extends FileBundle {
  source: BundleSource;
}

const ROOM_NAME = /^([a-z0-9][a-z0-9-]{0,63})\/([a-z0-9][a-z0-9-]*)\/?$/;

/** `ROOM/NAME` split, or null when the argument does not have that form. */
export function parseRoomName(arg: string): { room: string; name: string } | null {
  const m = ROOM_NAME.exec(arg);
  return m ? { room: m[1], name: m[2] } : null;
}

/**
 * Reads the bundle a command names: an existing directory is a bundle directory; otherwise
 * `ROOM/NAME` is `workflows/NAME/` of room ROOM in the home (`--home DIR`, else
 * `$DVERGR_HOME`, else `.dvergr` in the working directory).
 */
export async function readBundleArg(
  command: string,
  arg: string | undefined,
  opts: { home?: string; ctx?: Pick<CliContext, "env" | "cwd"> } = {},
): Promise<BundleArg> {
  if (!arg) {
    throw usageError(
      `"dvergr ${command}" needs a bundle`,
      `Run \`dvergr ${command} path/to/bundle\` (a directory holding workflow.edn), or \`dvergr ${command} ROOM/NAME\` for a bundle in a room`,
    );
  }
  const ctx = opts.ctx ?? { env: (n: string) => Deno.env.get(n), cwd: Deno.cwd() };
  const path = resolve(ctx.cwd, arg);
  const ref = parseRoomName(arg);
  if (!ref || await pathExists(path)) {
    // As given when it means the same here, so messages quote what the user typed.
    const fb = await readBundleDir(resolve(arg) === path ? arg : path);
    return { ...fb, source: { kind: "dir", dir: path } };
  }
  // A room's bundle: the home's modules load only for it (a directory needs none of them).
  const [{ roomHomeDir }, { gitRoomStore }, { readRoomBundle }] = await Promise.all([
    importLater<typeof import("./home_arg.ts")>("./home_arg.ts", import.meta.url),
    importLater<typeof import("../adapters/rooms/git/room_store.ts")>(
      "../adapters/rooms/git/room_store.ts",
      import.meta.url,
    ),
    importLater<typeof import("../core/ops/room_bundles.ts")>(
      "../core/ops/room_bundles.ts",
      import.meta.url,
    ),
  ]);
  const home = roomHomeDir(opts.home, ctx);
  const rooms = gitRoomStore(join(home, "rooms"));
  if (!(await isDir(home)) || !(await rooms.hasRoom(ref.room))) {
    throw new DvergrError(
      "NOT_FOUND",
      `Cannot read bundle "${arg}": there is no directory ${arg}, and the home ${home} has no room ${ref.room}`,
      {
        hint:
          `Give a bundle directory, or name a room's bundle as ROOM/NAME with --home DIR (or DVERGR_HOME); list them with \`dvergr list --home DIR\``,
        details: { bundle: arg, home, room: ref.room },
      },
    );
  }
  const fb = await readRoomBundle(rooms, ref.room, ref.name);
  return { ...fb, source: { kind: "room", room: ref.room, name: ref.name, home } };
}

/**
 * The arguments of a command on one bundle: its flags, and at most one bundle argument
 * (more is a usage error with `hint`).
 */
export function parseBundleCommand<O extends OptionSpec>(
  command: string,
  args: string[],
  options: O,
  hint = `Run it once per bundle: dvergr ${command} path/to/bundle (quote a path with spaces)`,
) {
  const { values, positionals } = parseCommandArgs(command, args, options);
  if (positionals.length > 1) {
    throw usageError(
      `"dvergr ${command}" takes one bundle, got ${positionals.length}: ${positionals.join(" ")}`,
      hint,
    );
  }
  return { values, positionals };
}
