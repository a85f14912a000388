"""The console (facade/console/) in a real headless Chromium against the real stack.

Controls are found by their accessible names, as a screen-reader user would find them. Figures
the page shows are compared with the API's own answers, fetched here with httpx.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.browser.conftest import ADMIN_TOKEN, ARTIFACTS, Console

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
    return WebDriverWait(console.driver, timeout).until(lambda d: d.execute_script(FIND_BY_NAME, name),
                                                       message=f"no visible control named {name!r}")


def fill(console: Console, name: str, value: str) -> None:
    element = control(console, name)
    element.clear()
    element.send_keys(value)


def open_page(console: Console, page: str) -> None:
    console.driver.get(f"{console.url}#{page}")
    WebDriverWait(console.driver, 10).until(
        lambda d: d.execute_script(f"return !document.getElementById('page-{page}').hidden"))


def wait_for(console: Console, script: str, timeout: float, message: str) -> Any:
    return WebDriverWait(console.driver, timeout, poll_frequency=0.1).until(
        lambda d: d.execute_script(script), message=message)


def screenshot(console: Console, name: str, width: int = 1280, height: int = 900) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    console.driver.set_window_size(width, height)
    path = ARTIFACTS / f"{name}.png"
    console.driver.save_screenshot(str(path))
    console.driver.set_window_size(1280, 900)
    return path


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


def test_a_wrong_key_shows_the_seeds_message(console: Console) -> None:
    open_page(console, "playground")
    fill(console, "API key", "lk_" + "x" * 40)
    control(console, "Speak").click()
    wait_for(console, "const e = document.getElementById('pg-error'); return !e.hidden && e.textContent", 20,
             "no error shown")
    assert console.driver.execute_script("return document.getElementById('pg-error').textContent") == "invalid api key"
    open_page(console, "usage")  # the HTTP routes say the same
    wait_for(console, "return !document.getElementById('usage-error').hidden", 10, "no usage error")
    assert console.driver.execute_script("return document.getElementById('usage-error').textContent") == "invalid api key"
    # the wrong key never left this tab's session storage
    assert console.driver.execute_script("return window.localStorage.length") == 0


def test_the_playground_speaks_a_sentence(console: Console) -> None:
    speak(console, "The console speaks this sentence while it is being made. And then a second one.")
    seconds = wait_for(console, "return Number(document.getElementById('pg-seconds').dataset.audioSeconds) || null",
                       60, "no audio buffer")
    assert seconds > 1.0
    ttfa = console.driver.execute_script("return document.getElementById('pg-ttfa').textContent")
    rtf = console.driver.execute_script("return document.getElementById('pg-rtf').textContent")
    assert ttfa.endswith(" ms") and int(ttfa.split()[0]) > 0
    assert rtf.endswith("×") and float(rtf[:-1]) > 0
    assert console.driver.execute_script("return window.sessionStorage.getItem('lector.apiKey')") == console.api_key
    assert console.driver.execute_script("return window.localStorage.length") == 0
    screenshot(console, "console-playground-desktop")


def test_words_are_highlighted_as_they_are_spoken(console: Console) -> None:
    speak(console, "Every word of this sentence lights up in turn while the voice reads it aloud.")
    first = wait_for(console, "const s = document.querySelector('#pg-words span.current'); return s && s.textContent",
                     60, "no word was highlighted")
    assert first.strip()
    # highlighting moves on through the sentence, in time with the audio
    wait_for(console, "return Number(document.getElementById('pg-words').dataset.highlighted) >= 4", 30,
             "the highlight did not move on")
    spoken = console.driver.execute_script("return document.querySelectorAll('#pg-words span.spoken').length")
    assert spoken >= 1


def test_a_short_book_renders_with_progress_and_downloads(console: Console) -> None:
    open_page(console, "books")
    fill(console, "API key", console.api_key)
    fill(console, "Book text", "Chapter One\n\nThe lighthouse keeper woke early. The sea was calm.")
    Select(control(console, "Audio format")).select_by_value("mp3")
    Select(control(console, "Book voice")).select_by_value("joe")
    control(console, "Submit").click()
    statuses: set[str] = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        state = console.driver.execute_script(
            "const b = document.getElementById('book-progress'); const c = document.getElementById('book-progress-card');"
            "return c.hidden ? null : [b.dataset.status || '', document.getElementById('book-progress-text').textContent,"
            " !document.getElementById('job-detail').hidden && !!document.getElementById('job-download-audio')]")
        if state:
            statuses.add(state[0])
            if state[2]:
                break
        time.sleep(0.1)
    else:
        pytest.fail(f"the book did not finish; statuses seen: {statuses}")
    assert statuses & {"queued", "planning", "running", "assembling"}, statuses  # progress showed before the end
    assert "succeeded" in statuses
    screenshot(console, "console-books-phone", 390, 1400)
    duration = wait_for(console, "const a = document.getElementById('job-audio'); return a.readyState >= 1 && a.duration",
                        30, "the player did not load the audio")
    assert duration > 1.0
    before = set(console.downloads.iterdir())
    control(console, "Download mp3").click()
    deadline = time.monotonic() + 30
    saved: list[Path] = []
    while time.monotonic() < deadline:
        saved = [p for p in set(console.downloads.iterdir()) - before
                 if not p.name.endswith(".crdownload") and not p.name.startswith(".")]
        if saved:
            break
        time.sleep(0.1)
    assert saved, "nothing was downloaded"
    data = saved[0].read_bytes()
    assert saved[0].suffix == ".mp3" and len(data) > 4000
    assert data[:3] == b"ID3" or (data[0] == 0xFF and data[1] & 0xE0 == 0xE0)
    chapters = console.driver.execute_script("return document.querySelectorAll('#job-chapters li').length")
    assert chapters >= 1


def test_the_usage_chart_totals_equal_the_apis_figures(console: Console) -> None:
    open_page(console, "usage")
    fill(console, "API key", console.api_key)
    control(console, "Show usage").click()
    drawn = wait_for(console, "const r = [...document.querySelectorAll('#usage-chart rect')];"
                     "return r.length && r.reduce((s, x) => s + Number(x.dataset.value), 0)", 20, "no chart drawn")
    start = console.driver.execute_script("return document.getElementById('usage-from').value")
    last = console.driver.execute_script("return document.getElementById('usage-to').value")
    end = (datetime.fromisoformat(last) + timedelta(days=1)).date().isoformat()
    api = httpx.get(f"{console.stack.api_url}/v1/usage", params={"from": start, "to": end, "groupBy": "day,model"},
                    headers={"Authorization": f"Bearer {console.api_key}"}).json()
    assert drawn == api["total"]["characters"] > 0  # the playground tests above were billed
    shown = console.driver.execute_script("return Number(document.getElementById('usage-total').dataset.value)")
    assert shown == api["total"]["characters"]
    label = console.driver.execute_script("return document.querySelector('#usage-chart svg').getAttribute('aria-label')")
    assert str(api["total"]["characters"]) in label


def test_an_admin_creates_a_key_and_sees_it_once(console: Console) -> None:
    open_page(console, "admin")
    fill(console, "Admin token", ADMIN_TOKEN)
    control(console, "Open").click()
    name = f"console-new-{datetime.now(UTC):%H%M%S%f}"
    fill(console, "New account name", name)
    control(console, "Create account").click()
    wait_for(console, f"return !!document.querySelector('tr[data-account=\"{name}\"]')", 10, "account not listed")
    Select(control(console, "Key account")).select_by_value(name)
    fill(console, "Key name", "from-console")
    control(console, "Create key").click()
    key = wait_for(console, "const k = document.getElementById('new-key-value').textContent; return k || null", 10,
                   "no key shown")
    assert key.startswith("lk_")
    # the key works, and it is the account's
    own = httpx.get(f"{console.stack.api_url}/v1/usage", params={"from": "2020-01-01"},
                    headers={"Authorization": f"Bearer {key}"})
    assert own.status_code == 200 and own.json()["account"] == name
    prefix = key[:12]
    wait_for(console, f"return !!document.querySelector('tr[data-prefix^=\"{prefix[:8]}\"]')", 10, "key not listed")
    control(console, "Done").click()
    assert key not in console.driver.page_source
    open_page(console, "playground")
    open_page(console, "admin")  # back again: the list shows prefixes only
    Select(control(console, "Key account")).select_by_value(name)
    wait_for(console, "return document.querySelectorAll('#keys-body tr[data-prefix]').length === 1", 10, "no key row")
    assert key not in console.driver.page_source
    storage = console.driver.execute_script("return JSON.stringify(Object.assign({}, window.sessionStorage))")
    assert key not in storage and ADMIN_TOKEN in storage
    screenshot(console, "console-admin-desktop")
