// Small SVG bar charts for the Results view: grouped or stacked bars per category (a quarter, a failure state),
// a hover (or keyboard focus) card with every series' value as the API served it, and SVG and PNG downloads.
// Drawn with presentation attributes only (fill, stroke, font-size): the page's content security policy has no
// 'unsafe-inline' for styles, and a downloaded SVG then needs no style sheet. Text goes in through textContent.

import { formatValue, h, saveBlob } from "./dom";

const SVG_NS = "http://www.w3.org/2000/svg";

/** One series of a bar chart: a value per category (null: no figure, no bar). */
export interface Series {
  name: string;
  color: string;
  values: (number | null)[];
}

export interface BarChartSpec {
  /** The figure's id (also the stem of the downloaded file names). */
  id: string;
  title: string;
  categories: string[];
  series: Series[];
  /** Stacked bars (parts of one whole) or grouped side by side (figures to compare). */
  stacked: boolean;
  /** The unit of the values, shown on the axis and in the hover card ("USD", "Gb/s", "states"). */
  unit: string;
  /** Extra lines of a category's hover card (names of violated states, a design status). */
  details?: (index: number) => string[];
  /** A click, Enter or Space on a category's column. */
  onSelect?: (index: number) => void;
  /** A sentence under the chart (what is left out, what a colour means). */
  note?: string;
}

const COMPACT = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>,
                                                    text?: string): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  if (text !== undefined) el.textContent = text;
  return el;
}

/** A round axis maximum (1, 2 or 5 times a power of ten) at or above `max`, and its tick step. */
export function niceScale(max: number, integer = false, ticks = 4): { top: number; step: number } {
  if (!(max > 0)) return integer ? { top: 1, step: 1 } : { top: 1, step: 0.25 };
  const raw = integer ? Math.max(1, max / ticks) : max / ticks;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = (integer ? [1, 2, 5, 10] : [1, 2, 2.5, 5, 10]).map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  return { top: Math.ceil(max / step - 1e-9) * step, step };
}

/** A category's hover-card lines: each series' value with the unit, then the spec's details. */
function cardLines(spec: BarChartSpec, i: number): string[] {
  const lines = spec.series.map((s) => `${s.name}: ${s.values[i] === null ? "no figure" : `${formatValue(s.values[i])} ${spec.unit}`}`);
  return [...lines, ...(spec.details?.(i) ?? [])];
}

/** Draw the chart: an `<svg>` sized by its viewBox (the width follows the categories). */
function draw(spec: BarChartSpec): SVGSVGElement {
  const n = spec.categories.length;
  const longest = Math.max(0, ...spec.categories.map((c) => c.length));
  const rotate = n > 8 || longest * 6.5 > 560 / Math.max(n, 1);
  const left = 64, right = 16, top = 46;
  const bottom = rotate ? Math.min(120, 20 + longest * 4.6) : 34;
  const narrow = Math.max(22, Math.min(90, 640 / Math.max(n, 1)));
  const legendWidth = spec.series.reduce((sum, s) => sum + 24 + s.name.length * 6.2, 0);
  const width = Math.max(left + right + narrow * n, left + right + Math.max(spec.title.length * 8.2, legendWidth), 360);
  const column = (width - left - right) / Math.max(n, 1);  // the columns spread over the width a long title needs
  const height = top + 180 + bottom;
  const plot = 180;
  const totals = spec.categories.map((_, i) => spec.stacked
    ? spec.series.reduce((sum, s) => sum + Math.max(0, s.values[i] ?? 0), 0)
    : Math.max(0, ...spec.series.map((s) => s.values[i] ?? 0)));
  const counts = spec.series.every((s) => s.values.every((v) => v === null || Number.isInteger(v)));
  const { top: max, step } = niceScale(Math.max(0, ...totals), counts);
  const y = (v: number) => top + plot - (plot * v) / max;
  const root = svg("svg", { xmlns: SVG_NS, viewBox: `0 0 ${width} ${height}`, width, height, "aria-label": spec.title,
                            "font-family": "system-ui, sans-serif", "font-size": 11, class: "chart-svg" });
  root.append(svg("title", {}, spec.title), svg("rect", { x: 0, y: 0, width, height, fill: "#ffffff" }),
    svg("text", { x: left, y: 16, "font-size": 13, "font-weight": 600, fill: "#10202c" }, spec.title));
  // legend
  let lx = left;
  for (const s of spec.series) {
    root.append(svg("rect", { x: lx, y: 25, width: 10, height: 10, fill: s.color }),
      svg("text", { x: lx + 14, y: 34, fill: "#33444f" }, s.name));
    lx += 24 + s.name.length * 6.2;
  }
  // axis and grid
  for (let v = 0; v <= max + step / 2; v += step) {
    root.append(svg("line", { x1: left, x2: width - right, y1: y(v), y2: y(v), stroke: "#dde3e8", "stroke-width": 1 }),
      svg("text", { x: left - 6, y: y(v) + 4, "text-anchor": "end", fill: "#55656f" }, COMPACT.format(v)));
  }
  root.append(svg("text", { x: 12, y: top + plot / 2, "text-anchor": "middle", fill: "#55656f",
                            transform: `rotate(-90 12 ${top + plot / 2})` }, spec.unit));
  spec.categories.forEach((category, i) => {
    const x0 = left + column * i;
    const group = svg("g", { class: "chart-column", "data-index": i, "data-category": category, tabindex: 0,
                             role: spec.onSelect ? "button" : "img", "aria-label": `${category}: ${cardLines(spec, i).join("; ")}` });
    group.append(svg("title", {}, `${category}\n${cardLines(spec, i).join("\n")}`),
      svg("rect", { x: x0, y: top, width: column, height: plot, fill: "#ffffff", "fill-opacity": 0, class: "chart-hit" }));
    const inner = Math.min(column * 0.74, 90);
    let base = 0;
    spec.series.forEach((s, k) => {
      const v = s.values[i];
      if (v === null || !(v > 0)) return;
      const bar = spec.stacked
        ? { x: x0 + (column - inner) / 2, w: inner, y0: y(base + v), y1: y(base) }
        : { x: x0 + (column - inner) / 2 + (inner / spec.series.length) * k, w: inner / spec.series.length,
            y0: y(v), y1: y(0) };
      if (spec.stacked) base += v;
      group.append(svg("rect", { x: bar.x, y: bar.y0, width: Math.max(1, bar.w - 1), height: Math.max(1, bar.y1 - bar.y0),
                                 fill: s.color, "data-series": s.name, "data-value": v }));
    });
    const lx = x0 + column / 2, ly = top + plot + 14;
    group.append(svg("text", rotate ? { x: lx, y: ly, "text-anchor": "end", fill: "#33444f", transform: `rotate(-40 ${lx} ${ly})` }
                                   : { x: lx, y: ly, "text-anchor": "middle", fill: "#33444f" }, category));
    root.append(group);
  });
  root.append(svg("line", { x1: left, x2: width - right, y1: y(0), y2: y(0), stroke: "#55656f", "stroke-width": 1 }));
  return root;
}

