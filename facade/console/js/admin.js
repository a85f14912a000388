// Admin: accounts, keys (a new key shown once) and usage across accounts, through /admin/*.
// The token lives in session storage and only ever travels in the Authorization header.

import { ApiError, call, el, formatNumber, json, saveBlob, secrets, showError } from "./api.js";
import { barChart } from "./chart.js";
import { daysBetween, defaultDates, period } from "./usage.js";

const $ = (id) => document.getElementById(id);
const message = (exc) => (exc instanceof ApiError ? exc.message : String(exc));

export function initAdmin() {
  const ui = {
    login: $("admin-login"), token: $("admin-token"), error: $("admin-error"), body: $("admin-body"),
    accounts: $("accounts-body"), create: $("account-create"), name: $("account-name"),
    keyForm: $("key-create"), keyAccount: $("key-account"), keyName: $("key-name"), keys: $("keys-body"),
    newKey: $("new-key"), newKeyAccount: $("new-key-account"), newKeyValue: $("new-key-value"),
    copy: $("new-key-copy"), hide: $("new-key-hide"),
    usageForm: $("admin-usage-form"), from: $("admin-from"), to: $("admin-to"), csv: $("admin-csv"),
    total: $("admin-total"), usageBody: $("admin-usage-body"), status: $("admin-status"),
  };
  ui.token.value = secrets.adminToken;
  defaultDates(ui.from, ui.to);
  const admin = (path, options = {}) => json(path, { ...options, token: secrets.adminToken });
  const fail = (exc) => showError(ui.error, message(exc));

  function hideNewKey() {
    ui.newKeyValue.textContent = "";
    ui.newKey.hidden = true;
  }

  async function loadAccounts() {
    ui.body.setAttribute("aria-busy", "true");  // until the accounts and the selected account's keys are drawn
    try { await drawAccounts(); } finally { ui.body.removeAttribute("aria-busy"); }
  }

  async function drawAccounts() {
    const { accounts } = await admin("/admin/accounts");
    const selected = ui.keyAccount.value;
    ui.keyAccount.replaceChildren(...accounts.map((a) => el("option", { value: a.name, text: a.name })));
    if (accounts.some((a) => a.name === selected)) ui.keyAccount.value = selected;
    ui.accounts.replaceChildren(...accounts.map((a) => {
      const limit = el("input", { type: "number", min: 0, value: a.wsConnectionsPerMinute,
        "aria-label": `WebSocket limit for ${a.name}` });
      const toggle = a.status === "active" ? "disabled" : "active";
      return el("tr", { "data-account": a.name },
        el("td", { text: a.name }),
        el("td", {}, el("span", { class: `badge ${a.status}`, text: a.status })),
        el("td", {}, el("div", { class: "inline" }, limit, el("button", { type: "button", text: "Save", "aria-label": `Save limit for ${a.name}`,
          onclick: () => patch(a.name, { wsConnectionsPerMinute: Number(limit.value) }) }))),
        el("td", {}, el("button", { type: "button", class: toggle === "disabled" ? "danger" : "",
          text: toggle === "disabled" ? "Disable" : "Enable", "aria-label": `${toggle === "disabled" ? "Disable" : "Enable"} ${a.name}`,
          onclick: () => patch(a.name, { status: toggle }) })));
    }));
    if (!accounts.length) ui.accounts.append(el("tr", {}, el("td", { colspan: 4, class: "empty", text: "No accounts yet." })));
    await loadKeys();
  }

  async function patch(name, body) {
    showError(ui.error, "");
    try {
      await admin(`/admin/accounts/${encodeURIComponent(name)}`, { method: "PATCH", body });
      await loadAccounts();
    } catch (exc) { fail(exc); }
  }

  async function loadKeys() {
    const account = ui.keyAccount.value;
    if (!account) { ui.keys.replaceChildren(); return; }
    const { keys } = await admin(`/admin/accounts/${encodeURIComponent(account)}/keys`);
    if (ui.keyAccount.value !== account) return; // another account was picked meanwhile: its call draws
    ui.keys.replaceChildren(...keys.map((k) => el("tr", { "data-prefix": k.prefix },
      el("td", { class: "mono", text: `${k.prefix}…` }), el("td", { text: k.name }),
      el("td", { text: k.createdAt ? new Date(k.createdAt).toLocaleDateString() : "" }),
      el("td", {}, el("span", { class: `badge ${k.revokedAt ? "revoked" : "active"}`, text: k.revokedAt ? "revoked" : "active" })),
      el("td", {}, k.revokedAt ? null : el("button", { type: "button", class: "danger", text: "Revoke",
        "aria-label": `Revoke ${k.prefix}`, onclick: () => revoke(k.prefix) })))));
    if (!keys.length) ui.keys.append(el("tr", {}, el("td", { colspan: 5, class: "empty", text: "No keys yet." })));
  }

  async function revoke(prefix) {
    showError(ui.error, "");
    try {
      await admin(`/admin/keys/${encodeURIComponent(prefix)}`, { method: "DELETE" });
      await loadKeys();
    } catch (exc) { fail(exc); }
  }

  const usageQuery = (groupBy) => new URLSearchParams({ ...period(ui.from, ui.to), groupBy }).toString();

  async function loadUsage() {
    const report = await admin(`/admin/usage?${usageQuery("account,model,day")}`);
    ui.total.textContent = formatNumber(report.total.characters);
    ui.total.dataset.value = String(report.total.characters);
    const rows = report.rows;
    barChart($("admin-chart-account"), rows.map((r) => ({ category: r.account, series: r.model, value: r.characters })),
      { label: "Characters by account" });
    barChart($("admin-chart-model"), rows.map((r) => ({ category: r.model, series: "", value: r.characters })),
      { label: "Characters by model" });
    barChart($("admin-chart-day"), rows.map((r) => ({ category: r.day, series: r.account, value: r.characters })),
      { label: "Characters by day", axis: daysBetween(ui.from, ui.to) });
    ui.usageBody.replaceChildren(...rows.map((r) => el("tr", {},
      el("td", { text: r.account }), el("td", { text: r.model }), el("td", { text: r.day }),
      el("td", { class: "num", text: formatNumber(r.rows) }), el("td", { class: "num", text: formatNumber(r.characters) }),
      el("td", { class: "num", text: r.audioSeconds.toFixed(1) }))));
    if (!rows.length) ui.usageBody.append(el("tr", {}, el("td", { colspan: 6, class: "empty", text: "No usage in this period." })));
  }

  async function open() {
    showError(ui.error, "");
    hideNewKey();
    if (!secrets.adminToken) { ui.body.hidden = true; return; }
    ui.login.setAttribute("aria-busy", "true");
    ui.status.textContent = "Loading…";
    try {
      await loadAccounts();
      ui.body.hidden = false;
      await loadUsage();
      ui.status.textContent = "";
    } catch (exc) {
      ui.body.hidden = true;
      ui.status.textContent = "";
      fail(exc);
    } finally {
      ui.login.removeAttribute("aria-busy");
    }
  }

  ui.login.addEventListener("submit", (event) => {
    event.preventDefault();
    secrets.adminToken = ui.token.value.trim();
    open();
  });
  ui.create.addEventListener("submit", async (event) => {
    event.preventDefault();
    showError(ui.error, "");
    try {
      const account = await admin("/admin/accounts", { method: "POST", body: { name: ui.name.value.trim() } });
      ui.name.value = "";
      await loadAccounts();
      ui.keyAccount.value = account.name;
      await loadKeys();
    } catch (exc) { fail(exc); }
  });
  ui.keyAccount.addEventListener("change", () => { hideNewKey(); loadKeys().catch(fail); });
  ui.keyForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    showError(ui.error, "");
    hideNewKey();
    const body = ui.keyName.value.trim() ? { name: ui.keyName.value.trim() } : undefined;
    try {
      const created = await admin(`/admin/accounts/${encodeURIComponent(ui.keyAccount.value)}/keys`,
        { method: "POST", body: body ?? "" });
      ui.newKeyAccount.textContent = created.account;
      ui.newKeyValue.textContent = created.key;  // held nowhere else: gone once hidden
      ui.newKey.hidden = false;
      ui.keyName.value = "";
      await loadKeys();
    } catch (exc) { fail(exc); }
  });
  ui.copy.addEventListener("click", () => navigator.clipboard?.writeText(ui.newKeyValue.textContent));
  ui.hide.addEventListener("click", hideNewKey);
  ui.usageForm.addEventListener("submit", (event) => { event.preventDefault(); loadUsage().catch(fail); });
  ui.csv.addEventListener("click", async () => {
    try {
      const response = await call(`/admin/usage?${usageQuery("account,model,day")}`,
        { token: secrets.adminToken, accept: "text/csv" });
      saveBlob(await response.blob(), `lector-usage-all-${ui.from.value}-${ui.to.value}.csv`);
    } catch (exc) { fail(exc); }
  });
  return { shown: open };
}
