// The model -> language -> voice pickers, filled from the public voice_details.json.

import { el } from "./api.js";

let details = null;

async function load() {
  if (!details) {
    const response = await fetch("/data/voices/voice_details.json");
    details = response.ok ? await response.json() : [];
  }
  return details;
}

const isFallback = (v) => (v.genre || []).includes("Fallback");

function fill(select, items, keep) {
  const previous = keep ?? select.value;
  select.replaceChildren(...items.map(([value, label]) => el("option", { value, text: label })));
  if (items.some(([value]) => value === previous)) select.value = previous;
}

/** The voices of a model in a language, neural first (the cast editor's choices). */
export async function voicesFor(modelId, lang) {
  const list = (await load()).filter((v) => v.modelId === modelId && v.lang === lang);
  return list.sort((a, b) => Number(isFallback(a)) - Number(isFallback(b)) || a.speaker.localeCompare(b.speaker));
}

/** Wire three selects; `initial` picks the first model, language and voice shown. */
export async function voicePicker(model, lang, voice, initial = { model: "coda", lang: "eng", voice: "joe" }) {
  const all = await load();
  const models = [...new Set(all.map((v) => v.modelId))];
  fill(model, models.map((m) => [m, m]), initial.model);
  const languages = () => {
    const seen = new Map();
    for (const v of all) if (v.modelId === model.value && !seen.has(v.lang)) seen.set(v.lang, v.language);
    fill(lang, [...seen].map(([code, name]) => [code, `${name} (${code})`]), lang.value || initial.lang);
  };
  const voices = () => {
    const list = all.filter((v) => v.modelId === model.value && v.lang === lang.value);
    list.sort((a, b) => Number(isFallback(a)) - Number(isFallback(b)) || a.speaker.localeCompare(b.speaker));
    fill(voice, list.map((v) => [v.speaker,
      `${v.speaker} · ${v.gender.toLowerCase()} · ${isFallback(v) ? "fallback (formant)" : "neural"}`]),
      voice.value || initial.voice);
  };
  model.addEventListener("change", () => { languages(); voices(); });
  lang.addEventListener("change", voices);
  languages();
  voices();
}
