/** The EDN reader's tagged values: `#inst`, `#uuid` and any other `#tag value`. */
import { EdnTagged, EdnUuid, type EdnValue } from "./values.ts";
import { fail, type Reader } from "./read_state.ts";

const INST_RE =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2})(?::(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?)?)?)?(?:Z|([+-])(\d{2}):(\d{2}))?$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The value of `#tag v` (the tag without its "#"), whose tag started at `at`. */
export function tagged(r: Reader, tag: string, v: EdnValue, at: number): EdnValue {
  if (tag === "inst") return readInst(r, v, at);
  if (tag === "uuid") return readUuid(r, v, at);
  return new EdnTagged(tag, v);
}

function readInst(r: Reader, v: EdnValue, at: number): Date {
  const hint = 'Write an RFC 3339 timestamp, e.g. #inst "2026-01-31T12:00:00.000Z"';
  if (typeof v !== "string") fail(r, at, "#inst needs a string", hint);
  const m = INST_RE.exec(v);
  if (m === null) fail(r, at, 'bad #inst "' + v + '"', hint);
  const year = Number(m[1]);
  const month = m[2] === undefined ? 1 : Number(m[2]);
  const day = m[3] === undefined ? 1 : Number(m[3]);
  const hour = m[4] === undefined ? 0 : Number(m[4]);
  const minute = m[5] === undefined ? 0 : Number(m[5]);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const ms = m[7] === undefined ? 0 : Number((m[7] + "00").slice(0, 3));
  const offH = m[9] === undefined ? 0 : Number(m[9]);
  const offM = m[10] === undefined ? 0 : Number(m[10]);
  const daysIn = new Date(Date.UTC(2000, month, 0)).getUTCDate() -
    (month === 2 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) ? 1 : 0);
  if (
    month < 1 || month > 12 || day < 1 || day > daysIn || hour > 23 || minute > 59 ||
    second > 59 || offH > 23 || offM > 59
  ) {
    fail(r, at, 'bad #inst "' + v + '": a field is out of range', hint);
  }
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, ms);
  const sign = m[8] === "-" ? -1 : 1;
  return new Date(d.getTime() - sign * (offH * 60 + offM) * 60000);
}

function readUuid(r: Reader, v: EdnValue, at: number): EdnUuid {
  if (typeof v !== "string" || !UUID_RE.test(v)) {
    fail(
      r,
      at,
      "bad #uuid " + (typeof v === "string" ? '"' + v + '"' : "value") +
        ": expected 8-4-4-4-12 hex digits",
      'Write #uuid "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"',
    );
  }
  return new EdnUuid(v.toLowerCase());
}
