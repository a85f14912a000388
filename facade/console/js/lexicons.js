// Lexicons: the account's pronunciation lexicons (W3C PLS 1.0), as the CLI's `lector lexicons`
// handles them: list the newest version of each, save a new version (optionally the account's
// default), open one to edit, delete one with all its versions.

import { ApiError, call, el, json, showError } from "./api.js";

const $ = (id) => document.getElementById(id);
const message = (exc) => (exc instanceof ApiError ? exc.message : String(exc));
const EXAMPLE = `<?xml version="1.0" encoding="UTF-8"?>
<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="en-US">
  <lexeme><grapheme>Nguyen</grapheme><phoneme>wɪn</phoneme></lexeme>
  <lexeme><grapheme>NYC</grapheme><alias>New York City</alias></lexeme>
</lexicon>`;

export function initLexicons() {
  const ui = {
    form: $("lexicon-form"), name: $("lexicon-name"), content: $("lexicon-content"), isDefault: $("lexicon-default"),
    error: $("lexicon-error"), status: $("lexicon-status"), list: $("lexicons-body"), empty: $("lexicons-empty"),
    refresh: $("lexicons-refresh"),
  };
  if (!ui.content.value) ui.content.value = EXAMPLE;

  // Only the latest call's answer is drawn (see books.js: overlapping calls, a changed key).
  let listing = 0;

  async function list() {
    const call = ++listing;
    showError(ui.error, "");
    if (!ui.list.isConnected) return;
    try {
      const { lexicons } = await json("/v1/lexicons");
      if (call !== listing) return;
      ui.empty.hidden = lexicons.length > 0;
      ui.list.replaceChildren(...lexicons.map((lex) => el("tr", { "data-lexicon": lex.name },
        el("td", { class: "mono", text: lex.name }),
        el("td", { class: "num", text: String(lex.version) }),
        el("td", { class: "num", text: String(lex.lexemes) }),
        el("td", {}, el("span", { class: `badge ${lex.default ? "active" : ""}`, text: lex.default ? "default" : "named" })),
        el("td", {}, el("div", { class: "inline" },
          el("button", { type: "button", text: "Open", "aria-label": `Open lexicon ${lex.name}`, onclick: () => open(lex.name) }),
          el("button", { type: "button", class: "danger", text: "Delete", "aria-label": `Delete lexicon ${lex.name}`,
            onclick: () => remove(lex.name) }))))));
    } catch (exc) {
      if (call !== listing) return;
      ui.list.replaceChildren();
      showError(ui.error, message(exc));
    }
  }

  async function open(name) {
    try {
      const lex = await json(`/v1/lexicons/${encodeURIComponent(name)}`);
      ui.name.value = lex.name;
      ui.content.value = lex.content;
      ui.isDefault.checked = lex.default;
      ui.status.textContent = `${lex.name}, version ${lex.version}: ${lex.lexemes} lexemes`;
    } catch (exc) {
      showError(ui.error, message(exc));
    }
  }

  async function remove(name) {
    try {
      await call(`/v1/lexicons/${encodeURIComponent(name)}`, { method: "DELETE" });
      ui.status.textContent = `Deleted ${name}`;
      await list();
    } catch (exc) {
      showError(ui.error, message(exc));
    }
  }

  ui.form.addEventListener("submit", async (event) => {
    event.preventDefault();
    showError(ui.error, "");
    const name = ui.name.value.trim();
    try {
      const saved = await json(`/v1/lexicons/${encodeURIComponent(name)}?default=${ui.isDefault.checked}`, {
        method: "PUT", body: ui.content.value, headers: { "Content-Type": "application/pls+xml" } });
      ui.status.textContent = `Saved ${saved.name}, version ${saved.version}: ${saved.lexemes} lexemes`;
      await list();
    } catch (exc) {
      showError(ui.error, message(exc));  // a malformed PLS: the API's 400 names the line
    }
  });
  ui.refresh.addEventListener("click", list);
  return { shown: list };
}
