"""The vendor's speed controls are the facade's rule (``facade.vendor_controls``): ``mistv2``'s
``speedAlpha`` is a length factor, every other model's a rate, and the core sees only rates."""

from __future__ import annotations

import inspect

import pytest

import speech.synthesizer
from facade.deps import JobRules, Services, Speech
from facade.request_resolution import resolve
from facade.routes.jobs import _spec
from facade.validation import parse_request
from facade.vendor_controls import controls_for, speed_rate, steps_at_rate
from speech.stream_steps import StreamStep
from speech.voices import Catalog


@pytest.fixture(scope="module")
def services() -> Services:
    return Services(speech=Speech(catalog=Catalog.load(), synthesizer=None),  # type: ignore[arg-type]
                    jobs=JobRules(max_job_chars=100_000))


def test_mistv2_s_speed_is_a_length_factor_and_every_other_model_s_a_rate() -> None:
    assert speed_rate("mistv2", 0.5) == 2.0 and speed_rate("mistv3", 0.5) == 0.5 and speed_rate("coda", 2.0) == 2.0
    assert speed_rate("mistv2", None) is None
    assert controls_for("mistv2", time_scale=1.0, speed_alpha=0.5).length_scale() == pytest.approx(0.5)
    assert controls_for("mistv3", time_scale=1.5, speed_alpha=0.5).length_scale() == pytest.approx(3.0)
    steps = [StreamStep(text="a"), StreamStep(text="b", speed=4.0)]
    assert [s.speed for s in steps_at_rate("mistv2", steps)] == [None, 0.25]
    assert steps_at_rate("mistv3", steps) is steps


@pytest.mark.parametrize(("model", "length"), [("mistv2", 0.5), ("mistv3", 2.0), ("coda", 2.0)])
def test_a_planned_stream_and_its_inline_speeds_are_rates(services: Services, model: str, length: float) -> None:
    req = parse_request({"text": "Normal, [then this].", "speaker": "joe", "modelId": model, "speedAlpha": 0.5,
                         "inlineSpeedAlpha": "0.5"})
    resolved = resolve(services, req, None, endpoint="tts")
    assert resolved.controls.length_scale() == pytest.approx(length)
    assert resolved.controls.route == model  # the model services are routed by it
    inline = [step.speed for step in resolved.units if step.speed is not None]
    assert inline and all(speed == pytest.approx(1 / length) for speed in inline)


def test_a_job_stores_the_rate(services: Services) -> None:
    """The job's steps (scheduler) read a rate: no model name decides their speed."""
    for model, rate in (("mistv2", 2.0), ("mistv3", 0.5)):
        spec = _spec(services, {"text": "Hi.", "speaker": "joe", "modelId": model, "speedAlpha": 0.5})
        assert spec.speed_alpha == pytest.approx(rate)


def test_the_core_knows_no_model() -> None:
    source = inspect.getsource(speech.synthesizer)
    assert "mistv" not in source and "model_id" not in source
