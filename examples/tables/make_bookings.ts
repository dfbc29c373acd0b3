// An example script run on its own: it reports on the console.
// deno-lint-ignore-file no-console
/**
 * Generates examples/tables/bookings.csv: one year of bank statement lines of a small
 * German company ("Musterfirma GmbH"), each booked to an SKR04-like account with a
 * DATEV tax key (BU) and its net amount, written as DATEV and Excel write CSV
 * (semicolon, decimal comma, dd.mm.yyyy dates, CRLF, a byte-order mark, quotes where
 * a text holds a semicolon, a quote or a line break). Seeded: the same file every run.
 *
 * Deliberate noise, so that certification has something to say:
 * - the last voucher number is reused (two rows share it: duplicate-id ×2);
 * - row 6 is booked a second time, to another account (conflicting-outcomes ×2);
 * - row 11 has no account (unlabelled ×1);
 * - row 20's net amount is "siehe Beleg" (outcome-not-gradable ×1).
 *
 * Run: deno run --allow-write examples/tables/make_bookings.ts [--out FILE]
 */

import { seededRandom } from "../../core/seeded_random.ts";
export { seededRandom };

/** An SKR04-like account of the example's chart. */
export const ACCOUNTS: [string, string][] = [
  ["0670", "Geringwertige Wirtschaftsgüter"],
  ["3720", "Verbindlichkeiten aus Lohn und Gehalt"],
  ["3730", "Verbindlichkeiten aus Lohn- und Kirchensteuer"],
  ["3740", "Verbindlichkeiten im Rahmen der sozialen Sicherheit"],
  ["3820", "Umsatzsteuer-Vorauszahlungen"],
  ["4300", "Erlöse 7 % USt"],
  ["4400", "Erlöse 19 % USt"],
  ["5300", "Wareneingang 7 % Vorsteuer"],
  ["5400", "Wareneingang 19 % Vorsteuer"],
  ["6310", "Miete (unbewegliche Wirtschaftsgüter)"],
  ["6325", "Gas, Strom, Wasser"],
  ["6400", "Versicherungen"],
  ["6420", "Beiträge"],
  ["6520", "Kfz-Versicherungen"],
  ["6530", "Laufende Kfz-Betriebskosten"],
  ["6600", "Werbekosten"],
  ["6640", "Bewirtungskosten"],
  ["6650", "Reisekosten Arbeitnehmer Fahrtkosten"],
  ["6800", "Porto"],
  ["6805", "Telefon"],
  ["6810", "Telefax und Internetkosten"],
  ["6815", "Bürobedarf"],
  ["6820", "Zeitschriften, Bücher"],
  ["6821", "Fortbildungskosten"],
  ["6830", "Buchführungskosten"],
  ["6837", "Aufwendungen für Lizenzen und Software"],
  ["6855", "Nebenkosten des Geldverkehrs"],
  ["7610", "Gewerbesteuer"],
];

/** The DATEV tax keys of the example: key, meaning, VAT rate. */
export const TAX_KEYS: [string, string, number][] = [
  ["9", "19 % Vorsteuer", 0.19],
  ["8", "7 % Vorsteuer", 0.07],
  ["3", "19 % Umsatzsteuer", 0.19],
  ["2", "7 % Umsatzsteuer", 0.07],
  ["-", "ohne Steuer", 0],
];

interface Pattern {
  /** How often per year: a fixed schedule ("monthly" …) or a count of random days. */
  when: "monthly" | "quarterly" | "yearly" | number;
  account: string;
  bu: string;
  /** Amount range in euros (positive); the sign says paid (-1) or received (+1). */
  min: number;
  max: number;
  sign: 1 | -1;
  /** Fixed amount every time (rent, salaries, subscriptions) instead of a random one. */
  fixed?: boolean;
  text: (r: () => number, d: Date) => string;
}

const pick = <T>(r: () => number, xs: T[]): T => xs[Math.floor(r() * xs.length)];
const digits = (r: () => number, n: number) =>
  Array.from({ length: n }, () => Math.floor(r() * 10)).join("");
