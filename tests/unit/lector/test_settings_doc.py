"""docs/operations.md documents every setting, as ``lector/settings.py`` defines it today."""

from __future__ import annotations

import re

import pytest
from pydantic.fields import FieldInfo

from lector import settings_doc
from lector.settings import ClientSettings, Settings

PAGE = settings_doc.DOC.read_text()


def _documented() -> set[str]:
    block = PAGE.partition(settings_doc.BEGIN)[2].partition(settings_doc.END)[0]
    return set(re.findall(r"^\| `([A-Z0-9_]+)` \|", block, flags=re.MULTILINE))


def test_every_setting_has_a_row_in_docs_operations() -> None:
    expected = {settings_doc.variable(name, field) for model in (Settings, ClientSettings)
                for name, field in model.model_fields.items()}
    assert len(expected) >= 63
    assert expected - _documented() == set(), "run: python -m lector.settings_doc --write"
    assert _documented() - expected == set(), "the page documents settings that no longer exist"


def test_the_page_is_what_the_generator_writes_today() -> None:
    """A changed default, choice or note makes the page stale: regenerate it."""
    assert settings_doc.updated(PAGE) == PAGE, "run: python -m lector.settings_doc --write"


def test_a_setting_without_a_note_or_description_cannot_be_documented() -> None:
    with pytest.raises(ValueError, match="no note"):
        settings_doc.meaning("brand_new", FieldInfo(annotation=int, default=1))
    assert set(settings_doc.NOTES) <= set(Settings.model_fields) | set(ClientSettings.model_fields)


def test_defaults_and_consequences_an_operator_must_know_are_on_the_page() -> None:
    row = next(line for line in PAGE.splitlines() if line.startswith("| `LECTOR_RETENTION_DAYS` |"))
    assert f"`{Settings.model_fields['retention_days'].default}`" in row and "deleted" in row
    assert "| `MODEL_URL` |" in PAGE and "| `ARCANA_GER_MODEL_URL` |" in PAGE  # read without the prefix
    dtype = next(line for line in PAGE.splitlines() if line.startswith("| `LECTOR_ENGINE_DTYPE` |"))
    assert all(f"`{choice}`" in dtype for choice in ("auto", "float32", "bfloat16", "int8"))
