// Bar charts in SVG: one bar per category, stacked by series. Every bar segment carries its value
// (data-value), and the chart its accessible name and total, so what is drawn can be checked.

const NS = "http://www.w3.org/2000/svg";
const PALETTE = ["#3454d1", "#16a085", "#e67e22", "#8e44ad", "#c0392b", "#2c3e50", "#d4ac0d", "#7f8c8d"];

function svg(tag, attrs = {}) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

const compact = (n) => new Intl.NumberFormat("en", { notation: "compact" }).format(n);

/**
 * Draw into `container`. `rows` are {category, series, value}; `label` names the chart.
 * Returns the total drawn.
 */
export function barChart(container, rows, { label, unit = "characters" } = {}) {
  const categories = [...new Set(rows.map((r) => r.category))];
  const series = [...new Set(rows.map((r) => r.series))];
  const total = rows.reduce((sum, r) => sum + r.value, 0);
  container.replaceChildren();
  if (!rows.length) {
    const empty = document.createElement("p");
    empty.className = "empty";
    empty.textContent = "No usage in this period.";
    container.append(empty);
    container.dataset.total = "0";
    return 0;
  }
  const stacks = categories.map((c) => rows.filter((r) => r.category === c).reduce((s, r) => s + r.value, 0));
  const max = Math.max(...stacks, 1);
  const width = 640, height = 240, left = 48, bottom = 28, top = 10;
  const plotH = height - bottom - top;
  const slot = (width - left - 8) / categories.length;
  const barW = Math.max(4, Math.min(48, slot * 0.7));
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": `${label}: ${total} ${unit} in all` });
  chart.dataset.total = String(total);
  const title = svg("title");
  title.textContent = `${label}: ${total} ${unit}`;
  chart.append(title);
  for (const f of [0, 0.5, 1]) {
    const y = top + plotH * (1 - f);
    chart.append(svg("line", { x1: left, x2: width, y1: y, y2: y, class: "axis" }));
    const t = svg("text", { x: left - 6, y: y + 4, "text-anchor": "end" });
    t.textContent = compact(max * f);
    chart.append(t);
  }
  categories.forEach((category, i) => {
    const x = left + slot * i + (slot - barW) / 2;
    let y = top + plotH;
    series.forEach((name, j) => {
      const value = rows.filter((r) => r.category === category && r.series === name).reduce((s, r) => s + r.value, 0);
      if (!value) return;
      const h = (value / max) * plotH;
      y -= h;
      const rect = svg("rect", { x, y, width: barW, height: Math.max(h, 1), rx: 2, fill: PALETTE[j % PALETTE.length] });
      rect.dataset.value = String(value);
      rect.dataset.category = category;
      rect.dataset.series = name;
      const tip = svg("title");
      tip.textContent = `${category} · ${name}: ${value} ${unit}`;
      rect.append(tip);
      chart.append(rect);
    });
    if (categories.length <= 16 || i % Math.ceil(categories.length / 12) === 0) {
      const t = svg("text", { x: x + barW / 2, y: height - 10, "text-anchor": "middle" });
      t.textContent = category.length > 10 ? category.slice(5) : category;
      chart.append(t);
    }
  });
  container.append(chart);
  if (series.length > 1 || series[0] !== "") {
    const legend = document.createElement("div");
    legend.className = "legend";
    series.forEach((name, j) => {
      const item = document.createElement("span");
      const swatch = document.createElement("i");
      swatch.style.background = PALETTE[j % PALETTE.length];
      item.append(swatch, name || "–");
      legend.append(item);
    });
    container.append(legend);
  }
  container.dataset.total = String(total);
  return total;
}
