/** Number formatting shared by the report's sections. Pure. */

/**
 * `x` with `digits` decimals, rounded half-up on its shortest decimal form, as Java's
 * `String.format("%.nf")` does (so 0.00015 → "0.0002", where toFixed gives "0.0001").
 * A result that rounds to zero carries no minus sign.
 */
export function formatFixed(x: number, digits: number): string {
  if (!Number.isFinite(x)) return String(x);
  // A whole number (a reward of 0 or 1, a count) has nothing to round: the report's tables
  // format thousands of them.
  if (Number.isInteger(x) && Math.abs(x) < 1e21) {
    return (x < 0 ? "-" : "") + String(Math.abs(x)) + (digits > 0 ? "." + "0".repeat(digits) : "");
  }
  const negative = x < 0;
  const [mantissa, expText] = Math.abs(x).toString().split("e");
  const [whole, frac = ""] = mantissa.split(".");
  let ds = whole + frac;
  let point = whole.length + (expText === undefined ? 0 : Number(expText));
  if (point <= 0) {
    ds = "0".repeat(1 - point) + ds;
    point = 1;
  }
  if (ds.length < point + digits) ds += "0".repeat(point + digits - ds.length);
  const keep = point + digits;
  const kept = ds.slice(0, keep).split("").map(Number);
  if (ds.length > keep && ds.charCodeAt(keep) >= 53 /* "5" */) {
    let i = kept.length - 1;
    while (i >= 0 && kept[i] === 9) kept[i--] = 0;
    if (i >= 0) kept[i]++;
    else {
      kept.unshift(1);
      point++;
    }
  }
  const intPart = kept.slice(0, point).join("").replace(/^0+(?=\d)/, "");
  const fracPart = kept.slice(point).join("");
  const zero = kept.every((d) => d === 0);
  return (negative && !zero ? "-" : "") + intPart + (digits > 0 ? "." + fracPart : "");
}
