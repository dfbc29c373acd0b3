import assert from "node:assert/strict";
import { openHome, resolveHomeDir, roomSlug } from "../../../../adapters/store/kv/home.ts";

Deno.test("resolveHomeDir() takes --home, else $DVERGR_HOME, else workflow-runs/<bundle>", () => {
  const env = (vars: Record<string, string>) => (k: string) => vars[k];
  assert.equal(
    resolveHomeDir({ flag: "h", env: env({ DVERGR_HOME: "/x" }), cwd: "/w", bundleName: "b" }),
    "/w/h",
  );
  assert.equal(
    resolveHomeDir({ env: env({ DVERGR_HOME: "/x" }), cwd: "/w", bundleName: "b" }),
    "/x",
  );
  assert.equal(resolveHomeDir({ env: env({}), cwd: "/w", bundleName: "b" }), "/w/workflow-runs/b");
});

Deno.test("roomSlug() turns a bundle name into a room slug", () => {
  assert.equal(roomSlug("invoice-fields"), "invoice-fields");
  assert.equal(roomSlug("Bank Booking (SKR04)"), "bank-booking-skr04");
  assert.equal(roomSlug("Übersicht"), "ubersicht");
  assert.equal(roomSlug("___"), "bundle");
});

Deno.test("openHome() lays out rooms, state.kv and blobs, and sweeps worlds of dead processes", async () => {
  const dir = await Deno.makeTempDir();
  // A world left by a process that no longer runs (pid far beyond pid_max).
  await Deno.mkdir(`${dir}/worlds/p999999999/world-x`, { recursive: true });
  // And one of a process that still runs.
  const sleeper = new Deno.Command("sleep", { args: ["30"] }).spawn();
  await Deno.mkdir(`${dir}/worlds/p${sleeper.pid}/world-y`, { recursive: true });
  const home = await openHome(dir);
  await assert.rejects(() => Deno.lstat(`${dir}/worlds/p999999999`), Deno.errors.NotFound);
  await Deno.lstat(`${dir}/worlds/p${sleeper.pid}/world-y`);
  sleeper.kill("SIGKILL");
  await sleeper.status;
  await home.rooms.createRoom("r");
  const id = await home.blobs.put("x");
  await Deno.lstat(`${dir}/rooms/r/HEAD`);
  await Deno.lstat(`${dir}/blobs/${id.slice(0, 2)}/${id}`);
  await Deno.lstat(`${dir}/state.kv`);
  assert.equal(home.worldsDir, `${dir}/worlds/p${Deno.pid}`);
  await home.close();
  await Deno.remove(dir, { recursive: true });
});
