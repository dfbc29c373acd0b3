/**
 * A home whose records and blobs are in a PostgreSQL store shared by many machines
 * (`--store postgres://…`), with the experiment queue workers pull from; its blobs in an
 * S3-compatible object store instead when one is given (`--blobs s3://…`); its rooms (git),
 * attempt worlds and named candidates stay in a directory of this machine, as the embedded
 * home's do. Opening it migrates the store's schema (and checks the bucket, when there is
 * one). Permissions: as the embedded home's, and --allow-net to the server (and endpoint).
 */
import { join, resolve } from "node:path";
import type { Home } from "../../../core/ports/home.ts";
import { gitRoomStore } from "../../rooms/git/room_store.ts";
import { type ConnectOptions, connectPostgres, redactUrl } from "./connect.ts";
import { migrate } from "./migrations.ts";
import { postgresQueue } from "./queue.ts";
import { postgresStateStore } from "./state_store.ts";
import { objectStoreUnavailable, s3BlobStore } from "../s3/blob_store.ts";
import type { S3Target } from "../s3/target.ts";
import type { Sql } from "./connect.ts";
import { usageError } from "../../../core/errors.ts";

export interface PostgresHomeOptions extends ConnectOptions {
  /** The bucket (and prefix) the blobs go to instead of the database. */
  blobs?: S3Target | null;
}

/** A bucket as the store records it: s3://BUCKET[/PREFIX] (endpoints differ by machine). */
const bucketOf = (t: S3Target) => `s3://${t.bucket}${t.prefix === "" ? "" : `/${t.prefix}`}`;

/**
 * Checks the bucket given is the one the store keeps its blobs in, recording it when the
 * store has none yet: a command without --blobs, or with another bucket, on a store whose
 * blobs are in a bucket would write blobs where the others do not read them.
 */
async function checkBlobsPlace(sql: Sql, url: string, blobs: S3Target | null): Promise<void> {
  const given = blobs === null ? null : bucketOf(blobs);
  if (given !== null) {
    await sql`insert into dvergr_settings (name, value) values ('blobs', ${given})
      on conflict (name) do nothing`;
  }
  const rows = await sql`select value from dvergr_settings where name = 'blobs'`;
  const kept = rows.length === 0 ? null : String(rows[0].value);
  if (kept === given) return;
  throw usageError(
    given === null
      ? `The store ${
        redactUrl(url)
      } keeps its blobs in ${kept}: give --blobs ${kept} (or set DVERGR_BLOBS)`
      : `The store ${redactUrl(url)} keeps its blobs in ${kept}, not ${given}`,
    `Give --blobs ${kept} with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_REGION, AWS_ENDPOINT_URL_S3) set`,
  );
}

/**
 * Opens the store at `url` as a home; `dir` holds this machine's rooms and worlds (created
 * only when something is written there).
 */
export async function openPostgresHome(
  dir: string,
  url: string,
  opts: PostgresHomeOptions = {},
): Promise<Home> {
  const objects = opts.blobs ? s3BlobStore(opts.blobs) : null;
  // A wrong bucket or credential fails here, before anything is planned or run.
  await objects?.checkBucket();
  const sql = await connectPostgres(url, opts);
  try {
    await migrate(sql);
    await checkBlobsPlace(sql, url, opts.blobs ?? null);
  } catch (e) {
    await sql.end({ timeout: 1 });
    throw e;
  }
  const abs = resolve(dir);
  const state = postgresStateStore(sql, Date.now, objects);
  const queue = postgresQueue(sql);
  const worlds = join(abs, "worlds", `p${Deno.pid}`);
  return {
    dir: abs,
    state,
    rooms: gitRoomStore(join(abs, "rooms")),
    blobs: state.blobs,
    worldsDir: worlds,
    candidatesFile: join(abs, "candidates.edn"),
    queue: {
      ...queue,
      // An object store out of reach is waited for as the database is.
      unavailable: (e) => queue.unavailable(e) || objectStoreUnavailable(e),
    },
    where: redactUrl(url),
    async close() {
      await Deno.remove(worlds, { recursive: true }).catch(() => {});
      await sql.end({ timeout: 5 });
    },
  };
}
