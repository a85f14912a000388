"""The vendor's speed controls, mapped onto the core's: the one place that knows what a model's
``speedAlpha`` means.

The vendor API contract gives ``speedAlpha`` (and each inline ``[word]`` speed) two senses: on
``mistv2`` it is a length factor (below 1.0 is faster), on every other model a rate (above 1.0
is faster). The core (``speech.synthesizer.Controls``) knows only rates, and no model names: the
facade turns the vendor's number into a rate when it plans a stream and when it takes a job
(``JobParams.speed_alpha`` is stored as the rate), so neither the synthesizer nor the job's
steps carry a vendor rule.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from speech.stream_steps import StreamStep
from speech.synthesizer import Controls

#: Models whose ``speedAlpha`` is a length factor (the vendor API contract).
LENGTH_FACTOR_MODELS: Final = frozenset({"mistv2"})


def speed_rate(model_id: str, speed_alpha: float | None) -> float | None:
    """The rate (above 1.0 faster) the vendor's ``speedAlpha`` asks of ``model_id``."""
    if not speed_alpha:
        return None
    return 1.0 / speed_alpha if model_id in LENGTH_FACTOR_MODELS else speed_alpha


def controls_for(model_id: str, *, time_scale: float, speed_alpha: float | None) -> Controls:
    """The core's controls for a request to ``model_id``; ``route`` is the model, by which the
    facade's model routes pick a model service (``facade.model_routes``)."""
    return Controls(time_scale=time_scale, speed=speed_rate(model_id, speed_alpha), route=model_id)


def steps_at_rate(model_id: str, steps: list[StreamStep]) -> list[StreamStep]:
    """A stream's steps with their inline speeds (vendor numbers, ``[word]`` markup) as rates."""
    if model_id not in LENGTH_FACTOR_MODELS:
        return steps
    return [replace(step, speed=speed_rate(model_id, step.speed)) if step.speed else step for step in steps]