const mm = (d: Date) => String(d.getUTCMonth() + 1).padStart(2, "0");
const yyyy = (d: Date) => String(d.getUTCFullYear());

const PATTERNS: Pattern[] = [
  {
    when: "monthly",
    account: "6805",
    bu: "9",
    min: 38,
    max: 96,
    sign: -1,
    text: (_r, d) =>
      `Telekom Deutschland GmbH Rechnung ${yyyy(d)}-${mm(d)} Kd-Nr. 4711 0815 Mobilfunk`,
  },
  {
    when: "monthly",
    account: "6810",
    bu: "9",
    min: 49.99,
    max: 49.99,
    sign: -1,
    fixed: true,
    text: (_r, d) =>
      `Vodafone GmbH Kabel Internet Business Kundennr. 305118224 Rg. ${mm(d)}/${yyyy(d)}`,
  },
  {
    when: "monthly",
    account: "6310",
    bu: "-",
    min: 1850,
    max: 1850,
    sign: -1,
    fixed: true,
    text: (_r, d) => `Vermietung Schmidt GbR Miete Büro Lindenstr. 12; ${mm(d)}/${yyyy(d)}`,
  },
  {
    when: "monthly",
    account: "6325",
    bu: "9",
    min: 142,
    max: 142,
    sign: -1,
    fixed: true,
    text: (_r, d) =>
      `Stadtwerke Musterstadt GmbH\nAbschlag Strom ${mm(d)}/${yyyy(d)} Vertragskonto 20045678`,
  },
  {
    when: "monthly",
    account: "3720",
    bu: "-",
    min: 2874.12,
    max: 2874.12,
    sign: -1,
    fixed: true,
    text: (_r, d) => `Erika Mustermann Gehalt ${mm(d)}/${yyyy(d)}`,
  },
  {
    when: "monthly",
    account: "3720",
    bu: "-",
    min: 2391.55,
    max: 2391.55,
    sign: -1,
    fixed: true,
    text: (_r, d) => `Jonas Beispiel Gehalt ${mm(d)}/${yyyy(d)}`,
  },
  {
    when: "monthly",
    account: "3740",
    bu: "-",
    min: 2180,
    max: 2260,
    sign: -1,
    text: (_r, d) => `AOK Bayern Beitragsnachweis ${mm(d)}/${yyyy(d)} BN 81234567`,
  },
  {
    when: "monthly",
    account: "3730",
    bu: "-",
    min: 690,
    max: 760,
    sign: -1,
    text: (_r, d) => `Finanzamt Musterstadt Lohnsteuer ${mm(d)}/${yyyy(d)} StNr 143/123/45678`,
  },
  {
    when: "monthly",
    account: "3820",
    bu: "-",
    min: 900,
    max: 3400,
    sign: -1,
    text: (_r, d) => `Finanzamt Musterstadt USt-VZ ${mm(d)}/${yyyy(d)} StNr 143/123/45678`,
  },
  {
    when: "monthly",
    account: "6855",
    bu: "-",
    min: 12.9,
    max: 19.4,
    sign: -1,
    text: (_r, d) => `Entgelt Kontoführung ${mm(d)}/${yyyy(d)} Sparkasse Musterstadt`,
  },
  {
    when: "monthly",
    account: "6837",
    bu: "9",
    min: 73.8,
    max: 73.8,
    sign: -1,
    fixed: true,
    text: (r) => `Microsoft Ireland Operations Ltd Microsoft 365 Business E${digits(r, 9)}`,
  },
  {
    when: "monthly",
    account: "6837",
    bu: "9",
    min: 71.39,
    max: 71.39,
    sign: -1,
    fixed: true,
    text: (r) => `Adobe Systems Software Ireland Ltd Creative Cloud IE${digits(r, 8)}`,
  },
  {
    when: "monthly",
    account: "6600",
    bu: "9",
    min: 150,
    max: 620,
    sign: -1,
    text: (r) => `Google Ireland Ltd Google Ads ${digits(r, 4)}-${digits(r, 4)}-${digits(r, 2)}`,
  },
  {
    when: "monthly",
    account: "6830",
    bu: "9",
    min: 380.8,
    max: 380.8,
    sign: -1,
    fixed: true,
    text: (r, d) =>
      `Steuerberatung Huber & Partner mbB Rechnung ${yyyy(d)}-${digits(r, 3)} Buchhaltung ${
        mm(d)
      }/${yyyy(d)}`,
  },
  {
    when: "quarterly",
    account: "7610",
    bu: "-",
    min: 1200,
    max: 1200,
    sign: -1,
    fixed: true,
    text: (_r, d) =>
      `Stadtkasse Musterstadt Gewerbesteuer Q${Math.floor(d.getUTCMonth() / 3) + 1}/${
        yyyy(d)
      } Kassenz. 4.2231.1057`,
  },
  {
    when: "yearly",
    account: "6420",
    bu: "-",
    min: 280,
    max: 280,
    sign: -1,
    fixed: true,
    text: (_r, d) => `IHK für München und Oberbayern Beitrag ${yyyy(d)} Mitgl.-Nr. 3184456`,
  },
  {
    when: "yearly",
    account: "6400",
    bu: "-",
    min: 734.4,
    max: 734.4,
    sign: -1,
    fixed: true,
    text: (_r, d) => `Allianz Versicherungs-AG Betriebshaftpflicht ${yyyy(d)} Vers.-Nr. AS-4456712`,
  },
  {
    when: "yearly",
    account: "6520",
    bu: "-",
    min: 612.3,
    max: 612.3,
    sign: -1,
    fixed: true,
    text: (_r, d) => `HUK-COBURG Kfz-Versicherung M-MF 2025 Beitrag ${yyyy(d)}`,
  },
  {
    when: "yearly",
    account: "6820",
    bu: "8",
    min: 689,
    max: 689,
    sign: -1,
    fixed: true,
    text: (_r, d) => `Frankfurter Allgemeine Zeitung GmbH Digital-Abo ${yyyy(d)}`,
  },
  {
    when: 22,
    account: "6815",
    bu: "9",
    min: 8,
    max: 140,
    sign: -1,
    text: (r) =>
      `Amazon EU S.a.r.l. Bestellung 302-${digits(r, 7)}-${digits(r, 7)} ${
        pick(r, [
          "Druckerpapier, Toner",
          "Ordner und Trennblätter",
          "Tintenpatronen",
          "Kugelschreiber 50 Stk.",
          "Etiketten für Ordnerrücken",
        ])
      }`,
  },
  {
    when: 6,
    account: "6820",
    bu: "8",
    min: 19,
    max: 69,
    sign: -1,
    text: (r) =>
      `Amazon EU S.a.r.l. Bestellung 302-${digits(r, 7)}-${digits(r, 7)} Fachbuch ${
        pick(r, ["Umsatzsteuer 2025", "Bilanzrecht", "Arbeitsrecht kompakt", "HGB/EStG"])
      }`,
  },
  {
    when: 4,
    account: "0670",
    bu: "9",
    min: 300,
    max: 950,
    sign: -1,
    text: (r) =>
      `Amazon EU S.a.r.l. Bestellung 302-${digits(r, 7)}-${digits(r, 7)} ${
        pick(r, ['Monitor 27" 4K', "Bürostuhl ergonomisch", "Notebook-Dockingstation"])
      }`,
  },
  {
    when: 18,
    account: "6640",
    bu: "8",
    min: 14,
    max: 85,
    sign: -1,
    text: (r, d) =>
      `REWE Markt GmbH Filiale ${digits(r, 4)} Kartenzahlung ${d.toISOString().slice(0, 10)}`,
  },
  {
    when: 14,
    account: "6650",
    bu: "8",
    min: 29.9,
    max: 189,
    sign: -1,
    text: (r) =>
      `DB Fernverkehr AG Fahrkarte ${digits(r, 12)} ${
        pick(r, ["München-Berlin", "München-Hamburg", "Nürnberg-Köln", "München-Stuttgart"])
      }`,
  },
  {
    when: 16,
    account: "6530",
    bu: "9",
    min: 45,
    max: 110,
    sign: -1,
    text: (r) =>
      `${pick(r, ["ARAL Station", "Shell Station", "TotalEnergies Station"])} ${
        digits(r, 4)
      } Kartenzahlung Kraftstoff`,
  },
  {
    when: 8,
    account: "6800",
    bu: "-",
    min: 8.5,
    max: 42,
    sign: -1,
    text: (r) => `Deutsche Post AG Internetmarke Auftragsnr. ${digits(r, 10)}`,
  },
  {
    when: 2,
    account: "6821",
    bu: "9",
    min: 390,
    max: 890,
    sign: -1,
    text: (r) =>
      `Haufe Akademie GmbH Seminar "${
        pick(r, ["Umsatzsteuer aktuell", "Lohn kompakt", "Jahresabschluss"])
      }" TN ${digits(r, 6)}`,
  },
  {
    when: 10,
    account: "5400",
    bu: "9",
    min: 180,
    max: 2400,
    sign: -1,
    text: (r) => `Metro Deutschland GmbH Einkauf Kd-Nr. 411 ${digits(r, 6)} Rg. ${digits(r, 8)}`,
  },
  {
    when: 6,
    account: "5300",
    bu: "8",
    min: 90,
    max: 900,
    sign: -1,
    text: (r) => `Frischeparadies GmbH & Co. KG Rechnung FP-${digits(r, 7)} Lebensmittel`,
  },
  {
    when: 34,
    account: "4400",
    bu: "3",
    min: 450,
    max: 9800,
    sign: 1,
    text: (r, d) =>
      `${
        pick(r, ["Muster AG", "Beispiel GmbH", "Nordlicht Handels KG", "Alpenblick Hotel GmbH"])
      } Zahlung Rechnung RE-${yyyy(d)}-${digits(r, 4)}`,
  },
  {
    when: 8,
    account: "4300",
    bu: "2",
    min: 120,
    max: 1600,
    sign: 1,
    text: (r, d) =>
      `Bäckerei Kornfeld GmbH Überweisung RE-${yyyy(d)}-${digits(r, 4)} Catering Lieferung`,
  },
];

