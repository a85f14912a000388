// Talking to lector: secrets from session storage only, errors in the API's own words.

const store = window.sessionStorage;

export const secrets = {
  get apiKey() { return store.getItem("lector.apiKey") || ""; },
  set apiKey(value) { value ? store.setItem("lector.apiKey", value) : store.removeItem("lector.apiKey"); },
  get adminToken() { return store.getItem("lector.adminToken") || ""; },
  set adminToken(value) { value ? store.setItem("lector.adminToken", value) : store.removeItem("lector.adminToken"); },
};

/** An error carrying the API's status and its plain-text message (the vendor API contract's words). */
export class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function messageOf(response) {
  const text = (await response.text()).trim();
  if (!text) return `${response.status} ${response.statusText}`;
  try {
    const body = JSON.parse(text);
    if (body && typeof body.error === "string") return body.error;
  } catch { /* plain text: the usual case */ }
  return text;
}

/** fetch with a bearer (the API key unless `token` is given); throws ApiError on a non-2xx. */
export async function call(path, { method = "GET", token, body, headers = {}, accept } = {}) {
  const bearer = token ?? secrets.apiKey;
  const h = { ...headers };
  if (bearer) h.Authorization = `Bearer ${bearer}`;
  if (accept) h.Accept = accept;
  let payload = body;
  if (body !== undefined && !(body instanceof FormData) && typeof body !== "string") {
    payload = JSON.stringify(body);
    h["Content-Type"] = "application/json";
  }
  let response;
  try {
    response = await fetch(path, { method, headers: h, body: payload, cache: "no-store" });
  } catch {
    throw new ApiError(0, "lector cannot be reached");
  }
  if (!response.ok) throw new ApiError(response.status, await messageOf(response));
  return response;
}

export async function json(path, options) {
  return (await call(path, options)).json();
}

/** Save a Blob under a name (an object URL is same-origin, so `download` is honoured). */
export function saveBlob(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Show `message` in an error element (or hide it when empty). */
export function showError(element, message) {
  element.textContent = message || "";
  element.hidden = !message;
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(name, value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

export const isoDay = (date) => date.toISOString().slice(0, 10);
export const formatNumber = (n) => new Intl.NumberFormat("en").format(n);
