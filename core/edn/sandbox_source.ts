/**
 * The EDN reader as plain JavaScript for the checker sandbox.
 *
 * `EDN_SANDBOX_SOURCE` is a script (no imports, no TypeScript) that defines a global
 * `edn` object when evaluated in a bare global scope (QuickJS):
 *
 * - `edn.parse(text, file?)` → the plain value of the one EDN value in `text` (the
 *   mapping of plain.ts: keywords become strings without the colon, maps objects, …).
 *   Bad input throws an Error named "EdnSyntaxError" whose message names line and column
 *   (`answer.edn line 3, column 7: unclosed map (opened at line 1, column 1)`), with
 *   `line`, `column` and `hint` properties.
 * - `edn.stringify(value, pretty?)` → EDN text for plain data (object keys become
 *   keywords), as writeEdn.
 *
 * The script is assembled from the source text of the same functions the host uses (the
 * model classes of values.ts and the self-contained cores of read.ts, write.ts and
 * plain.ts; Deno has stripped their types by the time `toString()` runs), so there is one
 * grammar, not two.
 */
import {
  EdnChar,
  EdnFloat,
  EdnList,
  EdnSet,
  EdnSymbol,
  EdnTagged,
  EdnUuid,
  Keyword,
} from "./values.ts";
import { EDN_MAX_DEPTH, ednReaderCore } from "./read.ts";
import { ednWriterCore } from "./write.ts";
import { ednPlainCore } from "./plain.ts";

const CLASSES = [Keyword, EdnSymbol, EdnChar, EdnList, EdnSet, EdnTagged, EdnUuid, EdnFloat];

function buildSource(): string {
  const names = CLASSES.map((c) => c.name);
  return `globalThis.edn = (function () {
"use strict";
${CLASSES.map((c) => `const ${c.name} = (${c.toString()});`).join("\n")}
const M = { ${names.join(", ")} };
const reader = (${ednReaderCore.toString()})(M);
const writer = (${ednWriterCore.toString()})(M, reader.validName);
const plain = (${ednPlainCore.toString()})(M, writer.write);
function parse(text, file) {
  if (typeof text !== "string") throw new TypeError("edn.parse needs a string");
  try {
    return plain.toPlain(reader.read(text, typeof file === "string" ? file : null, ${EDN_MAX_DEPTH}, true)[0]);
  } catch (e) {
    if (e && e.name === "EdnSyntaxError") {
      e.line = e.ednLine;
      e.column = e.ednColumn;
      e.hint = e.ednHint;
    }
    throw e;
  }
}
function stringify(value, pretty) {
  return writer.write(value, pretty === true);
}
return Object.freeze({ parse, stringify });
})();
`;
}

/**
 * Plain JavaScript that, evaluated as a script, defines the global `edn` object
 * (`edn.parse(text, file?)`, `edn.stringify(value, pretty?)`) for checkers in QuickJS.
 */
export const EDN_SANDBOX_SOURCE: string = buildSource();