/** One bank line and how it was booked. */
export interface Booking {
  beleg: string;
  datum: string;
  betrag: string;
  buchungstext: string;
  gegenkonto: string;
  bu: string;
  netto: string;
}

const euro = (n: number) => {
  const [int, frac] = Math.abs(n).toFixed(2).split(".");
  return `${n < 0 ? "-" : ""}${int},${frac}`;
};

const germanDate = (d: Date) => `${String(d.getUTCDate()).padStart(2, "0")}.${mm(d)}.${yyyy(d)}`;

function daysOf(p: Pattern, r: () => number, year: number): Date[] {
  const day = (month: number, dom: number) => new Date(Date.UTC(year, month, dom));
  if (p.when === "monthly") {
    return Array.from({ length: 12 }, (_, m) => day(m, 1 + Math.floor(r() * 5)));
  }
  if (p.when === "quarterly") return [1, 4, 7, 10].map((m) => day(m, 15));
  if (p.when === "yearly") return [day(Math.floor(r() * 12), 1 + Math.floor(r() * 27))];
  return Array.from({ length: p.when }, () => {
    const doy = Math.floor(r() * 365);
    return new Date(Date.UTC(year, 0, 1 + doy));
  });
}

/**
 * One year of bookings for one company, sorted by (date, text), vouchers
 * `<prefix>0001…`, with the deliberate noise described at the top of this module.
 */
