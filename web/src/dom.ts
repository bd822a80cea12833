// DOM helpers: every piece of text goes in through textContent, never innerHTML, so names from a scenario
// (sites, links, scenarios, teams) are shown as text whatever characters they hold.

type Attrs = Record<string, string | number | boolean | undefined>;
type Child = Node | string | number | null | undefined | false;

/** Create an element with attributes (set by setAttribute, never as HTML) and children (strings as text). */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, ...children);
  return el;
}

/** Append children to an element: nodes as they are, strings and numbers as text nodes. */
export function append(el: Element, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Remove every child of an element. */
export function clear(el: Element): void {
  el.replaceChildren();
}

const NUMBER = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });

/** A value as a table cell shows it: numbers grouped with at most 2 decimals, nulls empty. */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return Number.isFinite(value) ? NUMBER.format(value) : String(value);
  return String(value);
}

/** Save a blob under a file name (an object URL on a temporary link; nothing leaves the browser). */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
