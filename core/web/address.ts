/**
 * Addresses a request from the host must never reach on its own: loopback, private,
 * link-local, unspecified, carrier-grade NAT, multicast and broadcast (IPv4 and IPv6,
 * IPv4-mapped IPv6 included). The live web client refuses them after name resolution, at
 * every redirect hop, unless the bundle names the host explicitly.
 */

function v4(text: string): number[] | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const n = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : NaN));
  return n.every((x) => x >= 0 && x <= 255) ? n : null;
}

function internalV4([a, b]: number[]): boolean {
  return a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) ||
    (a === 100 && b >= 64 && b <= 127) || a >= 224;
}

/** The 8 groups of an IPv6 address, or null. */
function v6(text: string): number[] | null {
  let t = text.replace(/^\[|\]$/g, "").toLowerCase();
  const zone = t.indexOf("%");
  if (zone >= 0) t = t.slice(0, zone);
  if (!t.includes(":")) return null;
  // A trailing dotted IPv4 becomes two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(t);
  if (dotted) {
    const q = v4(dotted[1]);
    if (!q) return null;
    t = t.slice(0, -dotted[1].length) +
      `${((q[0] << 8) | q[1]).toString(16)}:${((q[2] << 8) | q[3]).toString(16)}`;
  }
  const halves = t.split("::");
  if (halves.length > 2) return null;
  const parse = (
    s: string,
  ) => (s === ""
    ? []
    : s.split(":").map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN)));
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  const fill = 8 - head.length - tail.length;
  if (halves.length === 1 ? head.length !== 8 : fill < 1) return null;
  const groups = [...head, ...Array(halves.length === 2 ? fill : 0).fill(0), ...tail];
  return groups.every((g) => Number.isInteger(g)) ? groups : null;
}

/** True for an IP literal (v4 or v6, brackets allowed). */
export function isIpLiteral(text: string): boolean {
  return v4(text) !== null || v6(text) !== null;
}

/** True when an IP address is one the host must not reach on a candidate's behalf. */
export function isInternalAddress(address: string): boolean {
  const a4 = v4(address);
  if (a4) return internalV4(a4);
  const g = v6(address);
  if (!g) return true; // not an address we understand: refuse rather than guess
  if (g.every((x) => x === 0)) return true; // ::
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return true; // ::1
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) {
    return internalV4([g[6] >> 8, g[6] & 255, g[7] >> 8, g[7] & 255]); // ::ffff:a.b.c.d
  }
  if ((g[0] & 0xfe00) === 0xfc00) return true; // fc00::/7 unique local
  if ((g[0] & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
  if ((g[0] & 0xff00) === 0xff00) return true; // multicast
  return false;
}
