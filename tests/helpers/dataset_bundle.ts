/** A small dataset bundle for engine tests: one environment per case, graded per case. */
import type { FileMap } from "../../core/bundle/file_map.ts";
import { parseBundle } from "../../core/bundle/parse.ts";
import type { Bundle } from "../../core/bundle/types.ts";

/** The checker: /out/answer.txt must hold the case's gold word; checks answered? and right?. */
export const WORD_CHECKER = `
export function check({ files, gold, params }) {
  const text = (files["/out/answer.txt"] ?? "").trim();
  // A checker broken under these params: it throws on every answer, the reference's too.
  if (params.explode === true) throw new Error("checker exploded");
  const right = text === gold.word;
  return { checks: { "answered": text.length > 0, "right": right }, reward: right ? 1 : 0 };
}
`;

/** Cases c1…cN; case ci's gold word is "w<i>" and its fixture /docs/q.txt asks for it. */
export function wordDataset(n = 4, overrides: Record<string, string | null> = {}): FileMap {
  const files: FileMap = new Map([
    [
      "workflow.edn",
      '{:title "Words" :task "Write the word asked in /docs/q.txt to /out/answer.txt." :params {:explode false} :timeout-ms 20000}',
    ],
    ["checker.js", WORD_CHECKER],
    ["fixtures/docs/shared.txt", "shared"],
    [
      "calibration.edn",
      '{:case "c1" :reference {"/out/answer.txt" "w1"} :damaged {:wrong {:files {"/out/answer.txt" "nope"} :loses [:right]}}}',
    ],
  ]);
  for (let i = 1; i <= n; i++) {
    files.set(`cases/c${i}/fixtures/docs/q.txt`, `w${i}`);
    files.set(`cases/c${i}/gold.edn`, `{:word "w${i}"}`);
  }
  for (const [k, v] of Object.entries(overrides)) {
    if (v === null) files.delete(k);
    else files.set(k, v);
  }
  return files;
}

export function wordBundle(n = 4, overrides: Record<string, string | null> = {}): Bundle {
  return parseBundle({ name: "words", files: wordDataset(n, overrides) });
}

/** Writes a file map into a new directory named `name` under a temporary directory. */
export async function writeBundleTo(files: FileMap, name = "words"): Promise<string> {
  const root = await Deno.makeTempDir();
  const dir = `${root}/${name}`;
  for (const [p, text] of files) {
    const full = `${dir}/${p}`;
    await Deno.mkdir(full.slice(0, full.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(full, text);
  }
  return dir;
}

/** A checker for "sum" bundles: /out/answer.edn must be {:total N} with the gold total. */
export const SUM_CHECKER = `
export function check({ files, gold }) {
  let answer = null;
  try { answer = edn.parse(files["/out/answer.edn"] ?? ""); } catch { answer = null; }
  const right = answer !== null && typeof answer === "object" && answer.total === gold.total;
  return { checks: { "answer-present": answer !== null, "total-right": right }, reward: right ? 1 : 0 };
}
`;
