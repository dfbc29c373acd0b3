/**
 * The PostgreSQL server's clock as seen from this process: leases are kept in the server's
 * time, so that workers on machines whose clocks disagree still agree on when a lease runs
 * out. A caller's time (ms since the epoch on its clock, as the lease port takes it) becomes
 * the server's by adding the offset between the two clocks, measured as the server's
 * `clock_timestamp()` against the midpoint of the query's round trip (off by at most half
 * of it), and measured again after REMEASURE_MS of the caller's time (clocks drift; NTP
 * steps them). Times read back are turned into the caller's clock by the same offset.
 *
 * Permissions: --allow-net to the server.
 */
import type { Sql } from "./connect.ts";

/** How long one measurement of the offset is used (on the caller's clock). */
const REMEASURE_MS = 60_000;

export interface ServerClock {
  /** The server's time less this process's clock's, in whole ms. */
  offset(): Promise<number>;
}

/** The offset of `sql`'s server clock from `clock` (this process's, by default). */
export function serverClock(sql: Sql, clock: () => number = Date.now): ServerClock {
  let measured: { at: number; offset: number } | null = null;
  let measuring: Promise<number> | null = null;
  const measure = async (): Promise<number> => {
    const t0 = clock();
    const [row] = await sql`select (extract(epoch from clock_timestamp()) * 1000)::float8 as ms`;
    const t1 = clock();
    const offset = Math.round(Number(row.ms) - (t0 + t1) / 2);
    measured = { at: t1, offset };
    return offset;
  };
  return {
    offset() {
      if (measured !== null && clock() - measured.at < REMEASURE_MS) {
        return Promise.resolve(measured.offset);
      }
      // One measurement for every caller that asks while it runs.
      measuring ??= measure().finally(() => measuring = null);
      return measuring;
    },
  };
}
