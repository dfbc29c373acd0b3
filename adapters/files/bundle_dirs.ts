/**
 * Bundles in directories of the file system, as the BundleDirs port.
 *
 * Permissions: --allow-read (and --allow-write to write) on the directories.
 */
import type { BundleDirs } from "../../core/ports/bundle_dirs.ts";
import { readBundleDir } from "./bundle_dir.ts";
import { writeBundleDirOnce } from "./bundle_dir_once.ts";

export const fileBundleDirs: BundleDirs = {
  read: readBundleDir,
  writeOnce: writeBundleDirOnce,
};