export function makeBookings(
  opts: { seed?: number; year?: number; prefix?: string; noise?: boolean } = {},
): Booking[] {
  const r = seededRandom(opts.seed ?? 20261001);
  const year = opts.year ?? 2025;
  const prefix = opts.prefix ?? "B";
  const lines: { date: Date; text: string; amount: number; account: string; bu: string }[] = [];
  for (const p of PATTERNS) {
    const fixedAmount = Math.round((p.min + r() * (p.max - p.min)) * 100) / 100;
    for (const date of daysOf(p, r, year)) {
      const amount = p.fixed
        ? fixedAmount
        : Math.round((p.min + r() * (p.max - p.min)) * 100) / 100;
      lines.push({
        date,
        text: p.text(r, date),
        amount: p.sign * amount,
        account: p.account,
        bu: p.bu,
      });
    }
  }
  lines.sort((a, b) =>
    a.date.getTime() - b.date.getTime() || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0)
  );
  const rate = new Map(TAX_KEYS.map(([k, , v]) => [k, v]));
  const rows: Booking[] = lines.map((l, i) => ({
    beleg: `${prefix}${String(i + 1).padStart(4, "0")}`,
    datum: germanDate(l.date),
    betrag: euro(l.amount),
    buchungstext: l.text,
    gegenkonto: l.account,
    bu: l.bu,
    netto: euro(Math.abs(l.amount) / (1 + rate.get(l.bu)!)),
  }));
  if (opts.noise === false) return rows;
  // The noise: a reused voucher number, a row booked twice to different accounts, a
  // missing account and a net amount nobody can read.
  rows[rows.length - 1].beleg = rows[rows.length - 2].beleg;
  const twin = rows[5];
  rows.push({
    ...twin,
    beleg: `${prefix}${String(rows.length + 1).padStart(4, "0")}`,
    gegenkonto: twin.gegenkonto === "6815" ? "6800" : "6815",
  });
  rows[10].gegenkonto = "";
  rows[19].netto = "siehe Beleg";
  return rows;
}

