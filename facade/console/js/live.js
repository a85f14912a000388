// Listen while it renders: a job's live HLS playlist played through MediaSource, no third-party
// code. The playlist (/v1/jobs/{id}/stream.m3u8) lists AAC segments in fragmented MP4 as the
// book's done part grows; each is fetched with the API key and appended in order, and the
// playlist is read again until it ends (#EXT-X-ENDLIST). Each segment carries its own place on
// the book's timeline, so the player's time is the book's time.

import { call } from "./api.js";

const MIME = 'audio/mp4; codecs="mp4a.40.2"';
const CHAPTER = /^#EXT-X-LECTOR-CHAPTER:INDEX=(\d+),START=([0-9.]+),TITLE="([^"]*)"$/;
const POLL_MS = 2000;

/** The playlist's init segment, media segments (address, seconds), chapters and whether it ended. */
export function parsePlaylist(text) {
  const out = { init: null, segments: [], chapters: [], ended: false };
  let duration = null;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line.startsWith("#EXT-X-MAP:")) out.init = /URI="([^"]+)"/.exec(line)?.[1] ?? null;
    else if (line.startsWith("#EXTINF:")) duration = parseFloat(line.slice(8));
    else if (line === "#EXT-X-ENDLIST") out.ended = true;
    else if (CHAPTER.test(line)) {
      const [, , start, title] = CHAPTER.exec(line);
      out.chapters.push({ title, start: parseFloat(start) });
    } else if (line && !line.startsWith("#")) {
      out.segments.push({ uri: line, seconds: duration ?? 0 });
      duration = null;
    }
  }
  return out;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function appended(buffer, bytes) {
  return new Promise((resolve, reject) => {
    const done = () => { buffer.removeEventListener("error", failed); resolve(); };
    const failed = () => { buffer.removeEventListener("updateend", done); reject(new Error("the browser refused a segment")); };
    buffer.addEventListener("updateend", done, { once: true });
    buffer.addEventListener("error", failed, { once: true });
    buffer.appendBuffer(bytes);
  });
}

/**
 * Play job `jobId`'s live playlist in `audio`. `onProgress({segments, seconds, ended, chapters})`
 * hears each change, `onError(exc)` a failure. Returns `stop()`.
 */
export function listen(audio, jobId, { onProgress = () => {}, onError = () => {} } = {}) {
  if (!window.MediaSource || !MediaSource.isTypeSupported(MIME)) {
    onError(new Error("this browser cannot play AAC through MediaSource"));
    return () => {};
  }
  const base = new URL(`/v1/jobs/${jobId}/stream.m3u8`, window.location.href);
  const source = new MediaSource();
  const url = URL.createObjectURL(source);
  let stopped = false;
  audio.src = url;

  async function fetchBytes(uri) {
    const address = new URL(uri, base);
    return (await call(address.pathname)).arrayBuffer();
  }

  async function run() {
    let buffer = null;
    let next = 0;
    let seconds = 0;
    while (!stopped) {
      const playlist = parsePlaylist(await (await call(base.pathname)).text());
      if (!buffer && playlist.init && playlist.segments.length) {
        buffer = source.addSourceBuffer(MIME);
        await appended(buffer, await fetchBytes(playlist.init));
      }
      while (buffer && next < playlist.segments.length && !stopped) {
        const segment = playlist.segments[next];
        await appended(buffer, await fetchBytes(segment.uri));
        seconds += segment.seconds;
        next += 1;
        onProgress({ segments: next, seconds, ended: false, chapters: playlist.chapters });
      }
      if (playlist.ended && next >= playlist.segments.length) {
        if (!stopped && source.readyState === "open") source.endOfStream();
        onProgress({ segments: next, seconds, ended: true, chapters: playlist.chapters });
        return;
      }
      await sleep(POLL_MS);
    }
  }

  source.addEventListener("sourceopen", () => {
    run().catch((exc) => { if (!stopped) onError(exc); });
  }, { once: true });

  return () => {
    stopped = true;
    audio.pause();
    audio.removeAttribute("src");
    audio.load();
    URL.revokeObjectURL(url);
  };
}
