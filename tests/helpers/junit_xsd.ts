/**
 * The rules of Jenkins' JUnit schema (the xunit plugin's junit-10.xsd), written out as
 * code so a test can hold every JUnit file dvergr writes to them without a schema download
 * or an XSD validator: which elements may hold which, the attributes each may carry (and
 * must), and the pattern of `time`. Also a small strict XML reader for the documents we
 * write (elements, attributes in double quotes, text with the five entities; no CDATA,
 * comments or doctype), which refuses anything else rather than guessing.
 */

export interface XmlElement {
  name: string;
  attributes: Map<string, string>;
  children: XmlElement[];
  /** The text directly inside the element, entities decoded. */
  text: string;
}

const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
};

function decode(text: string, where: string): string {
  return text.replace(/&([a-z]+|#[0-9]+|#x[0-9a-f]+);|&/gi, (all, name?: string) => {
    if (name === undefined) throw new Error(`${where}: a bare "&"`);
    if (name.startsWith("#x")) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith("#")) return String.fromCodePoint(Number(name.slice(1)));
    const v = ENTITIES[name];
    if (v === undefined) throw new Error(`${where}: unknown entity ${all}`);
    return v;
  });
}

/** Reads an XML document with one root element; throws on anything it does not know. */
export function readXml(xml: string): XmlElement {
  let i = 0;
  const decl = /^<\?xml version="1\.0" encoding="UTF-8"\?>\n/.exec(xml);
  if (!decl) {
    throw new Error('the document does not start with <?xml version="1.0" encoding="UTF-8"?>');
  }
  i = decl[0].length;
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  const tag = /<(\/?)([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.-]*="[^"<]*")*)\s*(\/?)>/y;
  while (i < xml.length) {
    const lt = xml.indexOf("<", i);
    const text = xml.slice(i, lt === -1 ? xml.length : lt);
    if (text.trim() !== "") {
      if (stack.length === 0) {
        throw new Error(`text outside the root element: ${text.slice(0, 40)}`);
      }
      stack[stack.length - 1].text += decode(text, `<${stack[stack.length - 1].name}>`);
    }
    if (lt === -1) break;
    tag.lastIndex = lt;
    const m = tag.exec(xml);
    if (!m) throw new Error(`not a tag at offset ${lt}: ${xml.slice(lt, lt + 40)}`);
    const [, close, name, attrs, selfClose] = m;
    i = tag.lastIndex;
    if (close) {
      const open = stack.pop();
      if (!open || open.name !== name) throw new Error(`</${name}> closes <${open?.name}>`);
      if (stack.length === 0) root = open;
      continue;
    }
    const attributes = new Map<string, string>();
    for (const a of attrs.matchAll(/([A-Za-z_][\w.-]*)="([^"<]*)"/g)) {
      if (attributes.has(a[1])) throw new Error(`<${name}> has ${a[1]} twice`);
      attributes.set(a[1], decode(a[2], `<${name} ${a[1]}>`));
    }
    const el: XmlElement = { name, attributes, children: [], text: "" };
    if (stack.length > 0) stack[stack.length - 1].children.push(el);
    else if (root !== null) throw new Error("a second root element");
    if (selfClose) {
      if (stack.length === 0) root = el;
    } else stack.push(el);
  }
  if (stack.length > 0) throw new Error(`<${stack[stack.length - 1].name}> is not closed`);
  if (!root) throw new Error("no root element");
  return root;
}

interface ElementRule {
  children: string[];
  required: string[];
  optional: string[];
  /** Whether it may hold text (xs:complexType mixed, or xs:string). */
  text: boolean;
}

const RERUN = ["rerunFailure", "rerunError", "flakyFailure", "flakyError"];
const RESULT: ElementRule = {
  children: [],
  required: [],
  optional: ["type", "message"],
  text: true,
};
const STRING: ElementRule = { children: [], required: [], optional: [], text: true };

/** junit-10.xsd, element by element. */
const RULES: Record<string, ElementRule> = {
  testsuites: {
    children: ["testsuite"],
    required: [],
    optional: ["name", "time", "tests", "failures", "errors"],
    text: false,
  },
  testsuite: {
    children: ["testsuite", "properties", "testcase", "system-out", "system-err"],
    required: ["name", "tests", "failures", "errors"],
    optional: [
      "group",
      "time",
      "skipped",
      "timestamp",
      "hostname",
      "id",
      "package",
      "file",
      "log",
      "url",
    ],
    text: false,
  },
  testcase: {
    children: ["skipped", "error", "failure", ...RERUN, "system-out", "system-err"],
    required: ["name"],
    optional: ["time", "classname", "group"],
    text: false,
  },
  properties: { children: ["property"], required: [], optional: [], text: false },
  property: { children: [], required: ["name", "value"], optional: [], text: false },
  failure: RESULT,
  error: RESULT,
  skipped: RESULT,
  "system-out": STRING,
  "system-err": STRING,
  ...Object.fromEntries(RERUN.map((n) => [n, {
    children: ["stackTrace", "system-out", "system-err"],
    required: ["type"],
    optional: ["message"],
    text: true,
  }])),
  stackTrace: STRING,
};

/** The schema's SUREFIRE_TIME: digits with optional thousands commas and a fraction. */
const SUREFIRE_TIME = /^(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?$/;

function elementProblems(el: XmlElement, path: string, out: string[]): void {
  const rule = RULES[el.name];
  if (!rule) {
    out.push(`${path}: the schema has no element <${el.name}>`);
    return;
  }
  for (const a of rule.required) {
    if (!el.attributes.has(a)) out.push(`${path}: <${el.name}> lacks the required attribute ${a}`);
  }
  for (const a of el.attributes.keys()) {
    if (!rule.required.includes(a) && !rule.optional.includes(a)) {
      out.push(`${path}: <${el.name}> may not have the attribute ${a}`);
    }
  }
  const time = el.attributes.get("time");
  if (time !== undefined && (el.name === "testsuite" || el.name === "testsuites")) {
    if (!SUREFIRE_TIME.test(time)) out.push(`${path}: time="${time}" is not a SUREFIRE_TIME`);
  }
  if (!rule.text && el.text.trim() !== "") out.push(`${path}: <${el.name}> may not hold text`);
  el.children.forEach((c, i) => {
    if (!rule.children.includes(c.name)) {
      out.push(`${path}: <${el.name}> may not hold <${c.name}>`);
    } else elementProblems(c, `${path}/${c.name}[${i}]`, out);
  });
}

/** Every way `xml` breaks junit-10.xsd (none: it validates). */
export function junit10Problems(xml: string): string[] {
  let root: XmlElement;
  try {
    root = readXml(xml);
  } catch (e) {
    return [`not well-formed: ${(e as Error).message}`];
  }
  const out: string[] = [];
  if (root.name !== "testsuites" && root.name !== "testsuite") {
    out.push(`the root element is <${root.name}>, not <testsuites> or <testsuite>`);
  }
  elementProblems(root, root.name, out);
  return out;
}
