import { usageError } from "../core/errors.ts";
import type { FileBundle } from "../core/bundle/file_map.ts";
import { readBundleDir } from "../core/io/bundle_dir.ts";

/**
 * Reads the bundle a command names. A path to a bundle directory today; `ROOM/NAME`
 * with --home arrives with rooms.
 */
export async function readBundleArg(command: string, arg: string | undefined): Promise<FileBundle> {
  if (!arg) {
    throw usageError(
      `"dvergr ${command}" needs a bundle`,
      `Run \`dvergr ${command} path/to/bundle\` (a directory holding workflow.edn)`,
    );
  }
  return await readBundleDir(arg);
}
