// A sortable, filterable table of one kind of element (sites, links, candidate routes), whose rows the map
// selects and which selects on the map. Every cell is text (textContent); values are shown as the API sent them.

import { clear, formatValue, h } from "./dom";
import type { Properties } from "./api";

export interface Column {
  key: string;
  label: string;
  numeric?: boolean;
}

/** From this many rows a table is virtual: only the rows in view (and a margin) are in the page, between two
 * spacers as tall as the rows above and below them, so a 5,000-row table costs the same to open, sort, filter,
 * scroll or select in as a 100-row one (the sort and the filter still run over every row). Its columns keep the
 * widths measured from its first rows (`table-layout: fixed`), so they do not jump as it scrolls. */
export const VIRTUAL_FROM = 1000;
/** Rows drawn above and below the rows in view. */
const MARGIN_ROWS = 30;
/** A row's height before one is measured (a table in a hidden tab has none). */
const DEFAULT_ROW_PX = 23;

const COLLATOR = new Intl.Collator("en", { numeric: true });

export class DataTable {
  readonly element: HTMLElement;
  private readonly table: HTMLTableElement;
  private readonly body: HTMLTableSectionElement;
  private readonly scroller: HTMLElement;
  private readonly spacerAbove = h("div", { class: "spacer", "aria-hidden": "true" });
  private readonly spacerBelow = h("div", { class: "spacer", "aria-hidden": "true" });
  private readonly headers = new Map<string, HTMLTableCellElement>();
  private readonly rowsById = new Map<string, HTMLTableRowElement>();
  private readonly count: HTMLElement;
  /** Each row's text as the filter reads it (its cells as shown and as sent, lower case), made once. */
  private readonly searchText = new Map<Properties, string>();
  private readonly virtual: boolean;
  private sortKey: string | null = null;
  private sortDescending = false;
  private filterText = "";
  private selectedId: string | null = null;
  /** The rows the filter keeps, in the sort's order; `visible[first]` to `visible[last - 1]` are in the page. */
  private visible: Properties[] = [];
  private visibleIndex = new Map<string, number>();
  private first = 0;
  private last = 0;
  private rowPx = DEFAULT_ROW_PX;
  private scrollQueued = false;
  private everDrawn = false;
  /** Where the table is scrolled to (px), as its last scroll event said. */
  private scrollTopPx = 0;
  /** An editor for some cells (what-if editing): returns the cell's content, or null to show the value as text. */
  cellEditor: ((row: Properties, column: Column) => Node | null) | null = null;

