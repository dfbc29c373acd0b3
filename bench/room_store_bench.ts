// A bench script: its figures on the console are its output.
// deno-lint-ignore-file no-console
/**
 * The git room store with many files: one commit adding N files in N directories (a case
 * pack's shape), reading them back (in this process, and cold in a new one), replacing the
 * directory unchanged and with one change, small commits on top, the log.
 * Run (or `deno task bench`): deno run <dvergr permissions, see deno.json> bench/room_store_bench.ts [N]  (default 1000).
 */
import { gitRoomStore } from "../adapters/rooms/git/room_store.ts";
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
const ms = (t: number) => `${(performance.now() - t).toFixed(0)} ms`;
let t = performance.now();
await rooms.writeFiles("r", files, "add");
console.log(`writeFiles ${n} new files: ${ms(t)}`);
t = performance.now();
const got = await rooms.readFiles("r");
console.log(`readFiles ${got.size}: ${ms(t)}`);
// A new process: nothing cached (pack index parsed, trees read).
const cold = new Deno.Command(Deno.execPath(), {
  args: [
    "eval",
    `import { gitRoomStore } from ${
      JSON.stringify(import.meta.resolve("../adapters/rooms/git/room_store.ts"))
    };
     const rooms = gitRoomStore(${JSON.stringify(dir)});
     const t = performance.now();
     const got = await rooms.readFiles("r");
     console.log(\`readFiles \${got.size} in a new process: \${(performance.now() - t).toFixed(0)} ms\`);`,
  ],
}).outputSync();
await Deno.stdout.write(cold.success ? cold.stdout : cold.stderr);
t = performance.now();
await rooms.replaceDir("r", "cases", new Map([...files].map(([p, v]) => [p.slice(6), v])), "same");
console.log(`replaceDir unchanged: ${ms(t)}`);
const one = new Map(files);
one.set("cases/c0001/fixtures/docs/case.edn", "changed");
t = performance.now();
await rooms.replaceDir("r", "cases", new Map([...one].map(([p, v]) => [p.slice(6), v])), "one");
console.log(`replaceDir one change: ${ms(t)}`);
t = performance.now();
await rooms.writeFiles("r", new Map([["x.txt", "1"]]), "small");
console.log(`writeFiles 1 file: ${ms(t)}`);
t = performance.now();
for (let i = 0; i < 50; i++) {
  await rooms.writeFiles(
    "r",
    new Map([[`cases/c${String(i).padStart(4, "0")}/x.txt`, `${i}`]]),
    "s",
  );
}
console.log(`50 commits of 1 file in a room of ${n}: ${ms(t)} (packs merged on the way)`);
t = performance.now();
const log = await rooms.log("r");
console.log(`log ${log.length} commits: ${ms(t)}`);
await Deno.remove(dir, { recursive: true });
