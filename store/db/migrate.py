"""Run Alembic programmatically: ``lector migrate``, the CLI sub-commands and the test fixtures.

The URL travels in ``Config.attributes`` (not the ini file), so passwords containing ``%`` survive
and ``migrations/env.py`` needs no settings. Concurrent upgrades (several processes starting at
once) are serialised by an advisory lock taken in ``env.py``.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

REPO_ROOT = Path(__file__).resolve().parents[2]


def alembic_config(url: str) -> Config:
    """An Alembic config for the repository's migrations, pointed at ``url``."""
    config = Config(str(REPO_ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(REPO_ROOT / "migrations"))
    config.attributes["url"] = url
    config.attributes["configure_logging"] = False  # leave the host application's logging alone
    return config


def upgrade(url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    command.downgrade(alembic_config(url), revision)
