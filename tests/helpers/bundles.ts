/** Small in-memory bundles for tests. */
import type { FileMap } from "../../core/bundle/file_map.ts";

export const RECALL_CHECKER = `
export function check({ files, gold }) {
  const text = files["/out/list.md"] ?? "";
  const found = gold.names.filter((n) => text.includes(n));
  return {
    checks: { "wrote-list": text.length > 0, "found-all": found.length === gold.names.length },
    reward: found.length / gold.names.length,
  };
}
`;

/** A small, well-formed single-environment bundle that calibrates. */
export function recallBundle(overrides: Record<string, string | null> = {}): FileMap {
  const files: FileMap = new Map([
    ["workflow.edn", '{:title "Recall" :task "List the names in /docs/a.md in /out/list.md."}'],
    ["checker.js", RECALL_CHECKER],
    ["gold.edn", '{:names ["Wato" "Dust"]}'],
    ["fixtures/docs/a.md", "Wato and Dust are products."],
    [
      "calibration.edn",
      `{:reference {"/out/list.md" "Wato, Dust"}
 :damaged {:one-missing {:files {"/out/list.md" "Wato"} :loses [:found-all]}
           :empty {:files {} :loses [:wrote-list :found-all]}}}`,
    ],
  ]);
  for (const [k, v] of Object.entries(overrides)) {
    if (v === null) files.delete(k);
    else files.set(k, v);
  }
  return files;
}
