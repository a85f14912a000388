// Playground: /ws3 with PCM into Web Audio, words highlighted from the timestamps events. Where a
// browser has no WebSocket or Web Audio, HTTP instead: /v1/service-tts streams MP3 into an <audio>
// element through MediaSource (playing from the first sentence; no word timings come that way).
//
// The key travels as a WebSocket subprotocol (browsers cannot set Authorization on a socket and a
// key in the URL would reach access logs); see facade/browser_auth.py. Each sentence is sent as
// its own message, so each is one synthesis run with its own timestamps event, and highlighting
// keeps up with playback instead of waiting for the whole text.

import { ApiError, call, saveBlob, secrets, showError } from "./api.js";
import { voicePicker } from "./voices.js";
import { wavBlob } from "./wav.js";

const RATE = 24000;
const $ = (id) => document.getElementById(id);

function keyProtocol(key) {
  const bytes = new TextEncoder().encode(key);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return "lector.key." + btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
}

function sentences(text, lang) {
  const locale = { eng: "en", spa: "es", fra: "fr", ger: "de", deu: "de", ita: "it", por: "pt", jpn: "ja",
    hin: "hi", ara: "ar", nld: "nl", dut: "nl" }[lang] || "en";
  const segmenter = new Intl.Segmenter(locale, { granularity: "sentence" });
  return [...segmenter.segment(text)].map((s) => s.segment).filter((s) => s.trim());
}

class Session {
  constructor() {
    this.ctx = new AudioContext({ sampleRate: RATE });
    this.pcm = [];            // Int16Array chunks, for the download and the final buffer
    this.samples = 0;         // samples received so far
    this.segments = [];       // [sampleStart, ctxTime] for each scheduled chunk
    this.nextTime = 0;
    this.runStart = 0;        // sample where the current synthesis run began
    this.words = [];          // {span, start, end} in context time
    this.leftover = null;     // an odd byte carried to the next chunk
    this.sources = [];
  }

  play(bytes) {
    let data = bytes;
    if (this.leftover) { data = new Uint8Array([this.leftover[0], ...bytes]); this.leftover = null; }
    if (data.length % 2) { this.leftover = data.slice(-1); data = data.slice(0, -1); }
    if (!data.length) return;
    const ints = new Int16Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.length));
    const buffer = this.ctx.createBuffer(1, ints.length, RATE);
    const channel = buffer.getChannelData(0);
    for (let i = 0; i < ints.length; i++) channel[i] = ints[i] / 32768;
    const at = Math.max(this.nextTime, this.ctx.currentTime + 0.05);
    const source = this.ctx.createBufferSource();
    source.buffer = buffer;
    source.connect(this.ctx.destination);
    source.start(at);
    this.sources.push(source);
    this.segments.push([this.samples, at]);
    this.nextTime = at + buffer.duration;
    this.samples += ints.length;
    this.pcm.push(ints);
  }

  timeOf(seconds) {  // a run-relative time in seconds -> AudioContext time
    const sample = this.runStart + seconds * RATE;
    let segment = this.segments[0];
    for (const s of this.segments) { if (s[0] <= sample) segment = s; else break; }
    return segment ? segment[1] + (sample - segment[0]) / RATE : 0;
  }

  stop() {
    for (const s of this.sources) { try { s.stop(); } catch { /* not started */ } }
    this.ctx.close();
  }

  /** One AudioBuffer holding everything heard: what "the audio" of this session is. */
  fullBuffer() {
    const buffer = new AudioBuffer({ length: Math.max(1, this.samples), sampleRate: RATE, numberOfChannels: 1 });
    const channel = buffer.getChannelData(0);
    let offset = 0;
    for (const chunk of this.pcm) {
      for (let i = 0; i < chunk.length; i++) channel[offset + i] = chunk[i] / 32768;
      offset += chunk.length;
    }
    return buffer;
  }
}

const webAudio = () => typeof WebSocket === "function" && typeof AudioContext === "function";

/** Append a fetch body to a MediaSource buffer as it arrives; `first` runs at the first bytes. */
async function pour(response, audio, first) {
  const parts = [];
  const reader = response.body.getReader();
  if (!window.MediaSource || !MediaSource.isTypeSupported("audio/mpeg")) {  // no MSE: play once it is all here
    for (let r = await reader.read(); !r.done; r = await reader.read()) { if (!parts.length) first(); parts.push(r.value); }
    audio.src = URL.createObjectURL(new Blob(parts, { type: "audio/mpeg" }));
    audio.play().catch(() => {});
    return parts;
  }
  const source = new MediaSource();
  audio.src = URL.createObjectURL(source);
  await new Promise((resolve) => source.addEventListener("sourceopen", resolve, { once: true }));
  const buffer = source.addSourceBuffer("audio/mpeg");
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    buffer.appendBuffer(r.value);
    await new Promise((resolve) => buffer.addEventListener("updateend", resolve, { once: true }));
    if (!parts.length) { first(); audio.play().catch(() => {}); }
    parts.push(r.value);
  }
  source.endOfStream();
  return parts;
}

