// Usage (customer): the key's own account, from GET /v1/usage, as a chart, a table and CSV.

import { ApiError, call, el, formatNumber, isoDay, json, saveBlob, secrets, showError } from "./api.js";
import { barChart } from "./chart.js";

const $ = (id) => document.getElementById(id);

/** The query for a [from, to] pair of days, both included (the API's `to` is exclusive). */
export function period(fromInput, toInput) {
  const to = new Date(`${toInput.value}T00:00:00Z`);
  to.setUTCDate(to.getUTCDate() + 1);
  return { from: fromInput.value, to: isoDay(to) };
}

/** Every day from one date input to the other, both included (the day chart's axis). */
export function daysBetween(fromInput, toInput) {
  const days = [];
  const day = new Date(`${fromInput.value}T00:00:00Z`);
  const last = new Date(`${toInput.value}T00:00:00Z`);
  while (day <= last && days.length < 400) {
    days.push(isoDay(day));
    day.setUTCDate(day.getUTCDate() + 1);
  }
  return days;
}

export function defaultDates(fromInput, toInput, days = 30) {
  const today = new Date();
  const start = new Date(today);
  start.setUTCDate(start.getUTCDate() - (days - 1));
  if (!toInput.value) toInput.value = isoDay(today);
  if (!fromInput.value) fromInput.value = isoDay(start);
}

export function initUsage() {
  const ui = { form: $("usage-form"), from: $("usage-from"), to: $("usage-to"), csv: $("usage-csv"),
    error: $("usage-error"), total: $("usage-total"), seconds: $("usage-seconds"), chart: $("usage-chart"),
    body: $("usage-body") };
  defaultDates(ui.from, ui.to);

  const query = (groupBy) => new URLSearchParams({ ...period(ui.from, ui.to), groupBy }).toString();

  // Only the latest load's answer is drawn (see books.js: overlapping calls, a changed key).
  let loading = 0;

  async function load() {
    const call = ++loading;
    showError(ui.error, "");
    if (!secrets.apiKey) {
      ui.chart.replaceChildren(el("p", { class: "empty", text: "Paste your API key at the top to see your usage." }));
      ui.body.replaceChildren();
      return;
    }
    ui.total.textContent = "…";
    ui.chart.setAttribute("aria-busy", "true");
    if (!ui.chart.firstChild) ui.chart.append(el("p", { class: "empty", text: "Loading…" }));
    try {
      const report = await json(`/v1/usage?${query("day,model")}`);
      if (call !== loading) return;
      ui.total.textContent = formatNumber(report.total.characters);
      ui.total.dataset.value = String(report.total.characters);
      ui.seconds.textContent = report.total.audioSeconds.toFixed(1);
      barChart(ui.chart, report.rows.map((r) => ({ category: r.day, series: r.model, value: r.characters })),
        { label: "Characters by day and model", axis: daysBetween(ui.from, ui.to) });
      ui.body.replaceChildren(...report.rows.map((r) => el("tr", {},
        el("td", { text: r.day }), el("td", { text: r.model }), el("td", { class: "num", text: formatNumber(r.rows) }),
        el("td", { class: "num", text: formatNumber(r.characters) }),
        el("td", { class: "num", text: r.audioSeconds.toFixed(1) }))));
      ui.chart.removeAttribute("aria-busy");
      if (!report.rows.length) ui.body.append(el("tr", {}, el("td", { colspan: 5, class: "empty", text: "No usage in this period." })));
    } catch (exc) {
      if (call !== loading) return;
      ui.total.textContent = "–";
      ui.chart.replaceChildren();
      ui.chart.removeAttribute("aria-busy");
      showError(ui.error, exc instanceof ApiError ? exc.message : String(exc));
    }
  }

  ui.form.addEventListener("submit", (event) => { event.preventDefault(); load(); });
  ui.csv.addEventListener("click", async () => {
    try {
      const response = await call(`/v1/usage?${query("day,model")}`, { accept: "text/csv" });
      saveBlob(await response.blob(), `lector-usage-${ui.from.value}-${ui.to.value}.csv`);
    } catch (exc) {
      showError(ui.error, exc instanceof ApiError ? exc.message : String(exc));
    }
  });
  return { shown: load };
}
