// Shared by the example invoice agents: where the task says to read and write, and how
// to write the answer as EDN. The working directory is the world's root, with and
// without bubblewrap, so world paths are used without their leading slash.

/** The task text: DVERGR_TASK, else stdin. */
export async function readTask(): Promise<string> {
  const fromEnv = Deno.env.get("DVERGR_TASK");
  if (fromEnv) return fromEnv;
  return await new Response(Deno.stdin.readable).text();
}

/** The first world path under /docs/ the task names (input) and its .edn answer under /out/. */
export function taskPaths(task: string): { input: string; answer: string } {
  const input = task.match(/\/docs\/[\w./-]+\w/)?.[0] ?? "/docs/invoice.txt";
  const answer = task.match(/\/out\/[\w./-]+\.edn/)?.[0] ?? "/out/answer.edn";
  return { input: input.slice(1), answer: answer.slice(1) };
}

function ednString(s: string): string {
  return '"' + s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n") + '"';
}

/** An EDN map with string keys: {"vendor" "…" "total" 272.27}. */
export function ednMap(fields: Record<string, string | number | null>): string {
  const items = Object.entries(fields)
    .filter(([, v]) => v !== null)
    .map(([k, v]) =>
      `${ednString(k)} ${typeof v === "number" ? String(v) : ednString(v as string)}`
    );
  return `{${items.join(" ")}}\n`;
}

/** Every amount written with two decimals: 1.234,56 · 1,234.56 · 1'234.56 · 99,00. */
export const AMOUNT = /\d{1,3}(?:[.,' ]\d{3})+[.,]\d{2}\b|\d+[.,]\d{2}\b/g;

/** An amount as a number, whichever way its separators are written. */
export function amountValue(text: string): number {
  // The last separator (two digits before the end) is the decimal one; the rest group.
  const whole = text.slice(0, -3).replace(/[.,' ]/g, "");
  return Number(`${whole}.${text.slice(-2)}`);
}

export async function writeAnswer(path: string, text: string): Promise<void> {
  const dir = path.split("/").slice(0, -1).join("/");
  if (dir) await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(path, text);
}