  constructor(readonly kind: string, private readonly columns: Column[], private readonly rows: Properties[],
              private readonly onSelect: (id: string) => void) {
    this.virtual = rows.length >= VIRTUAL_FROM;
    const filter = h("input", { type: "search", placeholder: `Filter ${kind}…`, "aria-label": `Filter ${kind}`,
                                class: "filter" });
    filter.addEventListener("input", () => {
      this.filterText = filter.value.trim().toLowerCase();
      this.render();
    });
    this.count = h("span", { class: "count" });
    const headRow = h("tr");
    for (const column of columns) {
      const th = h("th", { scope: "col", tabindex: 0, class: column.numeric ? "num" : undefined, "data-key": column.key,
                           "aria-sort": "none", title: `Sort by ${column.label}` }, column.label);
      th.addEventListener("click", () => this.sortBy(column.key));
      th.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          this.sortBy(column.key);
        }
      });
      this.headers.set(column.key, th);
      headRow.append(th);
    }
    this.body = h("tbody");
    // one listener for every row (a row is found by its data-id), not two per row
    this.body.addEventListener("click", (event) => this.rowEvent(event));
    this.body.addEventListener("keydown", (event) => {
      if (event.key === "Enter") this.rowEvent(event);
    });
    this.table = h("table", { class: this.virtual ? "data virtual" : "data", "data-kind": kind,
                              "aria-rowcount": rows.length + 1 }, h("thead", {}, headRow), this.body);
    this.scroller = h("div", { class: "table-scroll" }, this.spacerAbove, this.table, this.spacerBelow);
    this.scroller.addEventListener("scroll", () => {
      this.scrollTopPx = this.scroller.scrollTop;
    }, { passive: true });
    if (this.virtual) {
      this.fixColumnWidths();
      this.scroller.addEventListener("scroll", () => {
        if (this.scrollQueued) return;
        this.scrollQueued = true;
        requestAnimationFrame(() => {
          this.scrollQueued = false;
          this.drawInView();
        });
      }, { passive: true });
      // shown (its tab opened) or resized: measure the rows and draw the ones in view
      new ResizeObserver(() => this.drawInView()).observe(this.scroller);
    }
    this.element = h("section", { class: "table-view", "data-kind": kind },
                     h("div", { class: "table-tools" }, filter, this.count), this.scroller);
  }

  /** Draw the rows, once (a table is drawn when it is first shown, or when the page has time after the first
   * table): later draws come from sorting, filtering and `refresh`. */
  draw(): void {
    if (!this.everDrawn) this.render();
  }

  /** Sort by a column; a second click on the same column reverses the order. */
  sortBy(key: string): void {
    this.sortDescending = this.sortKey === key ? !this.sortDescending : false;
    this.sortKey = key;
    for (const [name, th] of this.headers) {
      th.setAttribute("aria-sort", name !== key ? "none" : this.sortDescending ? "descending" : "ascending");
    }
    this.render();
  }

  /** Mark a row selected (or none); scroll it into view when asked. Returns whether the row exists. */
  select(id: string | null, scroll: boolean): boolean {
    const previous = this.selectedId === null ? undefined : this.rowsById.get(this.selectedId);
    previous?.classList.remove("selected");
    previous?.removeAttribute("aria-selected");
    this.selectedId = id;
    if (id === null) return false;
    this.draw();
    let index = this.visibleIndex.get(id);
    if (index === undefined && this.filterText) {  // hidden by the filter: clear it so the selection shows
      this.filterText = "";
      const input = this.element.querySelector("input.filter") as HTMLInputElement;
      input.value = "";
      this.render();
      index = this.visibleIndex.get(id);
    }
    if (index === undefined) return false;
    if (scroll && this.virtual) {  // scroll its place into the middle of the view, then draw the rows there
      this.scroller.scrollTop = Math.max(0, index * this.rowPx - this.scroller.clientHeight / 2);
      this.drawInView();
    }
    if (index < this.first || index >= this.last) this.drawRange(index - MARGIN_ROWS, index + MARGIN_ROWS);
    const row = this.rowsById.get(id);
    if (row === undefined) return false;
    row.classList.add("selected");
    row.setAttribute("aria-selected", "true");
    if (scroll) row.scrollIntoView({ block: "center" });
    return true;
  }

  /** Draw the rows again (after the cell editor changed), at the same place. */
  refresh(): void {
    if (!this.everDrawn) return;  // drawn later, when shown, with the cell editor as it is then
    this.searchText.clear();
    this.render(true);
  }

  private rowEvent(event: Event): void {
    const id = (event.target as Element).closest("tr")?.getAttribute("data-id");
    if (id !== null && id !== undefined) this.onSelect(id);
  }

  private matches(row: Properties, needle: string): boolean {
    let text = this.searchText.get(row);
    if (text === undefined) {
      text = this.columns.map((c) => `${formatValue(row[c.key])}\u0000${String(row[c.key] ?? "")}`).join("\u0000").toLowerCase();
      this.searchText.set(row, text);
    }
    return text.includes(needle);
  }

  private visibleRows(): Properties[] {
    const needle = this.filterText;
    const rows = needle ? this.rows.filter((row) => this.matches(row, needle)) : [...this.rows];
    if (this.sortKey !== null) {
      const key = this.sortKey;
      const sign = this.sortDescending ? -1 : 1;
      rows.sort((a, b) => sign * compare(a[key], b[key]));
    }
    return rows;
  }

  /** Filter and sort, then draw every row (a small table) or the rows in view (a virtual one): from the top, or
   * at the same place when `keepPlace` (the same rows drawn again, as after an edit). */
  private render(keepPlace = false): void {
    this.everDrawn = true;
    this.visible = this.visibleRows();
    this.visibleIndex = new Map(this.visible.map((row, i) => [String(row.id), i]));
    this.first = this.last = 0;
    clear(this.body);
    this.rowsById.clear();
    // the rows drawn again keep their place by themselves (nothing is laid out between); a new order or filter
    // starts at the top. The position is the one the scroll events gave: reading it here would make the browser
    // lay out the whole page at once
    if (!keepPlace && this.scrollTopPx > 0) this.scroller.scrollTop = this.scrollTopPx = 0;
    if (this.virtual) this.drawInView();
    else this.drawRange(0, this.visible.length);
    const total = this.rows.length;
    this.count.textContent = this.visible.length === total ? `${formatValue(total)} ${this.kind}`
                                                           : `${formatValue(this.visible.length)} of ${formatValue(total)} ${this.kind}`;
  }

  /** A virtual table: draw the rows the scroll position shows, with a margin above and below. */
  private drawInView(): void {
    if (this.element.hidden || !this.scroller.isConnected) {  // not shown: the first rows, nothing measured
      this.drawRange(0, 40 + MARGIN_ROWS);
      return;
    }
    const measured = this.body.rows[0]?.getBoundingClientRect().height ?? 0;
    if (measured > 0) this.rowPx = measured;
    const top = Math.floor(this.scroller.scrollTop / this.rowPx);
    const inView = Math.ceil((this.scroller.clientHeight || 40 * this.rowPx) / this.rowPx);
    this.drawRange(top - MARGIN_ROWS, top + inView + MARGIN_ROWS);
  }

  /** Make the rows `visible[from]` to `visible[to - 1]` the ones in the page. Rows that stay are not touched (a
   * focused row keeps its focus); rows that leave are removed and new ones added above or below. */
  private drawRange(fromIndex: number, toIndex: number): void {
    const from = Math.max(0, Math.min(fromIndex, this.visible.length));
    const to = Math.max(from, Math.min(toIndex, this.visible.length));
    if (to <= this.first || from >= this.last) {  // nothing in common: start again
      clear(this.body);
      this.rowsById.clear();
      this.first = this.last = from;
    }
    for (; this.first < from; this.first++) this.removeRow(this.body.firstElementChild);
    for (; this.last > to; this.last--) this.removeRow(this.body.lastElementChild);
    const above = document.createDocumentFragment();
    for (let i = from; i < this.first; i++) above.append(this.drawRow(this.visible[i]));
    this.body.prepend(above);
    const below = document.createDocumentFragment();
    for (let i = this.last; i < to; i++) below.append(this.drawRow(this.visible[i]));
    this.body.append(below);
    this.first = from;
    this.last = to;
    if (this.virtual) {
      this.spacerAbove.style.height = `${from * this.rowPx}px`;
      this.spacerBelow.style.height = `${(this.visible.length - to) * this.rowPx}px`;
    }
  }

  private removeRow(row: Element | null): void {
    const id = row?.getAttribute("data-id");
    if (id !== null && id !== undefined) this.rowsById.delete(id);
    row?.remove();
  }

  private drawRow(row: Properties): HTMLTableRowElement {
    const id = String(row.id);
    const tr = h("tr", { "data-id": id, tabindex: 0, "aria-rowindex": (this.visibleIndex.get(id) ?? 0) + 2 });
    for (const column of this.columns) {
      const edited = this.cellEditor?.(row, column) ?? null;
      tr.append(h("td", { class: column.numeric ? "num" : undefined }, edited ?? formatValue(row[column.key])));
    }
    if (id === this.selectedId) {
      tr.classList.add("selected");
      tr.setAttribute("aria-selected", "true");
    }
    this.rowsById.set(id, tr);
    return tr;
  }

  /** A virtual table's column widths (in `ch`), from the longest of its label and its first 200 values as shown. */
  private fixColumnWidths(): void {
    const sample = this.rows.slice(0, 200);
    for (const column of this.columns) {
      const longest = Math.max(column.label.length + 2, ...sample.map((row) => formatValue(row[column.key]).length));
      (this.headers.get(column.key) as HTMLElement).style.width = `${Math.min(40, longest) + 3}ch`;
    }
  }
}

function compare(a: unknown, b: unknown): number {
  const emptyA = a === null || a === undefined || a === "";
  const emptyB = b === null || b === undefined || b === "";
  if (emptyA || emptyB) return emptyA === emptyB ? 0 : emptyA ? 1 : -1;  // empty cells last
  if (typeof a === "number" && typeof b === "number") return a - b;
  return COLLATOR.compare(String(a), String(b));
}
