/**
 * A home for the viewer's tests: a finished experiment whose candidates and bundle write
 * HTML that must stay text (a check name, stderr and a file holding a script), and a
 * failed one (its checker throws on every answer under --param explode=true: every cell a
 * fault, never graded). The bundle's directory is kept for a running experiment.
 */
import assert from "node:assert/strict";
import { dvergrWithPath } from "../helpers/cli.ts";
import { wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";

/** What a hostile candidate or bundle writes (no single quote: the shell quotes it so). */
export const PAYLOAD =
  '<script>document.title="pwned"</script><img src=x onerror="document.title=`pwned`">';
`<script>document.title="pwned"</script><img src=x onerror="document.title='pwned'">`;

/** The words checker with one more check, whose name is the payload. */
const HOSTILE_CHECKER = `
export function check({ files, gold, params }) {
  const text = (files["/out/answer.txt"] ?? "").trim();
  if (params.explode === true) throw new Error("checker exploded");
  const right = text === gold.word;
  return {
    checks: { "answered": text.length > 0, "right": right, ${JSON.stringify(PAYLOAD)}: true },
    reward: right ? 1 : 0,
  };
}
`;

export interface ViewHomeFixture {
  home: string;
  bundle: string;
  finished: string;
  failed: string;
}

async function bench(home: string, bundle: string, ...args: string[]): Promise<string> {
  const r = await dvergrWithPath(["benchmark", bundle, "--home", home, "--json", ...args]);
  assert.ok(r.code === 0 || r.code === 1, r.err);
  return JSON.parse(r.out).experiment as string;
}

/** The home with a finished and a failed experiment of one 2-case bundle. */
export async function viewHome(): Promise<ViewHomeFixture> {
  const bundle = await writeBundleTo(
    wordDataset(2, {
      "checker.js": HOSTILE_CHECKER,
      "cases/c2/fixtures/out/answer.txt": "old line\nkept\n",
    }),
  );
  const home = await Deno.makeTempDir({ prefix: "dvergr-view-" });
  const finished = await bench(
    home,
    bundle,
    "--candidate",
    "good=cmd:cat docs/q.txt > out/answer.txt",
    "--candidate",
    `bad=cmd:echo '${PAYLOAD}' > out/answer.txt; echo '${PAYLOAD}' >&2; exit 3`,
  );
  const failed = await bench(
    home,
    bundle,
    "--candidate",
    "good=cmd:cat docs/q.txt > out/answer.txt",
    "--param",
    "explode=true",
  );
  return { home, bundle, finished, failed };
}
