"""``bench.qa --replay``: a dumped run is scored again under the current rules, and ``--part``
keeps only the chunks of one half of the sentences (tune on one half, check on the other)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bench.qa import report

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
