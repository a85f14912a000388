"""``/v1/jobs``' own options (``facade.job_request``): a bad field is a 400 that names it and says
what it must be, never pydantic's dump; good values come out typed."""

from __future__ import annotations

import typing
from typing import Any

import pytest

from facade import errors as e
from facade.job_request import FORMAT_NAMES, JobRequest, parse_job_request
from scheduler import intake


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"format": "aiff"}, "format must be one of: mp3, wav, opus, flac, m4b"),
        ({"format": 3}, "format must be one of: mp3, wav, opus, flac, m4b"),
        ({"webhookUrl": 5}, "webhookUrl must be a string"),
        ({"title": ["x"]}, "title must be a string"),
        ({"author": 1}, "author must be a string"),
        ({"skipFrontMatter": "yes"}, "skipFrontMatter must be a boolean"),
        ({"qa": 1}, "qa must be a boolean"),
        ({"pauses": {"chapter": -1}}, "pauses must be an object of milliseconds (0-10000) for sentence, paragraph and chapter"),
        ({"pauses": {"verse": 10}}, "pauses must be an object of milliseconds (0-10000) for sentence, paragraph and chapter"),
        ({"pauses": {"sentence": True}}, "pauses must be an object of milliseconds (0-10000) for sentence, paragraph and chapter"),
        ({"pauses": [1]}, "pauses must be an object of milliseconds (0-10000) for sentence, paragraph and chapter"),
        ({"loudness": -5}, "loudness must be a number of LUFS from -30 to -12"),
        ({"loudness": "loud"}, "loudness must be a number of LUFS from -30 to -12"),
        ({"loudness": True}, "loudness must be a number of LUFS from -30 to -12"),
        ({"loudness": "nan"}, "loudness must be a number of LUFS from -30 to -12"),
        ({"loudnessScope": "track"}, "loudnessScope must be book or chapter"),
        ({"delivery": "audible"}, "delivery must be one of: acx"),
        ({"delivery": "acx", "title": "T"}, "delivery acx needs a title and an author (its credits say them)"),
        ({"delivery": "acx", "title": " ", "author": "A"}, "delivery acx needs a title and an author (its credits say them)"),
        ({"cover": "not a file"}, "cover must be an image file in a multipart form (field cover)"),
    ],
)
def test_a_bad_field_is_a_400_naming_it(body: dict[str, Any], message: str) -> None:
    with pytest.raises(e.ApiError) as refused:
        parse_job_request({"text": "Hi.", "speaker": "joe", **body})
    assert (refused.value.status, refused.value.message) == (400, message)


def test_good_values_come_out_typed() -> None:
    job = parse_job_request({
        "text": "Hi.", "speaker": "joe", "format": "m4b", "loudness": "-20", "loudnessScope": "chapter",
        "pauses": {"sentence": 250.7, "chapter": 2000}, "qa": False, "delivery": "acx", "title": "T", "author": "A",
        "chapters": [{"title": "One", "start": 0}], "unknown": "ignored",
    })
    assert (job.format, job.loudness, job.scope, job.qa, job.delivery) == ("m4b", -20.0, "chapter", False, "acx")
    assert job.given_pauses == {"sentence": 250, "chapter": 2000}
    assert job.chapters == [{"title": "One", "start": 0}]
    defaults = parse_job_request({})
    assert (defaults.format, defaults.scope, defaults.given_pauses, defaults.qa, defaults.skip_front_matter) == (
        "wav", None, None, None, False)
    assert parse_job_request({"loudnessScope": "book", "pauses": {}}).scope is None
    assert parse_job_request({"pauses": {}}).given_pauses is None


def test_the_formats_are_the_intake_s() -> None:
    """``format``'s literal is spelt out for the schema; it must stay the formats intake encodes."""
    literal = typing.get_args(JobRequest.model_fields["format"].annotation)
    assert set(literal) == set(FORMAT_NAMES) == set(intake.FORMATS)
    delivery = typing.get_args(typing.get_args(JobRequest.model_fields["delivery"].annotation)[0])
    assert set(delivery) == set(intake.DELIVERY_MASTERS)
