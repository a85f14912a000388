"""``bench.qa --replay``: a dumped run is scored again under the current rules, and ``--part``
keeps only the chunks of one half of the sentences (tune on one half, check on the other)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench.qa import report
from tests.support.defects import garble

SENTENCES = [
    "El museo cierra pronto los domingos, así que conviene llegar antes de comer.",
    "Un zorro cruzó el campo al amanecer y desapareció entre los arbustos sin hacer ruido.",
    "Ella escribió su nombre en la primera página del diario y lo escondió bajo la cama.",
    "Mañana lloverá en la costa, pero el sol volverá por la tarde a las montañas del norte.",
]


def _trial(label: str, group: list[int], heard: str) -> dict[str, Any]:
    return {"label": label, "sentences": group, "text": " ".join(SENTENCES[i] for i in group), "heard": heard,
            "seconds": 10.0}


def _run() -> dict[str, Any]:
    first, second = [0, 1], [2, 3]
    return {
        "machine": "MACHINE device=cpu", "lang": "es", "voice": "lucia", "model": "base", "sentences": 4,
        "cpu": {"synth_cpu": 10.0, "synth_audio": 40.0, "asr_cpu": 1.0, "asr_audio": 40.0},
        "trials": [
            _trial("clean", first, " ".join(SENTENCES[i] for i in first)),
            _trial("clean", second, "Ella escribió algo."),  # heard badly: a false alarm
            _trial("dropped", first, SENTENCES[1]),  # the first sentence unheard: caught
            _trial("dropped", second, " ".join(SENTENCES[i] for i in second)),  # heard whole: missed
        ],
    }


def _result(out: str, name: str) -> str:
    return re.search(rf"^RESULT {name} .*$", out, re.M).group(0)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("part", "clean", "dropped"),
    [("all", "chunks=2 .* false_alarms=1", "caught=1/2"), ("first", "chunks=1 .* false_alarms=0", "caught=1/1"),
     ("second", "chunks=1 .* false_alarms=1", "caught=0/1")],
)
def test_a_dumped_run_is_scored_again_per_half(
    part: str, clean: str, dropped: str, capsys: pytest.CaptureFixture[str]
) -> None:
    report(_run(), part)
    out = capsys.readouterr().out
    assert re.search(clean, _result(out, "clean"))
    assert dropped in _result(out, "dropped_sentence")
    assert "qa_share_of_synthesis=0.10" in _result(out, "cpu")


class _Engine:
    """Each sentence a constant tone of its own level, 0.1 s per word times the length scale."""

    sample_rate = 8000

    def __init__(self) -> None:
        self.levels: dict[str, float] = {}

    def synthesize(self, sentences: list[str], options: Any) -> list[Any]:
        from speech.types import AudioChunk

        pieces = []
        for sentence in sentences:
            level = self.levels.setdefault(sentence, 0.01 * (len(self.levels) + 1))
            length = int(len(sentence.split()) * 800 * (options.length_scale or 1.0))
            pieces.append(AudioChunk(np.full(length, level, dtype=np.float32), self.sample_rate, sentence))
        return pieces


class _SlowEars:
    """Hears the sentences whose tones it finds, but only audio rendered 10% slower or more
    (``scheduler.qa.REDO_SLOWER``): at the first rendering's pace it hears nothing."""

    def __init__(self, engine: _Engine) -> None:
        self.engine = engine

    def model_name(self, lang: str) -> str:
        return "base"

    def transcribe(self, samples: np.ndarray, sample_rate: int, lang: str) -> str:
        heard = []
        for sentence, level in self.engine.levels.items():
            found = int(np.count_nonzero(np.isclose(samples, level)))
            if found and found >= 1.05 * len(sentence.split()) * 800:
                heard.append(sentence)
        return " ".join(heard)

    def second_opinion(self, samples: np.ndarray, sample_rate: int, lang: str) -> None:
        return None


def test_the_full_path_renders_a_failed_chunk_again_and_keeps_a_planted_drop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every first look fails (the recogniser hears nothing at the first pace): the first-look
    figures call every clean chunk a false alarm; after the product's path (``listen``, then the
    chunk rendered again slower) none is, and every dropped sentence is still caught, because the
    second rendering keeps the drop."""
    import bench.qa as qa

    (tmp_path / "qa_sentences_es.txt").write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    monkeypatch.setattr(qa, "DATA", tmp_path)
    args = argparse.Namespace(lang="es", speaker="lucia", model="coda", speeds="1.0", chunk=2, threads=1, limit=0,
                              garble_every=4)
    engine = _Engine()
    run = json.loads(json.dumps(qa.measure(args, engine=engine, recognizer=_SlowEars(engine))))  # as --dump writes it
    report(run)
    out = capsys.readouterr().out
    assert "false_alarms=2" in _result(out, "clean")  # the first look
    assert "caught=4/4" in _result(out, "dropped_sentence")
    full = _result(out, "full_path clean")
    assert "chunks=2 rendered_again=2 false_alarms=0" in full and "unknown=0" in full
    assert "caught=4/4 first_look=4 unknown=0 by_count=4" in _result(out, "full_path dropped_sentence")
    # three words garbled are under the rules (that rule is off), but the garble is said again
    assert "garbled_3_words caught=0/1 first_look=1" in _result(out, "full_path dropped_sentence")
    (garbled,) = [trial for trial in run["trials"] if trial["label"] == "garbled"]
    assert garble(SENTENCES[2], lang="es") in garbled["looks"][1]["heard"]
    assert run["cpu"]["redo_synth_audio"] > 0


def test_a_dump_from_before_the_full_path_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    report(_run())
    assert "RESULT full_path not recorded" in capsys.readouterr().out