/** The chart as a standalone SVG document. */
export function svgText(chart: SVGSVGElement): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(chart)}\n`;
}

/** The chart drawn onto a canvas at twice its size, as a PNG. */
export async function pngBlob(chart: SVGSVGElement): Promise<Blob> {
  const url = URL.createObjectURL(new Blob([svgText(chart)], { type: "image/svg+xml" }));
  try {
    const image = new Image();
    await new Promise<void>((resolve, reject) => {
      image.onload = () => resolve();
      image.onerror = () => reject(new Error("the chart could not be drawn as an image"));
      image.src = url;
    });
    const scale = 2;
    const canvas = document.createElement("canvas");
    canvas.width = Number(chart.getAttribute("width")) * scale;
    canvas.height = Number(chart.getAttribute("height")) * scale;
    const context = canvas.getContext("2d");
    if (context === null) throw new Error("no 2D canvas in this browser");
    context.drawImage(image, 0, 0, canvas.width, canvas.height);
    return await new Promise<Blob>((resolve, reject) =>
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error("the PNG could not be made"))), "image/png"));
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** A bar chart as a figure: the SVG, its hover card, and *SVG* and *PNG* download buttons. */
export function barChart(spec: BarChartSpec, report: (text: string, isError: boolean) => void): HTMLElement {
  const chart = draw(spec);
  const card = h("div", { class: "chart-card", role: "status", "aria-live": "polite" });
  card.hidden = true;
  const frame = h("div", { class: "chart-frame" });
  frame.append(chart, card);
  const show = (group: Element) => {
    const i = Number(group.getAttribute("data-index"));
    card.replaceChildren(h("strong", {}, spec.categories[i]), ...cardLines(spec, i).map((line) => h("div", {}, line)));
    card.setAttribute("data-index", String(i));
    card.hidden = false;
    const box = group.getBoundingClientRect();
    const outer = frame.getBoundingClientRect();
    // CSSOM, not a style attribute (the CSP has no unsafe-inline)
    card.style.left = `${Math.min(Math.max(0, box.left - outer.left + frame.scrollLeft + box.width + 4), frame.scrollWidth - 220)}px`;
    card.style.top = "40px";
  };
  for (const group of Array.from(chart.querySelectorAll(".chart-column"))) {
    group.addEventListener("mouseenter", () => show(group));
    group.addEventListener("focus", () => show(group));
    group.addEventListener("mouseleave", () => { card.hidden = true; });
    group.addEventListener("blur", () => { card.hidden = true; });
    const select = spec.onSelect;
    if (select) {
      const i = Number(group.getAttribute("data-index"));
      group.addEventListener("click", () => select(i));
      group.addEventListener("keydown", (event) => {
        const key = (event as KeyboardEvent).key;
        if (key === "Enter" || key === " ") { event.preventDefault(); select(i); }
      });
    }
  }
  const svgButton = h("button", { type: "button", class: "secondary chart-svg-download", "data-chart": spec.id }, "SVG");
  svgButton.addEventListener("click", () => saveBlob(new Blob([svgText(chart)], { type: "image/svg+xml" }), `${spec.id}.svg`));
  const pngButton = h("button", { type: "button", class: "secondary chart-png-download", "data-chart": spec.id }, "PNG");
  pngButton.addEventListener("click", () => {
    pngBlob(chart).then((blob) => saveBlob(blob, `${spec.id}.png`))
      .catch((e) => report(e instanceof Error ? e.message : String(e), true));
  });
  return h("figure", { class: "chart", id: spec.id },
    h("div", { class: "chart-tools" }, h("span", { class: "meta" }, "Hover or focus a column for its figures; download:"),
      svgButton, pngButton),
    frame, spec.note ? h("figcaption", { class: "hint" }, spec.note) : null);
}
