"""The ten API languages, their legacy 3-letter codes and their eSpeak NG voices.

The vendor API contract accepts ``lang`` as a 2-letter BCP 47 tag or as one of the vendor's 3-letter legacy
codes (``eng`` ... ``nld``, plus ``deu`` as the ISO 639-2/T spelling of ``ger``), and promises
the legacy codes stay accepted. Clients also send full tags with a region (``en-US``,
``pt_BR``); the region does not change the API language but does pick the eSpeak variant.

``canonical`` is a pure lookup that answers ``None`` for a tag we do not speak: only the caller
knows the model, which the vendor API contract's message (``Language <lang> is not supported for model
<model>``) needs, so raising ``LanguageNotSupported`` is the catalog's job, not this module's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Language:
    """One API language."""

    code: str
    """2-letter ISO 639-1 code: the canonical form used everywhere inside lector."""
    legacy: str
    """The vendor's 3-letter code, used as the key of the voice lists."""
    name: str
    """English name, as the voice details list spells it."""
    espeak_voice: str
    """eSpeak NG voice for phonemes and the formant fallback when no region is given."""


LANGUAGES: Final[dict[str, Language]] = {
    lang.code: lang
    for lang in (
        Language("en", "eng", "English", "en-us"),
        Language("es", "spa", "Spanish", "es"),
        Language("fr", "fra", "French", "fr-fr"),
        Language("pt", "por", "Portuguese", "pt-br"),
        Language("de", "ger", "German", "de"),
        Language("ja", "jpn", "Japanese", "ja"),
        Language("ar", "ara", "Arabic", "ar"),
        Language("hi", "hin", "Hindi", "hi"),
        Language("it", "ita", "Italian", "it"),
        Language("nl", "nld", "Dutch", "nl"),
    )
}

SUPPORTED: Final[tuple[str, ...]] = tuple(LANGUAGES)
"""The API languages in the vendor API contract's order."""

_ALIASES: Final[dict[str, str]] = {
    **{lang.code: lang.code for lang in LANGUAGES.values()},
    **{lang.legacy: lang.code for lang in LANGUAGES.values()},
    "deu": "de",
}

# Regional eSpeak NG variants; a region not listed here gets the language's default voice.
_ESPEAK_BY_REGION: Final[dict[tuple[str, str], str]] = {
    ("en", "us"): "en-us",
    ("en", "gb"): "en-gb",
    ("en", "uk"): "en-gb",
    ("es", "es"): "es",
    ("es", "419"): "es-419",
    ("es", "mx"): "es-419",
    ("es", "us"): "es-419",
    ("es", "ar"): "es-419",
    ("es", "co"): "es-419",
    ("fr", "fr"): "fr-fr",
    ("fr", "be"): "fr-be",
    ("fr", "ch"): "fr-ch",
    ("pt", "br"): "pt-br",
    ("pt", "pt"): "pt",
}


def _split(tag: str) -> tuple[str, str | None]:
    """(primary subtag, region subtag or None), lower-cased; ``_`` is taken as ``-``."""
    parts = [p for p in tag.strip().lower().replace("_", "-").split("-")]
    primary = parts[0]
    region = next((p for p in parts[1:] if len(p) == 2 or (len(p) == 3 and p.isdigit())), None)
    return primary, region


def canonical(tag: str) -> str | None:
    """The 2-letter API language for ``tag``, or ``None`` when lector does not speak it.

    Accepts ``en``, ``eng``, ``EN``, ``en-US``, ``en_us``, ``eng-US``. An empty or malformed
    tag gives ``None``, as does a language outside the ten.
    """
    if not isinstance(tag, str) or not tag.strip():
        return None
    primary, _ = _split(tag)
    return _ALIASES.get(primary)


def is_supported(tag: str) -> bool:
    return canonical(tag) is not None


def language(tag: str) -> Language:
    """The ``Language`` for any accepted tag; ``ValueError`` for a tag we do not speak."""
    code = canonical(tag)
    if code is None:
        raise ValueError(f"unknown language tag {tag!r}")
    return LANGUAGES[code]


def legacy(tag: str) -> str:
    """The vendor's 3-letter code for any accepted tag (``en-US`` -> ``eng``, ``deu`` -> ``ger``)."""
    return language(tag).legacy


def espeak_voice(tag: str) -> str:
    """The eSpeak NG voice for ``tag``, honouring a known region (``pt-PT`` -> ``pt``)."""
    code = language(tag).code
    _, region = _split(tag)
    if region is not None:
        return _ESPEAK_BY_REGION.get((code, region), LANGUAGES[code].espeak_voice)
    return LANGUAGES[code].espeak_voice
