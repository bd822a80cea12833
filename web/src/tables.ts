// A sortable, filterable table of one kind of element (sites, links, candidate routes), whose rows the map
// selects and which selects on the map. Every cell is text (textContent); values are shown as the API sent them.

import { clear, formatValue, h } from "./dom";
import type { Properties } from "./api";

export interface Column {
  key: string;
  label: string;
  numeric?: boolean;
}

export class DataTable {
  readonly element: HTMLElement;
  private readonly body: HTMLTableSectionElement;
  private readonly headers = new Map<string, HTMLTableCellElement>();
  private readonly rowsById = new Map<string, HTMLTableRowElement>();
  private readonly count: HTMLElement;
  private sortKey: string | null = null;
  private sortDescending = false;
  private filterText = "";
  private selectedId: string | null = null;
  /** An editor for some cells (what-if editing): returns the cell's content, or null to show the value as text. */
  cellEditor: ((row: Properties, column: Column) => Node | null) | null = null;

  constructor(readonly kind: string, private readonly columns: Column[], private readonly rows: Properties[],
              private readonly onSelect: (id: string) => void) {
    const filter = h("input", { type: "search", placeholder: `Filter ${kind}…`, "aria-label": `Filter ${kind}`,
                                class: "filter" });
    filter.addEventListener("input", () => {
      this.filterText = filter.value.trim().toLowerCase();
      this.render();
    });
    this.count = h("span", { class: "count" });
    const headRow = h("tr");
    for (const column of columns) {
      const th = h("th", { scope: "col", tabindex: 0, class: column.numeric ? "num" : undefined,
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
    const table = h("table", { class: "data", "data-kind": kind }, h("thead", {}, headRow), this.body);
    this.element = h("section", { class: "table-view", "data-kind": kind },
                     h("div", { class: "table-tools" }, filter, this.count),
                     h("div", { class: "table-scroll" }, table));
    this.render();
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
    let row = this.rowsById.get(id);
    if (row === undefined && this.filterText) {  // hidden by the filter: clear it so the selection shows
      this.filterText = "";
      const input = this.element.querySelector("input.filter") as HTMLInputElement;
      input.value = "";
      this.render();
      row = this.rowsById.get(id);
    }
    if (row === undefined) return false;
    row.classList.add("selected");
    row.setAttribute("aria-selected", "true");
    if (scroll) row.scrollIntoView({ block: "center" });
    return true;
  }

  private visibleRows(): Properties[] {
    const needle = this.filterText;
    let rows = needle ? this.rows.filter((row) => this.columns.some((c) => formatValue(row[c.key]).toLowerCase().includes(needle)
                                                                       || String(row[c.key] ?? "").toLowerCase().includes(needle)))
                      : [...this.rows];
    if (this.sortKey !== null) {
      const key = this.sortKey;
      const sign = this.sortDescending ? -1 : 1;
      rows = rows.sort((a, b) => sign * compare(a[key], b[key]));
    }
    return rows;
  }

  /** Draw the rows again (after the cell editor changed). */
  refresh(): void {
    this.render();
  }

  private render(): void {
    clear(this.body);
    this.rowsById.clear();
    const rows = this.visibleRows();
    const fragment = document.createDocumentFragment();
    for (const row of rows) {
      const id = String(row.id);
      const tr = h("tr", { "data-id": id, tabindex: 0 });
      for (const column of this.columns) {
        const edited = this.cellEditor?.(row, column) ?? null;
        tr.append(h("td", { class: column.numeric ? "num" : undefined }, edited ?? formatValue(row[column.key])));
      }
      tr.addEventListener("click", () => this.onSelect(id));
      tr.addEventListener("keydown", (event) => {
        if (event.key === "Enter") this.onSelect(id);
      });
      if (id === this.selectedId) tr.classList.add("selected");
      this.rowsById.set(id, tr);
      fragment.append(tr);
    }
    this.body.append(fragment);
    this.count.textContent = rows.length === this.rows.length ? `${this.rows.length} ${this.kind}`
                                                            : `${rows.length} of ${this.rows.length} ${this.kind}`;
  }
}

function compare(a: unknown, b: unknown): number {
  const emptyA = a === null || a === undefined || a === "";
  const emptyB = b === null || b === undefined || b === "";
  if (emptyA || emptyB) return emptyA === emptyB ? 0 : emptyA ? 1 : -1;  // empty cells last
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), "en", { numeric: true });
}
