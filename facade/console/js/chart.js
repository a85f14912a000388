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

/** A category's axis label in `room` pixels: a day as MM-DD, anything longer cut with an ellipsis. */
function tick(category, room) {
  const text = /^\d{4}-\d{2}-\d{2}$/.test(category) && room < 70 ? category.slice(5) : category;
  const fits = Math.max(3, Math.floor(room / 6.5));
  return text.length > fits ? `${text.slice(0, fits - 1)}…` : text;
}

/**
 * Draw into `container`. `rows` are {category, series, value}; `label` names the chart; `axis` lists
 * categories to show even with no value (the days of a period).
 * Returns the total drawn.
 */
const drawn = new WeakMap();  // container -> [rows, options, width drawn at]
const resized = new ResizeObserver((entries) => {
  for (const { target } of entries) {
    const last = drawn.get(target);
    if (last && Math.abs(target.clientWidth - last[2]) > 24) barChart(target, last[0], last[1]);
  }
});

export function barChart(container, rows, options = {}) {
  const { label, unit = "characters", axis = [] } = options;
  if (!drawn.has(container)) resized.observe(container);
  drawn.set(container, [rows, options, container.clientWidth]);
  // `axis`: categories shown even when empty (every day of the period), then any others
  const categories = [...new Set([...axis, ...rows.map((r) => r.category)])];
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
  // drawn at the container's own width, so its text stays at the page's size on a phone and in a narrow column
  const width = Math.round(Math.min(Math.max(container.clientWidth || 640, 260), 1100));
  const height = 220, left = 44, bottom = 28, top = 10;
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
    const every = Math.ceil(categories.length / Math.max(1, Math.floor((width - left) / 56)));
    if (i % every === 0) {
      const t = svg("text", { x: x + barW / 2, y: height - 10, "text-anchor": "middle" });
      t.textContent = tick(category, slot * every);
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
