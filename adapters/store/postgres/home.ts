/**
 * A home whose records and blobs are in a PostgreSQL store shared by many machines
 * (`--store postgres://…`), with the experiment queue workers pull from; its rooms (git),
 * attempt worlds and named candidates stay in a directory of this machine, as the embedded
 * home's do. Opening it migrates the store's schema. Permissions: as the embedded home's,
 * and --allow-net to the server.
 */
import { join, resolve } from "node:path";
import type { Home } from "../../../core/ports/home.ts";
import { gitRoomStore } from "../../rooms/git/room_store.ts";
import { type ConnectOptions, connectPostgres, redactUrl } from "./connect.ts";
import { migrate } from "./migrations.ts";
import { postgresQueue } from "./queue.ts";
import { postgresStateStore } from "./state_store.ts";

/**
 * Opens the store at `url` as a home; `dir` holds this machine's rooms and worlds (created
 * only when something is written there).
 */
export async function openPostgresHome(
  dir: string,
  url: string,
  opts: ConnectOptions = {},
): Promise<Home> {
  const sql = await connectPostgres(url, opts);
  try {
    await migrate(sql);
  } catch (e) {
    await sql.end({ timeout: 1 });
    throw e;
  }
  const abs = resolve(dir);
  const state = postgresStateStore(sql);
  const worlds = join(abs, "worlds", `p${Deno.pid}`);
  return {
    dir: abs,
    state,
    rooms: gitRoomStore(join(abs, "rooms")),
    blobs: state.blobs,
    worldsDir: worlds,
    candidatesFile: join(abs, "candidates.edn"),
    queue: postgresQueue(sql),
    where: redactUrl(url),
    async close() {
      await Deno.remove(worlds, { recursive: true }).catch(() => {});
      await sql.end({ timeout: 5 });
    },
  };
}
