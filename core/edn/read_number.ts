/** The EDN reader's numbers: integers, big integers (`N`), floats and decimals (`M`). */
import { EdnFloat, type EdnValue } from "./values.ts";
import { excerpt, fail, isDigit, type Reader } from "./read_state.ts";

const INT_RE = /^([+-]?)(0|[1-9][0-9]*)(N?)$/;
const FLOAT_RE = /^[+-]?(?:0|[1-9][0-9]*)(\.[0-9]*)?([eE][+-]?[0-9]+)?(M?)$/;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const NUMBER_HINT = "Numbers look like 42, -7, 42N, 1.5, 1e-3 or 2.5M";

/** The number of token `tok`, which starts at `at` and starts like a number. */
export function readNumber(r: Reader, tok: string, at: number): EdnValue {
  // Fast path: a plain integer of at most 15 digits, without leading zeros.
  const len = tok.length;
  const i0 = tok.charCodeAt(0) === 0x2d || tok.charCodeAt(0) === 0x2b ? 1 : 0;
  if (len - i0 <= 15 && (tok.charCodeAt(i0) !== 0x30 || len - i0 === 1)) {
    let i = i0;
    while (i < len && isDigit(tok.charCodeAt(i))) i++;
    if (i === len) {
      const v = Number(tok);
      return v === 0 ? 0 : v; // no -0 among integers
    }
  }
  const mi = INT_RE.exec(tok);
  if (mi !== null) {
    if (mi[3] === "N") return BigInt(mi[1] + mi[2]);
    if (mi[2].length <= 15) {
      const v = Number(mi[1] + mi[2]);
      return v === 0 ? 0 : v; // no -0 among integers
    }
    const b = BigInt(mi[1] + mi[2]);
    return b <= MAX_SAFE && b >= -MAX_SAFE ? Number(b) : b;
  }
  const mf = FLOAT_RE.exec(tok);
  if (mf !== null && (mf[1] !== undefined || mf[2] !== undefined || mf[3] === "M")) {
    const v = Number(mf[3] === "M" ? tok.slice(0, -1) : tok);
    return Number.isInteger(v) ? new EdnFloat(v) : v;
  }
  if (/^[+-]?0[0-9]+N?$/.test(tok)) {
    fail(r, at, 'bad number "' + tok + '": leading zeros are not allowed', NUMBER_HINT);
  }
  if (/^[+-]?[0-9]+\/[0-9]+$/.test(tok)) {
    fail(r, at, 'unsupported ratio "' + tok + '"', "Write the ratio as a float, e.g. 0.5");
  }
  return fail(r, at, 'bad number "' + excerpt(r, at, at + tok.length) + '"', NUMBER_HINT);
}
