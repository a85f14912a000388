"""The console (facade/console/) in a real headless Chromium against the real stack.

Controls are found by their accessible names, as a screen-reader user would find them. Figures
the page shows are compared with the API's own answers, fetched here with httpx.
"""

from __future__ import annotations

import csv
import io
import json
import re
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.browser.conftest import ADMIN_TOKEN, ARTIFACTS, Console
from tests.fixtures.stack import make_key

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FIND_BY_NAME = """
const want = arguments[0];
for (const el of document.querySelectorAll('input, select, textarea, button, a, audio, progress, [role]')) {
  if (!el.getClientRects().length) continue;
  let name = el.getAttribute('aria-label');
  if (!name && el.labels && el.labels.length) name = el.labels[0].textContent;
  if (!name && (el.tagName === 'BUTTON' || el.tagName === 'A')) name = el.textContent;
  if (name && name.trim() === want) return el;
}
return null;
"""


def control(console: Console, name: str, timeout: float = 10) -> Any:
    """The visible control whose accessible name is ``name``."""
    return WebDriverWait(console.driver, timeout).until(
        lambda d: d.execute_script(FIND_BY_NAME, name), message=f"no visible control named {name!r}"
    )


def fill(console: Console, name: str, value: str) -> None:
    element = control(console, name)
    element.clear()
    element.send_keys(value)


def open_page(console: Console, page: str) -> None:
    console.driver.get(f"{console.url}#{page}")
    WebDriverWait(console.driver, 10).until(
        lambda d: d.execute_script(f"return !document.getElementById('page-{page}').hidden")
    )


def pick(console: Console, label: str, value: str) -> None:
    """Choose ``value`` in the select labelled ``label`` as a user does, again if the page drew
    the select's options anew meanwhile (a list that landed: the options Selenium held are gone,
    the value picked is kept across the redraw)."""
    for attempt in range(3):
        try:
            Select(control(console, label)).select_by_value(value)
            return
        except StaleElementReferenceException:
            if attempt == 2:
                raise


def wait_for(console: Console, script: str, timeout: float, message: str) -> Any:
    return WebDriverWait(console.driver, timeout, poll_frequency=0.1).until(
        lambda d: d.execute_script(script), message=message
    )


