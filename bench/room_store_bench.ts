/**
 * The git room store with many files: one commit adding N files in N directories (a case
 * pack's shape), reading them back, and replacing the directory unchanged and with one
 * change. Run: deno run -A bench/room_store_bench.ts [N]  (default 1000).
 */
import { gitRoomStore } from "../core/io/room_store.ts";
const dir = await Deno.makeTempDir({ prefix: "dvergr-room-bench-" });
const rooms = gitRoomStore(dir);
await rooms.createRoom("r");
const n = Number(Deno.args[0] ?? 1000);
const files = new Map<string, string>();
for (let i = 0; i < n; i++) {
  files.set(
    `cases/c${String(i).padStart(4, "0")}/fixtures/docs/case.edn`,
    `{"id" ${i} "text" "${"x".repeat(200)}"}`,
  );
}
let t = performance.now();
await rooms.writeFiles("r", files, "add");
console.log(`writeFiles ${n} new files: ${(performance.now() - t).toFixed(0)} ms`);
t = performance.now();
const got = await rooms.readFiles("r");
console.log(`readFiles ${got.size}: ${(performance.now() - t).toFixed(0)} ms`);
t = performance.now();
await rooms.replaceDir("r", "cases", new Map([...files].map(([p, v]) => [p.slice(6), v])), "same");
console.log(`replaceDir unchanged: ${(performance.now() - t).toFixed(0)} ms`);
const one = new Map(files);
one.set("cases/c0001/fixtures/docs/case.edn", "changed");
t = performance.now();
await rooms.replaceDir("r", "cases", new Map([...one].map(([p, v]) => [p.slice(6), v])), "one");
console.log(`replaceDir one change: ${(performance.now() - t).toFixed(0)} ms`);
t = performance.now();
await rooms.writeFiles("r", new Map([["x.txt", "1"]]), "small");
console.log(`writeFiles 1 file: ${(performance.now() - t).toFixed(0)} ms`);
await Deno.remove(dir, { recursive: true });
