// A book's cast: the narrator (the book's own voice), a voice for dialogue nobody is named for,
// and named characters with their voices and the other names the text calls them by. Every
// voice can be heard (one sentence through /v1/service-tts) before the book is rendered.

import { ApiError, call, el, showError } from "./api.js";
import { voicesFor } from "./voices.js";

const $ = (id) => document.getElementById(id);
const message = (exc) => (exc instanceof ApiError ? exc.message : String(exc));

/** Wire the cast fieldset to the book form's model, language and voice selects. */
export function castEditor(model, lang, narrator, error) {
  const ui = {
    on: $("cast-on"), body: $("cast-fields"), dialogue: $("cast-dialogue"), rows: $("cast-rows"),
    add: $("cast-add"), hearNarrator: $("cast-hear-narrator"), hearDialogue: $("cast-hear-dialogue"),
    sample: $("cast-sample"), status: $("cast-status"),
  };
  let voices = [];
  let count = 0;

  const options = (select, keep) => {
    const previous = keep ?? select.value;
    select.replaceChildren(...voices.map((v) => el("option", { value: v.speaker, text: `${v.speaker} · ${v.gender.toLowerCase()}` })));
    if (voices.some((v) => v.speaker === previous)) select.value = previous;
  };

  async function refill() {
    voices = await voicesFor(model.value, lang.value);
    options(ui.dialogue);
    for (const select of ui.rows.querySelectorAll("select")) options(select);
  }

  async function hear(voice, who) {
    showError(error, "");
    ui.status.textContent = `Making a sample of ${voice}…`;
    const text = `${who ? `I am ${who}. ` : ""}This is how the voice called ${voice} reads a line of your book.`;
    try {
      const response = await call("/v1/service-tts", { method: "POST", accept: "audio/mpeg",
        body: { text, speaker: voice, modelId: model.value, lang: lang.value } });
      if (ui.sample.src) URL.revokeObjectURL(ui.sample.src);
      ui.sample.src = URL.createObjectURL(await response.blob());
      ui.sample.dataset.voice = voice;
      ui.sample.hidden = false;
      ui.status.textContent = `Sample: ${voice}${who ? ` for ${who}` : ""}`;
      await ui.sample.play().catch(() => {});  // a browser may refuse to start sound unasked: the player stays
    } catch (exc) {
      ui.status.textContent = "";
      showError(error, message(exc));
    }
  }

  function addRow(name = "", aliases = "", voice = "") {
    count += 1;
    const n = count;
    const select = el("select", { "aria-label": `Character ${n} voice` });
    options(select, voice);
    const nameInput = el("input", { type: "text", maxlength: "60", "aria-label": `Character ${n} name`, value: name });
    const row = el("tr", { "data-character": String(n) },
      el("td", {}, nameInput),
      el("td", {}, el("input", { type: "text", "aria-label": `Character ${n} aliases`, placeholder: "Lizzy, Eliza", value: aliases })),
      el("td", {}, select),
      el("td", {}, el("div", { class: "inline" },
        el("button", { type: "button", text: "Hear", "aria-label": `Hear character ${n}`,
          onclick: () => hear(select.value, nameInput.value.trim()) }),
        el("button", { type: "button", class: "danger", text: "Remove", "aria-label": `Remove character ${n}`,
          onclick: () => row.remove() }))));
    ui.rows.append(row);
  }

  ui.on.addEventListener("change", () => { ui.body.hidden = !ui.on.checked; if (ui.on.checked) refill(); });
  // The book form's own pickers refill the language and voice on these events: look after them.
  for (const select of [model, lang]) select.addEventListener("change", () => setTimeout(refill, 0));
  ui.add.addEventListener("click", () => addRow());
  ui.hearNarrator.addEventListener("click", () => hear(narrator.value, "the narrator"));
  ui.hearDialogue.addEventListener("click", () => hear(ui.dialogue.value, ""));

  return {
    /** The job's `cast`, or null when none is set; throws a message for a row without a name. */
    value() {
      if (!ui.on.checked) return null;
      const characters = {};
      for (const row of ui.rows.querySelectorAll("tr")) {
        const [name, aliases] = [...row.querySelectorAll("input")].map((i) => i.value.trim());
        if (!name) throw new Error("every character needs a name (or remove the row)");
        characters[name] = { voice: row.querySelector("select").value,
          aliases: aliases ? aliases.split(",").map((a) => a.trim()).filter(Boolean) : [] };
      }
      return { narrator: narrator.value, dialogue: ui.dialogue.value, characters };
    },
  };
}
