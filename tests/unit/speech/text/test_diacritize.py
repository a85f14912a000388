"""Arabic diacritization: plain Arabic gains its harakat, nothing else changes."""

from __future__ import annotations

import subprocess
import sys
import unicodedata
from concurrent.futures import ThreadPoolExecutor

import pytest

import speech.text.diacritize as diacritize_module
from speech.text.diacritize import HARAKAT, diacritize_arabic, has_harakat

PLAIN = "ذهبت إلى السوق صباحا واشتريت خبزا وفاكهة طازجة."


def _skeleton(text: str) -> str:
    """The letters without any combining mark (hamza seats decomposed, as the model sees them)."""
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


def test_a_plain_sentence_gets_its_short_vowels() -> None:
    out = diacritize_arabic(PLAIN)
    marks = [c for c in out if c in HARAKAT]
    assert not has_harakat(PLAIN)
    assert len(marks) >= 15, out  # about one mark a letter; unvowelled input has none
    assert _skeleton(out) == _skeleton(PLAIN)
    assert out.endswith(".")


def test_known_words_are_vowelled_as_expected() -> None:
    out = diacritize_arabic("هل يمكنك أن تخبرني أين تقع محطة القطار؟")
    assert out.startswith("هَلْ ") and "الْقِطَارِ" in out and out.endswith("؟"), out


def test_text_without_arabic_is_returned_as_it_is() -> None:
    for text in ("", "   ", "Café au lait, s'il vous plaît 😀", "मेरा भाई", "123 456"):
        assert diacritize_arabic(text) == text


def test_only_the_arabic_runs_of_a_mixed_sentence_change() -> None:
    text = "Olá, café 😀 — ذهبت إلى السوق (Müller) ok"
    out = diacritize_arabic(text)
    assert out.startswith("Olá, café 😀 — ") and out.endswith(" (Müller) ok"), out
    assert has_harakat(out)
    assert _skeleton(out) == _skeleton(text)


def test_words_the_author_marked_keep_their_marks() -> None:
    marked = "كَتَبَ"  # the author's vowels (kataba), whatever the model would choose
    out = diacritize_arabic(f"{marked} الولد رسالة طويلة")
    assert out.split(" ")[0] == marked
    assert all(has_harakat(word) for word in out.split(" ")[1:]), out


def test_a_long_text_is_diacritized_whole() -> None:
    text = " ".join([PLAIN.rstrip(".")] * 30) + "."
    out = diacritize_arabic(text)
    assert len(text) > 400 and _skeleton(out) == _skeleton(text)
    assert sum(c in HARAKAT for c in out) > 300


def test_concurrent_calls_agree() -> None:
    expected = diacritize_arabic(PLAIN)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(diacritize_arabic, [PLAIN] * 16))
    assert results == [expected] * 16


def test_without_the_package_the_text_passes_through(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "text2tashkeel", None)  # import fails
    monkeypatch.setattr(diacritize_module, "_model", None)
    monkeypatch.setattr(diacritize_module, "_unavailable", False)
    assert diacritize_arabic(PLAIN) == PLAIN


def test_a_failing_model_leaves_the_text_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        def diacritize(self, text: str) -> str:
            raise RuntimeError("boom")

    monkeypatch.setattr(diacritize_module, "_model", Broken())
    assert diacritize_arabic(PLAIN) == PLAIN


def test_importing_the_module_loads_no_model() -> None:
    code = (
        "import sys, speech.text.diacritize; "
        "bad = [m for m in ('text2tashkeel', 'onnxruntime') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