/** The columns of bookings.csv, in order. */
export const COLUMNS = ["Beleg", "Datum", "Betrag", "Buchungstext", "Gegenkonto", "BU", "Netto"];

function csvCell(s: string): string {
  return /[;"\r\n]|^\s|\s$/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** Bookings as DATEV/Excel CSV text: BOM, semicolons, CRLF, quotes where needed. */
export function bookingsCsv(rows: Booking[], opts: { bom?: boolean } = {}): string {
  const lines = [COLUMNS.join(";")];
  for (const b of rows) {
    lines.push(
      [b.beleg, b.datum, b.betrag, b.buchungstext, b.gegenkonto, b.bu, b.netto].map(csvCell).join(
        ";",
      ),
    );
  }
  return (opts.bom === false ? "" : "\uFEFF") + lines.join("\r\n") + "\r\n";
}

/** The shared fixture: the chart of accounts and the tax keys. */
export function kontenrahmenText(): string {
  return [
    "Kontenrahmen (SKR04-ähnlich), Musterfirma GmbH",
    "",
    "Konto  Bezeichnung",
    ...ACCOUNTS.map(([k, name]) => `${k}   ${name}`),
    "1800   Bank (das Bankkonto selbst: nie Gegenkonto)",
    "",
    "BU-Schlüssel (DATEV)",
    ...TAX_KEYS.map(([k, name]) => `${k.padEnd(5)}  ${name}`),
    "",
    "Netto: der Betrag ohne Umsatzsteuer (bei BU - der volle Betrag), ohne Vorzeichen.",
    "",
  ].join("\n");
}

if (import.meta.main) {
  const i = Deno.args.indexOf("--out");
  const out = i >= 0 ? Deno.args[i + 1] : new URL("./bookings.csv", import.meta.url).pathname;
  const rows = makeBookings();
  await Deno.writeTextFile(out, bookingsCsv(rows));
  const dir = out.slice(0, out.lastIndexOf("/") + 1);
  await Deno.writeTextFile(dir + "kontenrahmen.txt", kontenrahmenText());
  console.log(`wrote ${out} (${rows.length} rows) and ${dir}kontenrahmen.txt`);
}
