/**
 * A throwaway PostgreSQL cluster for tests: Debian's server binaries, a data directory in a
 * temporary directory, listening on 127.0.0.1 at a free port only, run by an unprivileged
 * user (the server refuses root: as root the cluster belongs to `postgres`, else `nobody`),
 * fsync off, stopped and removed by `stop()`.
 *
 * Tests that need it call `startPostgres()` once per file and skip when it returns null (no
 * server installed); `DVERGR_REQUIRE_POSTGRES=1` (set by .ci/run) makes that a failure.
 */
import { join } from "node:path";

export interface PgCluster {
  /** A connection URL for the cluster's `postgres` database. */
  url: string;
  port: number;
  /** A fresh, empty database of its own for one test, as a URL. */
  database(): Promise<string>;
  /** Stops the server (fast) and starts it again on the same port and data. */
  restart(): Promise<void>;
  /** Stops the server without removing its data (for "the store is down" tests). */
  halt(): Promise<void>;
  /** Stops the server and removes its data. */
  stop(): Promise<void>;
}

const USER = "dvergr";

/** The newest installed server's bin directory, or null. */
function serverBin(): string | null {
  let versions: string[];
  try {
    versions = [...Deno.readDirSync("/usr/lib/postgresql")].map((e) => e.name);
  } catch {
    return null;
  }
  versions.sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const bin = `/usr/lib/postgresql/${v}/bin`;
    try {
      Deno.statSync(join(bin, "initdb"));
      return bin;
    } catch {
      // Not a server install (client only): try the next.
    }
  }
  return null;
}

/** uid/gid of `name` from /etc/passwd, or null. */
function account(name: string): { uid: number; gid: number } | null {
  for (const line of Deno.readTextFileSync("/etc/passwd").split("\n")) {
    const f = line.split(":");
    if (f[0] === name) return { uid: Number(f[2]), gid: Number(f[3]) };
  }
  return null;
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

async function run(argv: string[], asUser: { uid: number; gid: number } | null): Promise<string> {
  const full = asUser
    ? ["setpriv", `--reuid=${asUser.uid}`, `--regid=${asUser.gid}`, "--clear-groups", ...argv]
    : argv;
  const out = await new Deno.Command(full[0], {
    args: full.slice(1),
    stdout: "piped",
    stderr: "piped",
    env: { LC_ALL: "C", TZ: "UTC" },
    cwd: "/",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${argv.join(" ")} failed: ${text}`);
  return text;
}

/** Starts a cluster, or returns null when no PostgreSQL server is installed. */
export async function startPostgres(): Promise<PgCluster | null> {
  const bin = serverBin();
  if (!bin) {
    if (Deno.env.get("DVERGR_REQUIRE_POSTGRES") === "1") {
      throw new Error("DVERGR_REQUIRE_POSTGRES=1 but no PostgreSQL server is installed");
    }
    return null;
  }
  const asUser = Deno.uid() === 0 ? (account("postgres") ?? account("nobody")) : null;
  const dir = await Deno.makeTempDir({ prefix: "dvergr-pg-" });
  await Deno.chmod(dir, 0o755);
  const data = join(dir, "data");
  await Deno.mkdir(data, { mode: 0o700 });
  if (asUser) await Deno.chown(data, asUser.uid, asUser.gid);
  const log = join(dir, "server.log");
  await Deno.writeTextFile(log, "");
  if (asUser) await Deno.chown(log, asUser.uid, asUser.gid);
  await run([
    join(bin, "initdb"),
    "-D",
    data,
    "-U",
    USER,
    "-A",
    "trust",
    "-E",
    "UTF8",
    "--locale=C",
    "--no-sync",
  ], asUser);
  const port = freePort();
  const options = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    "-c unix_socket_directories=''",
    "-c fsync=off",
    "-c synchronous_commit=off",
    "-c full_page_writes=off",
    "-c max_connections=200",
  ].join(" ");
  const ctl = (...args: string[]) =>
    run([join(bin, "pg_ctl"), "-D", data, "-l", log, "-w", "-t", "120", ...args], asUser);
  await ctl("-o", options, "start");
  const base = `postgres://${USER}@127.0.0.1:${port}`;
  let n = 0;
  return {
    url: `${base}/postgres`,
    port,
    async database() {
      const name = `t${Date.now().toString(36)}${(n++).toString(36)}${
        crypto.randomUUID().slice(0, 6)
      }`;
      await run(
        [join(bin, "createdb"), "-h", "127.0.0.1", "-p", String(port), "-U", USER, name],
        null,
      );
      return `${base}/${name}`;
    },
    async restart() {
      await ctl("-m", "fast", "stop");
      await ctl("-o", options, "start");
    },
    async halt() {
      await ctl("-m", "fast", "stop").catch(() => {});
    },
    async stop() {
      await ctl("-m", "immediate", "stop").catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
