// Makes one ledger world per (seed, split, index). Everything it draws comes from `seed`
// (the world's own seed), so the same request always gives the same world.
const PAYEES = ["Bakery Huber", "City Power", "Rent", "Bookshop", "Rail ticket", "Pharmacy",
  "Hardware store", "Internet", "Cafe Linde", "Insurance", "Market stall", "Cinema"];

/** A small PRNG (mulberry32) started from the world's seed. */
function prng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function cents(c) {
  const sign = c < 0 ? "-" : "";
  const a = Math.abs(c);
  return `${sign}${Math.floor(a / 100)}.${String(a % 100).padStart(2, "0")}`;
}

export function generate({ seed, split, index, params }) {
  const rand = prng(seed);
  const pick = (n) => Math.floor(rand() * n);
  // Train worlds are short; test worlds are longer and have refunds.
  const rows = split === "train" ? 4 + pick(5) : 8 + pick(9);
  const lines = ["date,payee,amount"];
  let total = 0;
  for (let i = 0; i < rows; i++) {
    const refund = split === "test" && rand() < 0.15;
    const amount = (refund ? -1 : 1) * (100 + pick(20000));
    total += amount;
    const day = String(1 + pick(28)).padStart(2, "0");
    lines.push(`2025-03-${day},${PAYEES[pick(PAYEES.length)]},${cents(amount)}`);
  }
  return {
    files: {
      "/docs/ledger.csv": lines.join("\n") + "\n",
      "/docs/README.md": `Ledger ${index + 1} (${split}), amounts in ${params.currency}.\n`,
    },
    // The shape of a case pack's gold: builtin:reference answers with `expected`.
    gold: { expected: { rows, total: total / 100 } },
  };
}
