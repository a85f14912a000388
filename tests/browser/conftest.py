"""The console's browser tests: one real stack (API with an admin token, one worker, on the test
run's PostgreSQL, Redis and Swift bucket) and one headless Debian Chromium, both for the module.

The browser is ``/usr/bin/chromium`` driven through ``/usr/bin/chromedriver`` (``make test``
installs both with apt: ``infra/browser/install.sh``); nothing is downloaded at run time, and a
fresh profile directory keeps runs apart. Screenshots and downloads land under ``var/``.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.stack import ROOT, Stack, launch

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ARTIFACTS = ROOT / "var" / "console"
ADMIN_TOKEN = "adm_console_" + "t" * 32
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--autoplay-policy=no-user-gesture-required",
    "--window-size=1280,900",
)


@dataclass
class Console:
    stack: Stack
    driver: Any
    api_key: str
    downloads: Path

    @property
    def url(self) -> str:
        return f"{self.stack.api_url}/console/"


@pytest.fixture(scope="module")
def console_stack(stack_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    result = launch({**stack_env, "LECTOR_ADMIN_TOKEN": ADMIN_TOKEN}, tmp_path_factory.mktemp("console-logs"))
    try:
        yield result
    finally:
        result.stop_all()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Path]]:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.fail("Chromium is missing: run `bash infra/browser/install.sh` (make test does)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    downloads = ARTIFACTS / "downloads" / uuid.uuid4().hex[:8]
    downloads.mkdir(parents=True)
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.add_experimental_option(
        "prefs",
        {
            "download.default_directory": str(downloads),
            "download.prompt_for_download": False,
            "profile.default_content_setting_values.automatic_downloads": 1,  # SRT, VTT, ... one after another
        },
    )
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver, downloads
    finally:
        driver.quit()
        shutil.rmtree(downloads, ignore_errors=True)


@pytest.fixture(scope="module")
def console(console_stack: Stack, browser: tuple[Any, Path], pg_url: str) -> Console:
    from store.db import accounts, keys
    from store.db.session import make_engine, make_sessionmaker, session_scope

    engine = make_engine(pg_url)
    try:
        with session_scope(make_sessionmaker(engine)) as session:
            account = accounts.create_account(session=session, name=f"console-{uuid.uuid4().hex[:8]}")
            _, plaintext = keys.create_key(session=session, account_id=account.id)
    finally:
        engine.dispose()
    driver, downloads = browser
    return Console(stack=console_stack, driver=driver, api_key=plaintext, downloads=downloads)
