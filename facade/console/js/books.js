// Books: submit through the job API (JSON for pasted text, multipart for a file), follow the
// progress, cancel, list the account's jobs, and open a finished one: player, chapters, downloads.

import { ApiError, call, el, json, saveBlob, secrets, showError } from "./api.js";
import { castEditor } from "./cast.js";
import { listen } from "./live.js";
import { voicePicker } from "./voices.js";

const $ = (id) => document.getElementById(id);
const ACTIVE = new Set(["queued", "planning", "running", "assembling"]);
const message = (exc) => (exc instanceof ApiError ? exc.message : String(exc));

function clock(seconds) {
  if (!Number.isFinite(seconds)) return "–";
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
  return h ? `${h}:${String(m).padStart(2, "0")}:${String(r).padStart(2, "0")}` : `${m}:${String(r).padStart(2, "0")}`;
}

export function initBooks() {
  const ui = {
    form: $("book-form"), text: $("book-text"), file: $("book-file"), model: $("book-model"), lang: $("book-lang"),
    voice: $("book-voice"), format: $("book-format"), loudness: $("book-loudness"), skip: $("book-skip"),
    qa: $("book-qa"), qaSummary: $("job-qa-summary"), qaList: $("job-qa"),
    submit: $("book-submit"), error: $("book-error"), card: $("book-progress-card"), bar: $("book-progress"),
    barText: $("book-progress-text"), barId: $("book-progress-id"), cancel: $("book-cancel"),
    detail: $("job-detail"), detailId: $("job-detail-id"), audio: $("job-audio"), chapters: $("job-chapters"),
    downloads: $("job-downloads"), compliance: $("job-compliance"), title: $("book-title"), author: $("book-author"),
    delivery: $("book-delivery"), list: $("jobs-body"), empty: $("jobs-empty"), refresh: $("jobs-refresh"),
    listen: $("book-listen"), live: $("book-live"), liveText: $("book-live-text"), liveChapters: $("book-live-chapters"),
  };
  voicePicker(ui.model, ui.lang, ui.voice);
  const cast = castEditor(ui.model, ui.lang, ui.voice, ui.error);
  let following = null;
  let timer = null;

  // Calls overlap (the page shown, Refresh, a job that finished): only the latest one's answer
  // is drawn, so a slow answer for the key before a change never replaces the new key's list.
  let listing = 0;

  async function listJobs() {
    const call = ++listing;
    if (!secrets.apiKey) {
      ui.list.replaceChildren();
      ui.empty.textContent = "Paste your API key at the top to see your jobs.";
      ui.empty.hidden = false;
      return;
    }
    if (!ui.list.children.length) {
      ui.empty.hidden = true;
      ui.list.replaceChildren(el("tr", {}, el("td", { colspan: 6, class: "empty", text: "Loading your jobs…" })));
    }
    try {
      const { jobs } = await json("/v1/jobs?limit=20");
      if (call !== listing) return;
      ui.empty.textContent = "No jobs yet: submit one above.";
      ui.empty.hidden = jobs.length > 0;
      ui.list.replaceChildren(...jobs.map((job) => {
        const p = job.progress;
        return el("tr", { "data-job": job.id },
          el("td", { text: job.createdAt ? new Date(job.createdAt).toLocaleString() : "" }),
          el("td", { text: job.title || `${job.characters} characters` }),
          el("td", { text: job.speaker || "" }),
          el("td", {}, el("span", { class: `badge ${job.status}`, text: job.status })),
          el("td", { text: p.chunksTotal ? `${p.chunksDone}/${p.chunksTotal}` : "" }),
          el("td", {}, job.status === "succeeded" && !job.expired
            ? el("button", { type: "button", text: "Open", onclick: () => openJob(job) })
            : ACTIVE.has(job.status) ? el("button", { type: "button", text: "Follow", onclick: () => follow(job) }) : null));
      }));
    } catch (exc) {
      if (call !== listing) return;
      ui.list.replaceChildren();
      ui.empty.hidden = true;
      showError(ui.error, message(exc));
    }
  }

  function render(job) {
    const p = job.progress;
    ui.barId.textContent = job.id.slice(0, 8);
    ui.bar.max = Math.max(1, p.chunksTotal || 1);
    ui.bar.value = p.chunksDone || 0;
    ui.bar.dataset.status = job.status;
    const started = job.startedAt ? new Date(job.startedAt) : null;
    const elapsed = started ? (Date.now() - started.getTime()) / 1000 : 0;
    const rtf = p.audioSeconds ? elapsed / p.audioSeconds : NaN;
    const eta = p.chunksDone ? (elapsed / p.chunksDone) * (p.chunksTotal - p.chunksDone) : NaN;
    const parts = [job.status];
    if (p.chunksTotal) parts.push(`${p.chunksDone} of ${p.chunksTotal} chunks`);
    if (Number.isFinite(rtf)) parts.push(`realtime factor ${rtf.toFixed(2)}`);
    if (ACTIVE.has(job.status) && Number.isFinite(eta)) parts.push(`about ${clock(eta)} left`);
    if (job.error) parts.push(job.error);
    ui.barText.textContent = parts.join(" · ");
    ui.cancel.disabled = !ACTIVE.has(job.status);
  }

  // Listen while it renders (live.js): the followed job's live playlist in its own player.
  let stopLive = () => {};
  function hideLive() {
    stopLive();
    stopLive = () => {};
    ui.live.hidden = ui.liveText.hidden = ui.liveChapters.hidden = true;
    ui.liveChapters.replaceChildren();
  }

  ui.listen.addEventListener("click", () => {
    if (!following) return;
    hideLive();
    ui.live.hidden = ui.liveText.hidden = false;
    ui.liveText.textContent = "Waiting for the first segment…";
    let shown = 0;
    stopLive = listen(ui.live, following, {
      onProgress: ({ segments, seconds, ended, chapters }) => {
        ui.liveText.textContent = `${segments} segments ready · ${clock(seconds)} to hear${ended ? " · the whole book" : ""}`;
        if (chapters.length !== shown) {
          shown = chapters.length;
          ui.liveChapters.hidden = false;
          ui.liveChapters.replaceChildren(...chapters.map((c) => el("li", {}, `${c.title || "Untitled"} (${clock(c.start)})`,
            el("button", { type: "button", text: "Play", "aria-label": `Play ${c.title || "chapter"} now`,
              onclick: () => { ui.live.currentTime = c.start; ui.live.play(); } }))));
        }
      },
      onError: (exc) => showError(ui.error, message(exc)),
    });
    ui.live.play().catch(() => { /* the listener presses play: autoplay may be refused */ });
  });

  function follow(job) {
    if (following !== job.id) hideLive();
    following = job.id;
    ui.card.hidden = false;
    render(job);
    clearTimeout(timer);
    const tick = async () => {
      if (following !== job.id) return;
      try {
        const now = await json(`/v1/jobs/${job.id}`);
        render(now);
        if (ACTIVE.has(now.status)) { timer = setTimeout(tick, 700); return; }
        listJobs();
        if (now.status === "succeeded") openJob(now);
      } catch (exc) {
        showError(ui.error, message(exc));
      }
    };
    timer = setTimeout(tick, 500);
  }

  async function download(job, path, name) {
    try {
      saveBlob(await (await call(`/v1/jobs/${job.id}/${path}`)).blob(), name);
    } catch (exc) {
      showError(ui.error, message(exc));
    }
  }

  function limitText(limit) {
    const parts = [];
    if (limit.min !== undefined) parts.push(`≥ ${limit.min}`);
    if (limit.max !== undefined) parts.push(`≤ ${limit.max}`);
    return parts.join(", ");
  }

  // A delivery job: its result is a zip of files, so a report and a download, not a player.
  async function openDelivery(job) {
    ui.audio.hidden = true;
    ui.audio.removeAttribute("src");
    const now = job.compliance ? job : await json(`/v1/jobs/${job.id}`);
    const rows = [];
    for (const file of (now.compliance || { files: [] }).files) {
      for (const rule of file.rules) {
        rows.push(el("tr", { class: rule.pass ? "pass" : "fail" },
          el("td", { text: file.file }), el("td", { text: rule.rule }),
          el("td", { class: "num", text: rule.measured === null ? "–" : `${rule.measured} ${rule.unit}` }),
          el("td", { class: "num", text: `${limitText(rule.limit)} ${rule.unit}` }),
          el("td", {}, el("span", { class: `badge ${rule.pass ? "succeeded" : "failed"}`, text: rule.pass ? "pass" : "fail" }))));
      }
    }
    ui.compliance.tBodies[0].replaceChildren(...rows);
    ui.compliance.hidden = false;
    const name = `${(job.title || "lector-book").replace(/[^\w.-]+/g, "-")}-${job.delivery}.zip`;
    const links = await json(`/v1/jobs/${job.id}/audio`, { accept: "application/json" });
    ui.downloads.append(links.downloadUrl
      ? el("a", { class: "button", href: links.downloadUrl, download: name, id: "job-download-zip", text: "Download zip" })
      : el("button", { type: "button", id: "job-download-zip", text: "Download zip",
        onclick: () => download(job, "audio", name) }));
  }

  // The QA check's report: each passage that still failed plays on a click, from its offset for
  // its own length, so a listener hears only those.
  let stopAt = null;
  ui.audio.addEventListener("timeupdate", () => {
    if (stopAt !== null && ui.audio.currentTime >= stopAt) { ui.audio.pause(); stopAt = null; }
  });

  function showQa(report) {
    ui.qaList.replaceChildren();
    ui.qaSummary.hidden = ui.qaList.hidden = !report;
    if (!report) return;
    if (report.status !== "done") { ui.qaSummary.textContent = "Speech-recognition check: pending"; return; }
    ui.qaSummary.textContent = `Speech-recognition check: ${report.checked} chunks heard, `
      + `${report.resynthesized} rendered again, ${report.flagged} flagged`;
    ui.qaList.replaceChildren(...report.passages.map((p) => el("li", {},
      `${p.chapter || "Book"} (${clock(p.offsetSeconds)}): ${p.metric} ${p.score.toFixed(2)}: heard "${p.heard}"`,
      el("button", { type: "button", text: "Play", "aria-label": `Play flagged passage at ${clock(p.offsetSeconds)}`,
        onclick: () => { ui.audio.currentTime = p.offsetSeconds; stopAt = p.offsetSeconds + p.durationSeconds; ui.audio.play(); } }))));
  }

  async function openJob(job) {
    ui.detail.hidden = false;
    ui.detailId.textContent = job.id.slice(0, 8);
    ui.chapters.replaceChildren();
    ui.downloads.replaceChildren();
    ui.compliance.hidden = true;
    ui.audio.hidden = false;
    showQa(null);
    if (job.delivery) {
      try { await openDelivery(job); } catch (exc) { showError(ui.error, message(exc)); }
      return;
    }
    try {
      const links = await json(`/v1/jobs/${job.id}/audio`, { accept: "application/json" });
      let playUrl = links.url;
      let saveUrl = links.downloadUrl;
      if (!playUrl) {  // a store that cannot presign (a local directory): the bytes through the API
        const blob = await (await call(`/v1/jobs/${job.id}/audio`)).blob();
        playUrl = saveUrl = URL.createObjectURL(blob);
      }
      ui.audio.src = playUrl;
      const name = `${(job.title || "lector-book").replace(/[^\w.-]+/g, "-")}.${job.format}`;
      ui.downloads.append(
        el("a", { class: "button", href: saveUrl, download: name, id: "job-download-audio", text: `Download ${job.format}` }),
        el("button", { type: "button", text: "SRT", "aria-label": "Download SRT",
          onclick: () => download(job, "subtitles.srt", `${job.id}.srt`) }),
        el("button", { type: "button", text: "VTT", "aria-label": "Download VTT",
          onclick: () => download(job, "subtitles.vtt", `${job.id}.vtt`) }),
        el("button", { type: "button", text: "Timestamps", "aria-label": "Download timestamps",
          onclick: () => download(job, "timestamps.json", `${job.id}.timestamps.json`) }),
      );
      const stamps = await json(`/v1/jobs/${job.id}/timestamps.json`);
      const chapters = stamps.chapters.length ? stamps.chapters : [{ title: job.title || "Whole book", start: 0 }];
      ui.chapters.replaceChildren(...chapters.map((c) => el("li", {},
        `${c.title || "Untitled"} (${clock(c.start)})`,
        el("button", { type: "button", text: "Play", "aria-label": `Play ${c.title || "chapter"}`,
          onclick: () => { stopAt = null; ui.audio.currentTime = c.start; ui.audio.play(); } }))));
      showQa((await json(`/v1/jobs/${job.id}`)).qa);
    } catch (exc) {
      showError(ui.error, message(exc));
    }
  }

  ui.form.addEventListener("submit", async (event) => {
    event.preventDefault();
    showError(ui.error, "");
    const options = { speaker: ui.voice.value, modelId: ui.model.value, lang: ui.lang.value, format: ui.format.value };
    for (const name of ["title", "author", "delivery"]) if (ui[name].value.trim()) options[name] = ui[name].value.trim();
    const loudness = ui.loudness.value;
    let castValue;
    try { castValue = cast.value(); } catch (exc) { showError(ui.error, exc.message); return; }
    let body;
    if (ui.file.files.length) {
      body = new FormData();
      body.append("file", ui.file.files[0]);
      for (const [k, v] of Object.entries(options)) body.append(k, v);
      if (loudness) body.append("loudness", loudness);
      body.append("skipFrontMatter", String(ui.skip.checked));
      body.append("qa", String(ui.qa.checked));
      if (castValue) body.append("cast", JSON.stringify(castValue));
    } else {
      body = { ...options, text: ui.text.value, skipFrontMatter: ui.skip.checked, qa: ui.qa.checked };
      if (loudness) body.loudness = Number(loudness);
      if (castValue) body.cast = castValue;
    }
    ui.submit.disabled = true;
    try {
      const job = await json("/v1/jobs", { method: "POST", body });
      ui.detail.hidden = true;
      follow(job);
      listJobs();
    } catch (exc) {
      showError(ui.error, message(exc));
    } finally {
      ui.submit.disabled = false;
    }
  });

  ui.cancel.addEventListener("click", async () => {
    if (!following) return;
    try {
      render(await json(`/v1/jobs/${following}`, { method: "DELETE" }));
      listJobs();
    } catch (exc) {
      showError(ui.error, message(exc));
    }
  });
  ui.refresh.addEventListener("click", listJobs);
  return { shown: listJobs };
}
