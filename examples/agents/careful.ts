// An example script run on its own: it reports on the console.
// deno-lint-ignore-file no-console
// A careful invoice agent: rules a bookkeeper would use. The vendor is the first line
// naming a company (legal form), the number and the date come from their labels (dates
// normalised to yyyy-mm-dd), the currency is the one written most, and the total is the
// amount on the line labelled as the sum due, not the last amount on the page.
//
// It works through the world's MCP tools (read_file, write_file at DVERGR_MCP_URL), as any
// MCP client can; without a gateway it falls back to the files of its working directory.
import {
  AMOUNT,
  amountValue,
  ednMap,
  readTask,
  taskPaths,
  WorldMcp,
  writeAnswer,
} from "./invoice_common.ts";

const { input, answer } = taskPaths(await readTask());
const mcpUrl = Deno.env.get("DVERGR_MCP_URL");
const mcp = mcpUrl ? new WorldMcp(mcpUrl) : null;
await mcp?.connect();
const text = mcp
  ? await mcp.call("read_file", { path: "/" + input })
  : await Deno.readTextFile(input);
const lines = text.split("\n").map((l) => l.trim()).filter((l) => l !== "");

const LEGAL_FORM = /\b(GmbH|AG|AS|Ltd|Inc|LLC|SE|KG|S\.a\.r\.l\.|B\.V\.|Oy|AB|SAS|SpA)\b/;
const TITLE = /^(invoice|rechnung|facture)$/i;
const company = lines.find((l) => LEGAL_FORM.test(l)) ?? lines.find((l) => !TITLE.test(l));
const vendor = company ? company.split(/\s+·\s+/)[0] : null;

const NUMBER_LABELS = [
  /(?:Rechnungsnummer|Invoice number|Invoice no\.?|Rechnung Nr\.|Nr\.)\s*:?\s*([A-Z0-9][\w/.-]*)/i,
  /^(?:Invoice|Rechnung)\s*:?\s+([A-Z0-9][\w/.-]*\d[\w/.-]*)$/im,
];
const invoiceNo = NUMBER_LABELS.map((re) => text.match(re)?.[1]).find((m) => m) ?? null;

function isoDate(s: string): string | null {
  const de = s.match(/^(\d{1,2})\.(\d{1,2})\.(\d{4})$/);
  if (de) return `${de[3]}-${de[2].padStart(2, "0")}-${de[1].padStart(2, "0")}`;
  return /^\d{4}-\d{2}-\d{2}$/.test(s) ? s : null;
}
const dateLine = lines.find((l) => /^(Rechnungsdatum|Invoice date|Datum|Date)\s*:/i.test(l));
const date = dateLine ? isoDate(dateLine.split(":")[1].trim().split(/\s+/)[0]) : null;

const counts: Record<string, number> = {
  EUR: (text.match(/€|EUR/g) ?? []).length,
  CHF: (text.match(/CHF/g) ?? []).length,
  GBP: (text.match(/GBP|£/g) ?? []).length,
  USD: (text.match(/USD|\$/g) ?? []).length,
};
const [currency, seen] = Object.entries(counts).sort((a, b) => b[1] - a[1])[0];

const TOTAL = /^(Gesamtbetrag|Rechnungsbetrag|Total due|Amount due|Total|Summe|Gesamtsumme)\b/i;
const totalLine = lines.find((l) => TOTAL.test(l));
const amounts = totalLine?.match(AMOUNT) ?? [];

const edn = ednMap({
  vendor,
  "invoice-no": invoiceNo,
  date,
  currency: seen > 0 ? currency : null,
  total: amounts.length ? amountValue(amounts[amounts.length - 1]) : null,
});
if (mcp) await mcp.call("write_file", { path: "/" + answer, content: edn });
else await writeAnswer(answer, edn);
console.log(`careful: wrote ${answer}${mcp ? " through MCP" : ""}`);