export function initPlayground() {
  const ui = {
    text: $("pg-text"), model: $("pg-model"), lang: $("pg-lang"), voice: $("pg-voice"), format: $("pg-format"),
    speed: $("pg-speed"), speak: $("pg-speak"), stop: $("pg-stop"), download: $("pg-download"),
    status: $("pg-status"), error: $("pg-error"), words: $("pg-words"), ttfa: $("pg-ttfa"), rtf: $("pg-rtf"),
    seconds: $("pg-seconds"), audio: $("pg-audio"),
  };
  voicePicker(ui.model, ui.lang, ui.voice);
  let session = null;
  let socket = null;
  let ticker = null;
  let heard = null;  // {pcm, text, voice...} of the last finished session

  const highlight = () => {
    if (!session) return;
    const now = session.ctx.currentTime;
    for (const w of session.words) {
      const current = now >= w.start && now < w.end;
      if (current && !w.span.classList.contains("current")) {
        ui.words.dataset.highlighted = String(Number(ui.words.dataset.highlighted || 0) + 1);
      }
      w.span.classList.toggle("current", current);
      w.span.classList.toggle("spoken", now >= w.end);
    }
  };

  const finish = (message) => {
    ui.speak.disabled = false;
    ui.stop.disabled = true;
    if (message) showError(ui.error, message);
  };

  ui.stop.addEventListener("click", () => {
    if (socket) socket.close(1000);
    if (session) session.stop();
    clearInterval(ticker);
    finish();
    ui.status.textContent = "Stopped.";
  });

  ui.speak.addEventListener("click", () => {
    showError(ui.error, "");
    if (!secrets.apiKey) {
      showError(ui.error, "Paste your API key (make run prints one) in the API key field at the top.");
      document.getElementById("api-key").focus();
      return;
    }
    if (socket) socket.close(1000);
    if (session) session.stop();
    clearInterval(ticker);
    if (!webAudio()) { speakOverHttp(); return; }
    const text = ui.text.value;
    session = new Session();
    const current = session;
    ui.words.replaceChildren();
    ui.words.dataset.highlighted = "0";
    ui.ttfa.textContent = "–"; ui.rtf.textContent = "–"; ui.seconds.textContent = "–";
    ui.seconds.dataset.audioSeconds = "0";
    ui.download.disabled = true;
    ui.speak.disabled = true;
    ui.stop.disabled = false;
    ui.status.textContent = "Connecting…";
    const params = new URLSearchParams({
      speaker: ui.voice.value, modelId: ui.model.value, lang: ui.lang.value, audioFormat: "pcm",
      samplingRate: String(RATE), speedAlpha: ui.speed.value, segment: "bySentence",
    });
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const url = `${scheme}://${location.host}/ws3?${params}`;
    try {
      socket = new WebSocket(url, ["lector", keyProtocol(secrets.apiKey)]);
    } catch (exc) {
      finish(String(exc.message || exc));
      return;
    }
    const ws = socket;
    let sentAt = 0;
    let firstAt = 0;
    ws.onopen = () => {
      ui.status.textContent = "Synthesizing…";
      sentAt = performance.now();
      for (const sentence of sentences(text, ui.lang.value)) ws.send(JSON.stringify({ text: sentence }));
      ws.send(JSON.stringify({ operation: "eos" }));
    };
    ws.onmessage = (event) => {
      if (current !== session) return;
      const message = JSON.parse(event.data);
      if (message.type === "chunk") {
        const raw = atob(message.data);
        const bytes = new Uint8Array(raw.length);
        for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
        if (!firstAt) {
          firstAt = performance.now();
          ui.ttfa.textContent = `${Math.round(firstAt - sentAt)} ms`;
          ui.status.textContent = "Playing…";
          ticker = setInterval(highlight, 30);
        }
        current.play(bytes);
        ui.seconds.textContent = `${(current.samples / RATE).toFixed(1)} s`;
      } else if (message.type === "timestamps") {
        const t = message.word_timestamps || { words: [] };
        t.words.forEach((word, i) => {
          const span = document.createElement("span");
          span.textContent = word;
          ui.words.append(span, " ");
          current.words.push({ span, start: current.timeOf(t.start[i]), end: current.timeOf(t.end[i]) });
        });
        current.runStart = current.samples;
      } else if (message.type === "done") {
        const seconds = current.samples / RATE;
        const elapsed = (performance.now() - sentAt) / 1000;
        ui.rtf.textContent = seconds ? `${(elapsed / seconds).toFixed(2)}×` : "–";
        ui.rtf.title = "seconds spent making the audio per second of audio (lower is faster)";
        ui.seconds.dataset.audioSeconds = String(current.fullBuffer().duration);
        ui.seconds.textContent = `${seconds.toFixed(1)} s`;
        heard = { pcm: current.pcm, text, voice: ui.voice.value, model: ui.model.value, lang: ui.lang.value,
          speed: ui.speed.value };
        ui.download.disabled = false;
        ui.status.textContent = "Done.";
      } else if (message.type === "error") {
        showError(ui.error, message.message);
      }
    };
    ws.onclose = (event) => {
      if (ws !== socket) return;
      socket = null;
      if (event.code === 1000) { finish(); return; }
      clearInterval(ticker);
      const reason = event.reason ? event.reason.replace(/^\d{3}: /, "") : "";
      ui.status.textContent = "";
      finish(reason || "lector cannot be reached");
    };
  });

  async function speakOverHttp() {
    const text = ui.text.value;
    const audio = ui.audio;
    ui.words.replaceChildren(...text.split(/\s+/).filter(Boolean).flatMap((w) => [Object.assign(
      document.createElement("span"), { textContent: w }), " "]));
    ui.ttfa.textContent = "–"; ui.rtf.textContent = "–"; ui.seconds.textContent = "–";
    ui.seconds.dataset.audioSeconds = "0";
    audio.hidden = false;
    audio.dataset.transport = "http";
    delete audio.dataset.playingAt;
    audio.addEventListener("playing", () => { audio.dataset.playingAt = String(performance.now()); }, { once: true });
    ui.download.disabled = true;
    ui.speak.disabled = true;
    ui.status.textContent = "Synthesizing (HTTP: no word highlighting in this browser)…";
    const request = { text, speaker: ui.voice.value, modelId: ui.model.value, lang: ui.lang.value,
      speedAlpha: Number(ui.speed.value) };
    const sentAt = performance.now();
    try {
      const response = await call("/v1/service-tts", { method: "POST", accept: "audio/mpeg", body: request });
      const parts = await pour(response, audio, () => {
        ui.ttfa.textContent = `${Math.round(performance.now() - sentAt)} ms`;
        ui.status.textContent = "Playing…";
      });
      audio.dataset.doneAt = String(performance.now());
      const elapsed = (performance.now() - sentAt) / 1000;
      const buffered = audio.buffered.length ? audio.buffered.end(audio.buffered.length - 1) : 0;
      const seconds = Number.isFinite(audio.duration) && audio.duration > 0 ? audio.duration : buffered;
      ui.seconds.dataset.audioSeconds = String(seconds);
      ui.seconds.textContent = `${seconds.toFixed(1)} s`;
      ui.rtf.textContent = seconds ? `${(elapsed / seconds).toFixed(2)}×` : "–";
      heard = { mp3: new Blob(parts, { type: "audio/mpeg" }), text, voice: request.speaker, model: request.modelId,
        lang: request.lang, speed: ui.speed.value };
      ui.download.disabled = false;
      ui.status.textContent = "Done.";
    } catch (exc) {
      ui.status.textContent = "";
      showError(ui.error, exc instanceof ApiError ? exc.message : String(exc));
    } finally {
      ui.speak.disabled = false;
    }
  }

  ui.download.addEventListener("click", async () => {
    if (!heard) return;
    showError(ui.error, "");
    const base = `lector-${heard.voice}`;
    if (ui.format.value === "wav" && heard.pcm) { saveBlob(wavBlob(heard.pcm, RATE), `${base}.wav`); return; }
    if (ui.format.value === "mp3" && heard.mp3) { saveBlob(heard.mp3, `${base}.mp3`); return; }
    const accept = { wav: "audio/wav", mp3: "audio/mpeg", ogg: "audio/ogg", flac: "audio/flac" }[ui.format.value];
    ui.status.textContent = "Preparing the download…";
    try {
      const response = await call("/v1/service-tts", { method: "POST", accept, body: {
        text: heard.text, speaker: heard.voice, modelId: heard.model, lang: heard.lang, speedAlpha: Number(heard.speed),
      } });
      saveBlob(await response.blob(), `${base}.${ui.format.value}`);
      ui.status.textContent = "Downloaded.";
    } catch (exc) {
      showError(ui.error, exc instanceof ApiError ? exc.message : String(exc));
      ui.status.textContent = "";
    }
  });
}