def screenshot(console: Console, name: str) -> list[Path]:
    """The page as it stands, at desktop and at phone width, whole (not just the first screen)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    paths = []
    for label, width in (("desktop", 1280), ("phone", 390)):
        console.driver.set_window_size(width, 900)
        height = console.driver.execute_script("return document.documentElement.scrollHeight")
        console.driver.set_window_size(width, min(max(height + 140, 900), 4000))
        path = ARTIFACTS / f"{name}-{label}.png"
        console.driver.save_screenshot(str(path))
        paths.append(path)
    console.driver.set_window_size(1280, 900)
    return paths


def download(console: Console, name: str, timeout: float = 30) -> Path:
    """Press the control named ``name`` and wait for the file it saves in the download folder."""
    before = set(console.downloads.iterdir())
    control(console, name).click()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        saved = [
            p
            for p in set(console.downloads.iterdir()) - before
            if not p.name.endswith(".crdownload") and not p.name.startswith(".")
        ]
        if saved and saved[0].stat().st_size:
            return saved[0]
        time.sleep(0.1)
    pytest.fail(f"{name!r} downloaded nothing")


def submit_and_follow(console: Console) -> str:
    """Press Submit and watch the progress card until the finished job opens; its short id."""
    previous = console.driver.execute_script("return document.getElementById('book-progress-id').textContent")
    control(console, "Submit").click()
    statuses: set[str] = set()
    texts: set[str] = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        state = console.driver.execute_script(
            "const b = document.getElementById('book-progress'); const c = document.getElementById('book-progress-card');"
            "const e = document.getElementById('book-error');"
            "const id = document.getElementById('book-progress-id').textContent;"
            "return [c.hidden ? null : document.getElementById('book-progress-text').textContent,"
            " e.hidden ? '' : e.textContent, id,"
            " !document.getElementById('job-detail').hidden"
            " && !!(document.getElementById('job-download-audio') || document.getElementById('job-download-zip'))"
            " && document.getElementById('job-detail-id').textContent === id]"
        )
        assert not state[1], f"the page shows an error: {state[1]}"
        if state[2] == previous:  # the page still shows the job before this one
            time.sleep(0.05)
            continue
        if state[0]:
            statuses.add(state[0].split(" · ")[0])
            texts.add(state[0])
        if state[3]:
            assert statuses & {"queued", "planning", "running", "assembling"}, (
                texts
            )  # progress before the end
            assert "succeeded" in statuses
            assert any(re.search(r"\b\d+ of \d+ chunks\b", t) for t in texts), texts
            return str(state[2])
        time.sleep(0.1)
    pytest.fail(f"the book did not finish; statuses seen: {statuses}")


def redrawn(console: Console, selector: str, action: Callable[[], object]) -> None:
    """Do ``action`` and wait until the page has drawn ``selector`` afresh (what it replaces goes stale)."""
    quoted = json.dumps(selector)
    console.driver.execute_script(
        f"for (const e of document.querySelectorAll({quoted})) e.dataset.before = '1'"
    )
    action()
    wait_for(
        console,
        f"const e = document.querySelector({quoted}); return !!e && !e.dataset.before"
        " && !document.querySelector('[aria-busy]')",
        10,
        f"{selector} was not drawn again",
    )


def is_mp3(data: bytes) -> bool:
    return data[:3] == b"ID3" or (data[0] == 0xFF and data[1] & 0xE0 == 0xE0)


def speak(console: Console, text: str) -> None:
    open_page(console, "playground")
    fill(console, "API key", console.api_key)
    fill(console, "Text", text)
    Select(control(console, "Model")).select_by_value("coda")
    Select(control(console, "Language")).select_by_value("eng")
    Select(control(console, "Voice")).select_by_value("joe")
    control(console, "Speak").click()


def test_the_console_is_served_with_a_strict_csp(console: Console) -> None:
    response = httpx.get(console.url)
    csp = response.headers["content-security-policy"]
    assert response.status_code == 200 and "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "<script>" not in response.text  # modules only, from files
    assert httpx.get(f"{console.stack.api_url}/console", follow_redirects=True).url.path == "/console/"


def test_a_wrong_key_shows_the_contract_s_message(console: Console) -> None:
    open_page(console, "playground")
    fill(console, "API key", "lk_" + "x" * 40)
    control(console, "Speak").click()
    wait_for(
        console,
        "const e = document.getElementById('pg-error'); return !e.hidden && e.textContent",
        20,
        "no error shown",
    )
    assert (
        console.driver.execute_script("return document.getElementById('pg-error').textContent")
        == "invalid api key"
    )
    open_page(console, "usage")  # the HTTP routes say the same
    wait_for(console, "return !document.getElementById('usage-error').hidden", 10, "no usage error")
    assert (
        console.driver.execute_script("return document.getElementById('usage-error').textContent")
        == "invalid api key"
    )
    open_page(console, "admin")  # and so does the admin API, for a wrong token
    fill(console, "Admin token", "adm_wrong_" + "x" * 32)
    control(console, "Open").click()
    wait_for(console, "return !document.getElementById('admin-error').hidden", 10, "no admin error")
    assert (
        console.driver.execute_script("return document.getElementById('admin-error').textContent")
        == "invalid api key"
    )
    assert console.driver.execute_script("return document.getElementById('admin-body').hidden")
    # the wrong key never left this tab's session storage
    assert console.driver.execute_script("return window.localStorage.length") == 0


def test_the_playground_speaks_a_sentence(console: Console) -> None:
    speak(console, "The console speaks this sentence while it is being made. And then a second one.")
    seconds = wait_for(
        console,
        "return Number(document.getElementById('pg-seconds').dataset.audioSeconds) || null",
        60,
        "no audio buffer",
    )
    assert seconds > 1.0
    ttfa = console.driver.execute_script("return document.getElementById('pg-ttfa').textContent")
    rtf = console.driver.execute_script("return document.getElementById('pg-rtf').textContent")
    assert ttfa.endswith(" ms") and int(ttfa.split()[0]) > 0
    assert rtf.endswith("×") and float(rtf[:-1]) > 0
    assert (
        console.driver.execute_script("return window.sessionStorage.getItem('lector.apiKey')")
        == console.api_key
    )
    assert console.driver.execute_script("return window.localStorage.length") == 0
    screenshot(console, "console-playground")
    Select(control(console, "Format")).select_by_value("wav")
    wav = download(console, "Download").read_bytes()  # what was heard, as WAV
    assert wav[:4] == b"RIFF" and wav[8:12] == b"WAVE" and len(wav) > 44 + 2 * 24000


def test_words_are_highlighted_as_they_are_spoken(console: Console) -> None:
    speak(console, "Every word of this sentence lights up in turn while the voice reads it aloud.")
    first = wait_for(
        console,
        "const s = document.querySelector('#pg-words span.current'); return s && s.textContent",
        60,
        "no word was highlighted",
    )
    assert first.strip()
    # highlighting moves on through the sentence, in time with the audio
    wait_for(
        console,
        "return Number(document.getElementById('pg-words').dataset.highlighted) >= 4",
        30,
        "the highlight did not move on",
    )
    spoken = console.driver.execute_script("return document.querySelectorAll('#pg-words span.spoken').length")
    assert spoken >= 1


def test_without_websocket_or_web_audio_the_playground_streams_over_http(console: Console) -> None:
    """A browser with neither WebSocket nor Web Audio (both removed before the page's scripts run)
    gets MP3 from /v1/service-tts through MediaSource: it plays before the last byte is in."""
    script = console.driver.execute_cdp_cmd(
        "Page.addScriptToEvaluateOnNewDocument",
        {"source": "delete window.WebSocket; delete window.AudioContext; delete window.webkitAudioContext;"},
    )
    try:
        console.driver.get("about:blank")  # a new document, so the script runs before the console's
        speak(
            console,
            "Over plain HTTP this voice still starts early. It goes on with a second sentence. And a third.",
        )
        assert console.driver.execute_script("return typeof WebSocket") == "undefined"
        seconds = wait_for(
            console,
            "return Number(document.getElementById('pg-seconds').dataset.audioSeconds) || null",
            60,
            "no audio over HTTP",
        )
        audio = console.driver.execute_script(
            "const a = document.getElementById('pg-audio');"
            " return [a.dataset.transport, a.src.startsWith('blob:'), a.buffered.length && a.buffered.end(0),"
            " Number(a.dataset.playingAt), Number(a.dataset.doneAt)]"
        )
        assert audio[0] == "http" and audio[1] and audio[2] > 1.0 and seconds > 1.0
        assert 0 < audio[3] < audio[4]  # playing began while the stream was still arriving
        assert console.driver.execute_script("return document.getElementById('pg-error').hidden")
    finally:
        console.driver.execute_cdp_cmd(
            "Page.removeScriptToEvaluateOnNewDocument", {"identifier": script["identifier"]}
        )
    console.driver.refresh()


def test_a_short_book_renders_with_progress_and_downloads(console: Console) -> None:
    open_page(console, "books")
    fill(console, "API key", console.api_key)
    # The page is the same document as the upload test's: its file input still holds that EPUB,
    # which a submission would send instead of the text.
    console.driver.execute_script("arguments[0].value = ''", control(console, "Book file"))
    fill(console, "Book text", "Chapter One\n\nThe lighthouse keeper woke early. The sea was calm.")
    Select(control(console, "Format")).select_by_value("mp3")
    Select(control(console, "Voice")).select_by_value("joe")
    submit_and_follow(console)
    duration = wait_for(
        console,
        "const a = document.getElementById('job-audio'); return a.readyState >= 1 && a.duration",
        30,
        "the player did not load the audio",
    )
    assert duration > 1.0
    saved = download(console, "Download mp3")
    data = saved.read_bytes()
    assert saved.suffix == ".mp3" and len(data) > 4000 and is_mp3(data)
    wait_for(console, "return document.querySelectorAll('#job-chapters li').length", 10, "no chapters listed")
    # the account's jobs list it, finished
    assert console.driver.execute_script(
        "return document.querySelector('#jobs-body span.badge.succeeded') !== null"
    )
    # a long one is canceled from the progress card
    long_book = " ".join(f"Sentence number {i} waits its turn in a long book." for i in range(300))
    console.driver.execute_script(
        "arguments[0].value = arguments[1]", control(console, "Book text"), long_book
    )
    control(console, "Submit").click()
    wait_for(
        console,
        "const b = document.getElementById('book-progress');"
        " return ['queued', 'planning', 'running'].includes(b.dataset.status) && !document.getElementById('book-cancel').disabled",
        30,
        "the long book never showed as active",
    )
    cancel = control(console, "Cancel")
    # The form grew (title, author, delivery, the QA check): the card can sit under the sticky
    # header, in view for WebDriver (which then does not scroll) but covered; a person scrolls.
    console.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", cancel)
    cancel.click()
    wait_for(
        console,
        "return document.getElementById('book-progress').dataset.status === 'canceled'",
        30,
        "not canceled",
    )
    wait_for(
        console,
        "return !!document.querySelector('#jobs-body span.badge.canceled')",
        10,
        "not listed canceled",
    )


def test_a_book_is_heard_while_it_renders(console: Console) -> None:
    """The progress card's player plays the job's live HLS playlist through MediaSource."""
    open_page(console, "books")
    fill(console, "API key", console.api_key)
    console.driver.execute_script("arguments[0].value = ''", control(console, "Book file"))
    book = " ".join(f"Sentence number {i} is heard while the book is still being made." for i in range(50))
    console.driver.execute_script("arguments[0].value = arguments[1]", control(console, "Book text"), book)
    Select(control(console, "Format")).select_by_value("mp3")
    Select(control(console, "Voice")).select_by_value("joe")
    previous = console.driver.execute_script("return document.getElementById('book-progress-id').textContent")
    control(console, "Submit").click()
    wait_for(
        console,
        f"return document.getElementById('book-progress-id').textContent !== {json.dumps(previous)}",
        30, "the new job is not followed",
    )
    button = control(console, "Listen while it renders")
    console.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    button.click()
    played = wait_for(
        console,
        "const a = document.getElementById('book-live'); return a.currentTime > 0 && a.currentTime",
        240, "the live player never played",
    )
    assert played > 0
    state = console.driver.execute_script(
        "const a = document.getElementById('book-live'); const e = document.getElementById('book-error');"
        "return [a.src, e.hidden ? '' : e.textContent, document.getElementById('book-live-text').textContent,"
        " performance.getEntriesByType('resource').map((r) => r.name)]"
    )
    src, error, status, fetched = state
    assert src.startswith("blob:")  # a MediaSource, not a file
    assert not error, error
    assert re.search(r"\b\d+ segments ready", status), status
    assert any(name.endswith("/stream.m3u8") for name in fetched)
    assert any(name.endswith("/stream/init.mp4") for name in fetched)
    assert any(re.search(r"/stream/\d+\.m4s$", name) for name in fetched)


def tiny_epub(path: Path) -> Path:
    """A valid EPUB 3 of two chapters, titled by its navigation document (what books.sources reads)."""
    chapter = (
        '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>{0}'
        "</title></head><body><h1>{0}</h1><p>{1}</p></body></html>"
    )
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile '
            'full-path="OEBPS/book.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
        )
        z.writestr(
            "OEBPS/book.opf",
            '<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf"'
            ' version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
            '<dc:identifier id="id">console-test</dc:identifier><dc:title>Harbour Tales</dc:title>'
            "<dc:language>en</dc:language></metadata><manifest>"
            '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
            '<item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/>'
            '<item id="c2" href="c2.xhtml" media-type="application/xhtml+xml"/></manifest>'
            '<spine><itemref idref="c1"/><itemref idref="c2"/></spine></package>',
        )
        z.writestr(
            "OEBPS/nav.xhtml",
            '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">'
            '<body><nav epub:type="toc"><ol><li><a href="c1.xhtml">The Harbour</a></li>'
            '<li><a href="c2.xhtml">The Storm</a></li></ol></nav></body></html>',
        )
        z.writestr("OEBPS/c1.xhtml", chapter.format("The Harbour", "Boats rocked gently at the quay."))
        z.writestr("OEBPS/c2.xhtml", chapter.format("The Storm", "Thunder rolled over the grey water."))
    return path


def test_uploaded_books_render_and_every_download_works(console: Console, tmp_path: Path) -> None:
    """A .txt and an .epub chosen in "Book file" become jobs that finish; audio, SRT, VTT and
    timestamps download, and say what the files said."""
    open_page(console, "books")
    fill(console, "API key", console.api_key)
    control(console, "Book text").clear()
    Select(control(console, "Voice")).select_by_value("joe")
    Select(control(console, "Format")).select_by_value("mp3")
    manuscript = tmp_path / "manuscript.txt"
    manuscript.write_text("The ferryman counted seven gulls on the mast.\n", encoding="utf-8")
    control(console, "Book file").send_keys(str(manuscript))
    submit_and_follow(console)
    assert is_mp3(download(console, "Download mp3").read_bytes())
    assert "ferryman" in download(console, "Download SRT").read_text(encoding="utf-8")

    control(console, "Book file").send_keys(str(tiny_epub(tmp_path / "harbour.epub")))
    job = submit_and_follow(console)
    titles = wait_for(
        console,
        "const li = [...document.querySelectorAll('#job-chapters li')];"
        " return li.length && li.map(x => x.firstChild.textContent)",
        10,
        "no chapters listed",
    )
    assert [t.split(" (")[0] for t in titles] == ["The Harbour", "The Storm"]
    audio = download(console, "Download mp3")
    assert audio.name.startswith(job) and audio.suffix == ".mp3" and is_mp3(audio.read_bytes())
    srt = download(console, "Download SRT").read_text(encoding="utf-8")
    assert "-->" in srt and "quay" in srt and "Thunder" in srt
    vtt = download(console, "Download VTT").read_text(encoding="utf-8")
    assert vtt.startswith("WEBVTT") and "grey water" in vtt
    stamps = json.loads(download(console, "Download timestamps").read_text(encoding="utf-8"))
    assert [c["title"] for c in stamps["chapters"]] == ["The Harbour", "The Storm"] and stamps["words"]
    screenshot(console, "console-books")


def test_an_acx_delivery_shows_its_compliance_report_and_downloads_its_zip(console: Console) -> None:
    """A book submitted with the ACX delivery opens as a report (each file's rules, measured,
    limit, pass or fail) and a zip, not a player."""
    open_page(console, "books")
    fill(console, "API key", console.api_key)
    # The page is the same document as the upload test's: its file input still holds that EPUB,
    # which a submission would send instead of the text.
    console.driver.execute_script("arguments[0].value = ''", control(console, "Book file"))
    fill(console, "Book text", "Chapter One\n\nThe lighthouse keeper woke early. The sea was calm.")
    fill(console, "Title", "The Lighthouse")
    fill(console, "Author", "A. Keeper")
    Select(control(console, "Voice")).select_by_value("joe")
    Select(control(console, "Delivery")).select_by_value("acx")
    submit_and_follow(console)
    rows = wait_for(
        console,
        "const t = document.getElementById('job-compliance'); const r = [...t.querySelectorAll('tbody tr')];"
        " return !t.hidden && r.length && r.map(x => [...x.cells].map(c => c.textContent))",
        30,
        "no compliance report",
    )
    files = {r[0] for r in rows}
    assert {"00 Opening Credits.mp3", "01 Chapter One.mp3", "02 Closing Credits.mp3", "Retail Sample.mp3"} == files
    by_rule = {(r[0], r[1]): r[4] for r in rows}
    assert by_rule[("01 Chapter One.mp3", "peak")] == "pass" and by_rule[("01 Chapter One.mp3", "RMS")] == "pass"
    assert by_rule[("Retail Sample.mp3", "duration")] == "fail"  # a two-sentence book has no minute to sample
    assert console.driver.execute_script("return document.getElementById('job-audio').hidden")
    saved = download(console, "Download zip")
    with zipfile.ZipFile(saved) as archive:
        assert set(archive.namelist()) == files | {"compliance.json"}
    screenshot(console, "console-acx")


CAST_BOOK = "The rain had stopped.\n\n“Shall we walk to the village?” said Lizzy.\n\n“If you like,” someone answered."


def _job(console: Console, short_id: str) -> dict[str, Any]:
    auth = {"Authorization": f"Bearer {console.api_key}"}
    jobs = httpx.get(f"{console.stack.api_url}/v1/jobs?limit=10", headers=auth, timeout=30).json()["jobs"]
    [job] = [j for j in jobs if j["id"].startswith(short_id)]
    return job  # type: ignore[no-any-return]


def test_a_cast_is_set_up_and_every_voice_heard_before_the_book_renders(console: Console) -> None:
    """The narrator is the book's voice; Elizabeth (called Lizzy in the text) gets nora, other
    dialogue ivy. Each voice's sample plays in the page before the book is submitted, and the
    finished book's timestamps name the voice of each sentence."""
    open_page(console, "books")
    fill(console, "API key", console.api_key)
    console.driver.execute_script("arguments[0].value = ''", control(console, "Book file"))
    fill(console, "Book text", CAST_BOOK)
    Select(control(console, "Model")).select_by_value("coda")
    Select(control(console, "Language")).select_by_value("eng")
    Select(control(console, "Voice")).select_by_value("joe")
    Select(control(console, "Format")).select_by_value("mp3")
    control(console, "Read dialogue with a cast").click()
    control(console, "Add character").click()
    fill(console, "Character 1 name", "Elizabeth")
    fill(console, "Character 1 aliases", "Lizzy, Eliza")
    wait_for(console, "return [...document.querySelectorAll('#cast-dialogue option')].some(o => o.value === 'ivy')", 10,
             "the dialogue voice has no choices")
    Select(control(console, "Character 1 voice")).select_by_value("nora")
    Select(control(console, "Dialogue voice")).select_by_value("ivy")
    for button, voice in (("Hear character 1", "nora"), ("Hear narrator", "joe"), ("Hear dialogue voice", "ivy")):
        control(console, button).click()
        seconds = wait_for(
            console,
            f"const a = document.getElementById('cast-sample'); return a.dataset.voice === '{voice}'"
            " && a.readyState >= 1 && Number.isFinite(a.duration) && a.duration",
            60, f"no sample of {voice}",
        )
        assert seconds > 1.0
    screenshot(console, "console-cast")
    job = _job(console, submit_and_follow(console))
    assert job["cast"] == {"narrator": "joe", "dialogue": "ivy",
                           "characters": {"Elizabeth": {"voice": "nora", "aliases": ["Lizzy", "Eliza"]}}}
    auth = {"Authorization": f"Bearer {console.api_key}"}
    stamps = httpx.get(f"{console.stack.api_url}/v1/jobs/{job['id']}/timestamps.json", headers=auth, timeout=30).json()
    voiced = {s["text"]: s["voice"] for s in stamps["sentences"]}
    assert voiced["“Shall we walk to the village?”"] == "nora" and voiced["The rain had stopped."] == "joe"
    assert voiced["“If you like,”"] == "ivy"
    # a character row without a name is the page's own message, nothing sent
    control(console, "Add character").click()
    control(console, "Submit").click()
    assert wait_for(console, "const e = document.getElementById('book-error'); return !e.hidden && e.textContent", 5,
                    "no message") == "every character needs a name (or remove the row)"
    control(console, "Remove character 2").click()
    control(console, "Read dialogue with a cast").click()  # the next test's book has no cast


PLS_PAGE = ('<?xml version="1.0" encoding="UTF-8"?>\n<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" '
            'alphabet="ipa" xml:lang="en-US">\n{}\n</lexicon>')


def test_lexicons_are_saved_listed_opened_and_deleted_as_with_the_cli(console: Console) -> None:
    auth = {"Authorization": f"Bearer {console.api_key}"}
    api = f"{console.stack.api_url}/v1/lexicons"
    open_page(console, "lexicons")
    fill(console, "API key", console.api_key)
    control(console, "Refresh").click()
    wait_for(console, "return !document.getElementById('lexicons-empty').hidden", 10, "an empty list is not said")
    fill(console, "Lexicon name", "places")
    first = PLS_PAGE.format("<lexeme><grapheme>NYC</grapheme><alias>New York City</alias></lexeme>")
    console.driver.execute_script("arguments[0].value = arguments[1]", control(console, "PLS document"), first)
    control(console, "Save version").click()
    wait_for(console, "return document.querySelector('#lexicons-body tr[data-lexicon=\"places\"]')", 10, "not listed")
    assert httpx.get(api, headers=auth, timeout=30).json()["lexicons"][0] | {"createdAt": ""} == {
        "name": "places", "version": 1, "lang": "en", "lexemes": 1, "sizeBytes": len(first.encode()),
        "default": False, "createdAt": ""}
    second = PLS_PAGE.format("<lexeme><grapheme>NYC</grapheme><alias>Gotham</alias></lexeme>"
                             "<lexeme><grapheme>Nguyen</grapheme><phoneme>wɪn</phoneme></lexeme>")
    console.driver.execute_script("arguments[0].value = arguments[1]", control(console, "PLS document"), second)
    control(console, "Use by default").click()
    control(console, "Save version").click()
    wait_for(console, "return document.getElementById('lexicon-status').textContent.includes('version 2')", 10, "no v2")
    listed = httpx.get(api, headers=auth, timeout=30).json()["lexicons"]
    assert [(x["name"], x["version"], x["lexemes"], x["default"]) for x in listed] == [("places", 2, 2, True)]
    # a malformed PLS: the API's own 400, which names the line
    broken = PLS_PAGE.format("<lexeme><grapheme>NYC</grapheme>")
    expected = httpx.put(f"{api}/places", headers=auth, content=broken, timeout=30)
    assert expected.status_code == 400
    console.driver.execute_script("arguments[0].value = arguments[1]", control(console, "PLS document"), broken)
    control(console, "Save version").click()
    shown = wait_for(console, "const e = document.getElementById('lexicon-error'); return !e.hidden && e.textContent", 10,
                     "no error shown")
    assert shown == expected.text and "line" in shown
    # opened: the newest version's document back in the editor
    console.driver.execute_script("arguments[0].value = ''", control(console, "PLS document"))
    control(console, "Open lexicon places").click()
    wait_for(console, "return document.getElementById('lexicon-content').value.includes('Gotham')", 10, "not opened")
    assert console.driver.execute_script("return document.getElementById('lexicon-content').value") == second
    screenshot(console, "console-lexicons")
    control(console, "Delete lexicon places").click()
    wait_for(console, "return !document.querySelector('#lexicons-body tr')", 10, "still listed")
    assert httpx.get(api, headers=auth, timeout=30).json() == {"lexicons": []}


def test_the_usage_chart_totals_equal_the_apis_figures(console: Console) -> None:
    open_page(console, "usage")
    fill(console, "API key", console.api_key)
    control(console, "Show usage").click()
    drawn = wait_for(
        console,
        "const r = [...document.querySelectorAll('#usage-chart rect')];"
        "return r.length && r.reduce((s, x) => s + Number(x.dataset.value), 0)",
        20,
        "no chart drawn",
    )
    start, end = _shown_period(console, "usage")
    api = httpx.get(
        f"{console.stack.api_url}/v1/usage",
        params={"from": start, "to": end, "groupBy": "day,model"},
        headers={"Authorization": f"Bearer {console.api_key}"},
    ).json()
    assert drawn == api["total"]["characters"] > 0  # the playground tests above were billed
    shown = console.driver.execute_script(
        "return Number(document.getElementById('usage-total').dataset.value)"
    )
    assert shown == api["total"]["characters"]
    label = console.driver.execute_script(
        "return document.querySelector('#usage-chart svg').getAttribute('aria-label')"
    )
    assert str(api["total"]["characters"]) in label
    table = console.driver.execute_script("return document.querySelectorAll('#usage-body tr').length")
    assert table == len(api["rows"])
    rows = list(csv.DictReader(io.StringIO(download(console, "Download CSV").read_text(encoding="utf-8"))))
    assert sum(int(r["characters"]) for r in rows) == api["total"]["characters"]
    screenshot(console, "console-usage")


def test_an_admin_creates_a_key_and_sees_it_once(console: Console) -> None:
    open_page(console, "admin")
    fill(console, "Admin token", ADMIN_TOKEN)
    control(console, "Open").click()
    name = f"console-new-{datetime.now(UTC):%H%M%S%f}"
    fill(console, "New account name", name)
    control(console, "Create account").click()
    wait_for(
        console, f"return !!document.querySelector('tr[data-account=\"{name}\"]')", 10, "account not listed"
    )
    Select(control(console, "Key account")).select_by_value(name)
    fill(console, "Key name", "from-console")
    control(console, "Create key").click()
    key = wait_for(
        console,
        "const k = document.getElementById('new-key-value').textContent; return k || null",
        10,
        "no key shown",
    )
    assert key.startswith("lk_")
    # the key works, and it is the account's
    own = httpx.get(
        f"{console.stack.api_url}/v1/usage",
        params={"from": "2020-01-01"},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert own.status_code == 200 and own.json()["account"] == name
    prefix = key[:12]
    wait_for(
        console, f"return !!document.querySelector('tr[data-prefix^=\"{prefix[:8]}\"]')", 10, "key not listed"
    )
    control(console, "Done").click()
    assert key not in console.driver.page_source
    open_page(console, "playground")
    open_page(console, "admin")  # back again: the list shows prefixes only
    Select(control(console, "Key account")).select_by_value(name)
    wait_for(
        console,
        "return document.querySelectorAll('#keys-body tr[data-prefix]').length === 1",
        10,
        "no key row",
    )
    assert key not in console.driver.page_source
    storage = console.driver.execute_script("return JSON.stringify(Object.assign({}, window.sessionStorage))")
    assert key not in storage and ADMIN_TOKEN in storage
    screenshot(console, "console-admin")

    # the new account has nothing yet: the pages say so
    open_page(console, "books")
    fill(console, "API key", key)
    control(console, "Refresh").click()
    wait_for(
        console,
        "const e = document.getElementById('jobs-empty'); return !e.hidden && e.textContent",
        10,
        "no empty jobs list",
    )
    assert console.driver.execute_script("return document.querySelectorAll('#jobs-body tr').length") == 0
    open_page(console, "usage")
    wait_for(
        console,
        "return (document.querySelector('#usage-chart p.empty') || {}).textContent === "
        "'No usage in this period.'",
        10,
        "no empty usage chart",
    )

    # back in Admin: the account's WebSocket limit, then disable it, then revoke the key
    open_page(console, "admin")
    wait_for(
        console,
        "return !document.querySelector('[aria-busy]')",
        10,
        "admin loading",
    )
    rows = f'tr[data-account="{name}"]'
    fill(console, f"WebSocket limit for {name}", "7")
    redrawn(console, rows, lambda: control(console, f"Save limit for {name}").click())
    redrawn(console, rows, lambda: control(console, f"Disable {name}").click())
    assert console.driver.execute_script(f"return !!document.querySelector('{rows} .badge.disabled')")
    assert Select(control(console, "Key account")).first_selected_option.get_attribute("value") == name
    prefix = console.driver.execute_script(
        "return document.querySelector('#keys-body tr[data-prefix]').dataset.prefix"
    )
    assert key.startswith(prefix)
    control(console, f"Revoke {prefix}").click()
    wait_for(console, "return !!document.querySelector('#keys-body .badge.revoked')", 10, "not revoked")
    accounts = httpx.get(
        f"{console.stack.api_url}/admin/accounts", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}
    ).json()["accounts"]
    mine = next(a for a in accounts if a["name"] == name)
    assert (mine["wsConnectionsPerMinute"], mine["status"]) == (7, "disabled")
    refused = httpx.get(f"{console.stack.api_url}/v1/usage", headers={"Authorization": f"Bearer {key}"})
    assert refused.status_code == 401


# Holds back every answer to a request made with one key, or to a path that contains the given
# text (a slow network, a busy server) by the given milliseconds: the page's own fetch, wrapped
# in the browser.
LATE_FOR_KEY = """
const [key, ms] = arguments;
const plain = window.__plainFetch || window.fetch;
window.__plainFetch = plain;
window.fetch = async (path, options = {}) => {
  const response = await plain(path, options);
  const auth = (options.headers || {}).Authorization || "";
  if (auth === `Bearer ${key}` || String(path).includes(key)) await new Promise((done) => setTimeout(done, ms));
  return response;
};
"""
LATE_MS = 1500


@contextmanager
def answers_held_back(console: Console, match: str) -> Iterator[None]:
    """The page's answers to ``match`` (a key, or part of a path) arrive ``LATE_MS`` late."""
    console.driver.execute_script(LATE_FOR_KEY, match, LATE_MS)
    try:
        yield
    finally:
        console.driver.execute_script("if (window.__plainFetch) window.fetch = window.__plainFetch;")


def asked_with_each_key_in_turn(console: Console, button: str, old: str, new: str, shown: str, what: str) -> None:
    """Press ``button`` with the ``old`` key (its answer held back), then with ``new``: the page
    shows ``shown`` (a script that is truthy for the new key's answer) once the new answer is in,
    and still after the old one has landed. The tab's key is ``old`` again afterwards."""
    try:
        with answers_held_back(console, old):
            fill(console, "API key", old)
            control(console, button).click()
            fill(console, "API key", new)
            control(console, button).click()
            wait_for(console, shown, 10, f"no {what} for the new key")
            time.sleep(LATE_MS / 1000 + 0.5)  # past the previous key's late answer
            assert console.driver.execute_script(shown), f"the previous key's late answer replaced the new key's {what}"
    finally:
        fill(console, "API key", old)


def test_a_late_answer_for_the_previous_key_never_replaces_the_new_keys_jobs(console: Console, pg_url: str) -> None:
    """Refresh with one key, then with another before the first answer came: the page shows the
    second key's jobs, whenever the first answer lands (it once showed the previous account's)."""
    old, new = console.api_key, make_key(pg_url, "console-late")
    auth = {"Authorization": f"Bearer {old}"}
    if not httpx.get(f"{console.stack.api_url}/v1/jobs?limit=1", headers=auth, timeout=30).json()["jobs"]:
        submitted = httpx.post(
            f"{console.stack.api_url}/v1/jobs", headers=auth, json={"text": "One line.", "speaker": "joe"}, timeout=30
        )
        assert submitted.status_code == 202, submitted.text  # the previous key's list is not empty
    open_page(console, "books")
    empty = (
        "const e = document.getElementById('jobs-empty');"
        " return !e.hidden && !document.querySelector('#jobs-body tr[data-job]') && e.textContent"
    )
    asked_with_each_key_in_turn(console, "Refresh", old, new, empty, "empty jobs list")


def test_a_late_usage_report_for_the_previous_key_never_replaces_the_new_keys(console: Console, pg_url: str) -> None:
    """The usage page keeps the latest key's report too: the new account has used nothing."""
    old, new = console.api_key, make_key(pg_url, "console-late-usage")
    auth = {"Authorization": f"Bearer {old}"}

    def used() -> int:
        report = httpx.get(f"{console.stack.api_url}/v1/usage", params={"from": "2020-01-01"}, headers=auth, timeout=30)
        return int(report.json()["total"]["characters"])

    if not used():
        submitted = httpx.post(
            f"{console.stack.api_url}/v1/jobs", headers=auth, json={"text": "One line.", "speaker": "joe"}, timeout=30
        )
        assert submitted.status_code == 202, submitted.text
        deadline = time.monotonic() + 60
        while not used() and time.monotonic() < deadline:
            time.sleep(0.5)
    assert used() > 0  # the previous key's report is not the new one's
    open_page(console, "usage")
    nothing_used = "return Number(document.getElementById('usage-total').dataset.value ?? NaN) === 0"
    asked_with_each_key_in_turn(console, "Show usage", old, new, nothing_used, "empty usage report")


def test_a_late_key_list_for_the_previous_account_never_replaces_the_new_ones(console: Console, pg_url: str) -> None:
    """The admin's key list shows the account picked last, whenever the previous one's answer lands."""
    new_key = make_key(pg_url, "console-late-keys")

    def account_of(key: str) -> str:
        report = httpx.get(
            f"{console.stack.api_url}/v1/usage", params={"from": "2020-01-01"},
            headers={"Authorization": f"Bearer {key}"}, timeout=30,
        )
        return str(report.json()["account"])

    old_account, new_account = account_of(console.api_key), account_of(new_key)
    open_page(console, "admin")
    fill(console, "Admin token", ADMIN_TOKEN)
    control(console, "Open").click()
    wait_for(console, f"return !!document.querySelector('tr[data-account=\"{new_account}\"]')", 10, "account not listed")
    # Showing the page opened it already with the token an earlier test gave (``shown``), and
    # Open again: the second drawing of the accounts replaces the picker's options, so wait for both.
    wait_for(console, "return !document.querySelector('[aria-busy]')", 10, "admin loading")
    row = "return !!document.querySelector('#keys-body tr[data-prefix^=\"%s\"]')"
    with answers_held_back(console, f"/accounts/{old_account}/keys"):
        pick(console, "Key account", new_account)  # so that picking the old one below is a change
        wait_for(console, row % new_key[:8], 10, "the new account's key not listed")
        pick(console, "Key account", old_account)
        pick(console, "Key account", new_account)
        wait_for(console, row % new_key[:8], 10, "the new account's key not listed")
        time.sleep(LATE_MS / 1000 + 0.5)  # past the previous account's late answer
        assert console.driver.execute_script(row % new_key[:8]), "the previous account's late list replaced it"
        assert not console.driver.execute_script(row % console.api_key[:8])


def test_a_late_lexicon_list_for_the_previous_key_never_replaces_the_new_keys(console: Console, pg_url: str) -> None:
    """The lexicons page shows the latest key's lexicons: the new account has none."""
    old, new = console.api_key, make_key(pg_url, "console-late-lexicons")
    api, auth = f"{console.stack.api_url}/v1/lexicons", {"Authorization": f"Bearer {old}"}
    saved = httpx.put(
        f"{api}/late", headers=auth, timeout=30,
        content=PLS_PAGE.format("<lexeme><grapheme>NYC</grapheme><alias>New York City</alias></lexeme>"),
    )
    assert saved.is_success, saved.text  # the previous key's list is not empty
    open_page(console, "lexicons")
    empty = "return !document.getElementById('lexicons-empty').hidden && !document.querySelector('#lexicons-body tr')"
    try:
        asked_with_each_key_in_turn(console, "Refresh", old, new, empty, "empty lexicon list")
    finally:
        httpx.delete(f"{api}/late", headers=auth, timeout=30)


def test_the_admin_usage_charts_and_csv_equal_the_admin_report(console: Console) -> None:
    # The page's resource timings are read below; the browser keeps 250 by default, and the
    # earlier tests' polling on this page can fill that before the admin requests are made (a
    # slow run lost them so).
    console.driver.execute_script("performance.setResourceTimingBufferSize(100000); performance.clearResourceTimings()")
    open_page(console, "admin")
    fill(console, "Admin token", ADMIN_TOKEN)
    control(console, "Open").click()
    wait_for(console, "return !!document.querySelector('#admin-chart-day svg')", 20, "no admin chart")
    start, end = _shown_period(console, "admin")
    report = httpx.get(
        f"{console.stack.api_url}/admin/usage",
        params={"from": start, "to": end, "groupBy": "account,model,day"},
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
    ).json()
    total = report["total"]["characters"]
    assert total > 0  # the playground and the books above were billed
    for dimension in ("account", "model", "day"):
        expected: dict[str, int] = {}
        for row in report["rows"]:
            expected[row[dimension]] = expected.get(row[dimension], 0) + row["characters"]
        drawn = console.driver.execute_script(
            "const out = {}; for (const r of document.querySelectorAll(`#admin-chart-${arguments[0]} rect`))"
            " out[r.dataset.category] = (out[r.dataset.category] || 0) + Number(r.dataset.value); return out",
            dimension,
        )
        assert drawn == expected, dimension
        label = console.driver.execute_script(
            "const s = document.querySelector(`#admin-chart-${arguments[0]} svg`);"
            " return s.getAttribute('role') === 'img' && s.getAttribute('aria-label')",
            dimension,
        )
        assert label == f"Characters by {dimension}: {total} characters in all"
    shown = console.driver.execute_script(
        "return Number(document.getElementById('admin-total').dataset.value)"
    )
    assert shown == total
    table = console.driver.execute_script(
        "return [...document.querySelectorAll('#admin-usage-body tr')].map(tr => [...tr.cells].map(c => c.textContent))"
    )
    assert len(table) == len(report["rows"])
    assert sum(int(r[4].replace(",", "")) for r in table) == total
    rows = list(
        csv.DictReader(io.StringIO(download(console, "Download usage CSV").read_text(encoding="utf-8")))
    )
    assert sum(int(r["characters"]) for r in rows) == total and {r["account"] for r in rows} == {
        r["account"] for r in report["rows"]
    }

    # the token travelled only in headers: in no URL the page loaded, and nowhere in the server's log
    urls = console.driver.execute_script(
        "return [location.href, ...performance.getEntriesByType('resource').map(e => e.name)]"
    )
    assert any("/admin/usage" in u for u in urls) and not any(ADMIN_TOKEN in u for u in urls)
    log = console.stack.log_text("api")
    assert "/admin/usage" in log  # the log does record the admin requests ...
    assert ADMIN_TOKEN not in log and console.api_key not in log  # ... and never a secret


def test_every_control_has_an_accessible_name_and_the_csp_holds(console: Console) -> None:
    unnamed: dict[str, list[str]] = {}
    for page in ("playground", "books", "lexicons", "usage", "admin"):
        open_page(console, page)
        unnamed[page] = console.driver.execute_script(UNNAMED_CONTROLS)
    assert unnamed == {"playground": [], "books": [], "lexicons": [], "usage": [], "admin": []}
    broken = [
        entry["message"]
        for entry in console.driver.get_log("browser")
        if "Content Security Policy" in entry["message"] or "Uncaught" in entry["message"]
    ]
    assert not broken


UNNAMED_CONTROLS = """
const out = [];
for (const el of document.querySelectorAll('input, select, textarea, button, a, audio, progress, svg[role], [role="img"]')) {
  if (!el.getClientRects().length) continue;
  const name = (el.getAttribute('aria-label') || (el.labels && el.labels.length && el.labels[0].textContent)
    || ((el.tagName === 'BUTTON' || el.tagName === 'A') && el.textContent) || '').trim();
  if (!name) out.push(el.outerHTML.slice(0, 80));
}
return out;
"""


def _shown_period(console, prefix: str) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """The page's period as the API's ``from`` and exclusive ``to``: the page's "to" day is inclusive."""
    start = console.driver.execute_script(f"return document.getElementById('{prefix}-from').value")
    last = console.driver.execute_script(f"return document.getElementById('{prefix}-to').value")
    return start, (datetime.fromisoformat(last) + timedelta(days=1)).date().isoformat()
