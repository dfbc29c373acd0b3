// An example script run on its own: it reports on the console.
// deno-lint-ignore-file no-console
// A naive invoice agent: the first line is the vendor, the first date is the date (as
// written), the last amount in the document is the total. Quick, and often wrong.
import { AMOUNT, ednMap, readTask, taskPaths, writeAnswer } from "./invoice_common.ts";

const { input, answer } = taskPaths(await readTask());
const text = await Deno.readTextFile(input);
const lines = text.split("\n").map((l) => l.trim()).filter((l) => l !== "");

const number = text.match(/(?:Nr\.|number:|Invoice:)\s*(\S+)/)?.[1] ?? null;
const date = text.match(/\d{2}\.\d{2}\.\d{4}|\d{4}-\d{2}-\d{2}/)?.[0] ?? null;
const currency = /€|EUR/.test(text) ? "EUR" : text.match(/CHF|GBP|USD/)?.[0] ?? null;
const amounts = text.match(AMOUNT) ?? [];

await writeAnswer(
  answer,
  ednMap({
    vendor: lines[0] ?? null,
    "invoice-no": number,
    date,
    currency,
    total: amounts.length ? amounts[amounts.length - 1] : null,
  }),
);
console.log(`naive: wrote ${answer}`);
