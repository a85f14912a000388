// The console's shell: pages by URL hash, the API key field, each page set up once.

import { secrets } from "./api.js";
import { initAdmin } from "./admin.js";
import { initBooks } from "./books.js";
import { initLexicons } from "./lexicons.js";
import { initPlayground } from "./playground.js";
import { initUsage } from "./usage.js";

const PAGES = { playground: initPlayground, books: initBooks, lexicons: initLexicons, usage: initUsage, admin: initAdmin };
const started = new Set();
const hooks = {};

const current = () => (location.hash.slice(1) in PAGES ? location.hash.slice(1) : "playground");

function show() {
  const name = current();
  for (const page of Object.keys(PAGES)) {
    document.getElementById(`page-${page}`).hidden = page !== name;
    const link = document.querySelector(`nav a[data-page="${page}"]`);
    if (page === name) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
  }
  document.getElementById("key-bar").hidden = name === "admin";
  if (!started.has(name)) {
    started.add(name);
    hooks[name] = PAGES[name]() || {};
  }
  hooks[name]?.shown?.();
  document.title = `${name[0].toUpperCase()}${name.slice(1)} · lector console`;
}

const key = document.getElementById("api-key");
key.value = secrets.apiKey;
key.addEventListener("input", () => { secrets.apiKey = key.value.trim(); });
key.addEventListener("change", () => hooks[current()]?.shown?.());  // a new key: the page reloads its lists
window.addEventListener("hashchange", show);
show();
