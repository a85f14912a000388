"""The registry of per-language normalisation data: one module per API language.

Modules are imported on first use, so importing ``speech.text`` compiles no language's
patterns until that language is asked for.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Final

from speech.text.lexicons.base import Lexicon

MODULES: Final[dict[str, str]] = {
    code: f"speech.text.lexicons.{code}"
    for code in ("en", "es", "fr", "pt", "de", "ja", "ar", "hi", "it", "nl")
}


@cache
def lexicon(lang: str) -> Lexicon:
    """The ``Lexicon`` of a canonical 2-letter language code (``KeyError`` for any other)."""
    module = importlib.import_module(MODULES[lang])
    lex: Lexicon = module.LEXICON
    return lex


__all__ = ["Lexicon", "MODULES", "lexicon"]
