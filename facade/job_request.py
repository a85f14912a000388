"""The ``/v1/jobs`` body's own options, as a pydantic model: one declaration types, checks and
documents them (``/openapi.json``'s job schema is generated from ``JobRequest``).

The fields a job shares with streaming synthesis (``text``, ``speaker``, ``modelId``, ``lang``,
``samplingRate``, ``timeScaleFactor``, ``speedAlpha``, ``textType``, ``lexicons``,
``noTextNormalization``) are the vendor API contract's and keep its hand parser
(``facade.validation.parse_request``): the contract fixes the order of its checks and each
message. ``chapters`` and ``cast`` are checked by the book domain's rules (``books.chapters``,
``books.casting``), whose errors the one table answers; here they are only documented.

A failed check answers 400 with the field's sentence from ``MESSAGES`` (what the field must be),
never pydantic's own dump; a field without a sentence is ``<field>: <what is wrong>``.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, Self

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictBytes,
    StrictStr,
    ValidationError,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from facade import errors as e
from scheduler import intake
from speech.text import MAX_PAUSE_MS

LOUDNESS_RANGE: Final = (-30.0, -12.0)  # LUFS: quiet broadcast to loud podcast; ACX's RMS band is inside
FORMAT_NAMES: Final = tuple(intake.FORMATS)
DELIVERY_NAMES: Final = tuple(intake.DELIVERY_MASTERS)
#: A rule that spans fields (``delivery`` needs ``title`` and ``author``): its message is the answer.
RULE: Final = "job_rule"

#: What a field must be, by its name in the body: the whole 400 message when its check fails.
MESSAGES: Final[dict[str, str]] = {
    "format": f"format must be one of: {', '.join(FORMAT_NAMES)}",
    "webhookUrl": "webhookUrl must be a string",
    "title": "title must be a string",
    "author": "author must be a string",
    "skipFrontMatter": "skipFrontMatter must be a boolean",
    "qa": "qa must be a boolean",
    "pauses": f"pauses must be an object of milliseconds (0-{MAX_PAUSE_MS}) for sentence, paragraph and chapter",
    "loudness": f"loudness must be a number of LUFS from {LOUDNESS_RANGE[0]:g} to {LOUDNESS_RANGE[1]:g}",
    "loudnessScope": "loudnessScope must be book or chapter",
    "delivery": f"delivery must be one of: {', '.join(DELIVERY_NAMES)}",
    "cover": "cover must be an image file in a multipart form (field cover)",
}


def _not_bool(value: object) -> object:
    """JSON's ``true`` is not a number of LUFS or milliseconds (pydantic's lax float takes it)."""
    if isinstance(value, bool):
        raise ValueError("a boolean is not a number")
    return value


Milliseconds = Annotated[float, Field(ge=0, le=MAX_PAUSE_MS, allow_inf_nan=False), BeforeValidator(_not_bool)]
Lufs = Annotated[
    float, Field(ge=LOUDNESS_RANGE[0], le=LOUDNESS_RANGE[1], allow_inf_nan=False), BeforeValidator(_not_bool),
]


class JobRequest(BaseModel):
    """A job's options beyond the synthesis fields. Multipart forms send every field as a string:
    ``loudness`` is read from one, booleans and JSON fields are decoded by ``facade.job_form``."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    format: Literal["mp3", "wav", "opus", "flac", "m4b"] = Field(
        "wav", description="the result's container and codec"
    )
    webhook_url: StrictStr | None = Field(
        None, alias="webhookUrl", description="POSTed (signed) when the job ends", json_schema_extra={"format": "uri"},
    )
    title: StrictStr | None = Field(None, description="the book's title (tags, m4b, credits)")
    author: StrictStr | None = Field(None, description="the book's author (tags, m4b, credits)")
    skip_front_matter: StrictBool = Field(
        False, alias="skipFrontMatter", description="drop a Project Gutenberg header, title page and contents",
    )
    qa: StrictBool | None = Field(
        None, description="check every chunk by speech recognition before assembly; default: the account's",
    )
    pauses: dict[Literal["sentence", "paragraph", "chapter"], Milliseconds] | None = Field(
        None, description="milliseconds of silence after each sentence, paragraph and chapter",
    )
    loudness: Lufs | None = Field(
        None, description="integrated loudness of the book, LUFS (true peak stays under -3 dBFS); default -19",
    )
    loudness_scope: Literal["book", "chapter"] | None = Field(
        None, alias="loudnessScope", description="book: one gain; chapter: each chapter at the target",
    )
    delivery: Literal["acx"] | None = Field(
        None, description="a retailer's package: a zip of chapter files and a compliance report",
    )
    chapters: Any = Field(None, description="[{title, start}] into text, or [{title, text}] instead of text",
                          json_schema_extra={"type": "array", "items": {"type": "object"}})
    cast: Any = Field(None, description="{narrator, characters: {name: {voice, aliases}}, dialogue}",
                      json_schema_extra={"type": "object"})
    cover: SkipJsonSchema[StrictBytes | None] = None  # a multipart file part only

    @model_validator(mode="after")
    def _credits_are_named(self) -> Self:
        if self.delivery is not None and not ((self.title or "").strip() and (self.author or "").strip()):
            raise PydanticCustomError(RULE, f"delivery {self.delivery} needs a title and an author (its credits say them)")
        return self

    @property
    def given_pauses(self) -> dict[str, int] | None:
        """Whole milliseconds; ``None`` for none given (an empty object asks for nothing)."""
        return {name: int(ms) for name, ms in self.pauses.items()} or None if self.pauses else None

    @property
    def scope(self) -> str | None:
        """``None`` for the default (the whole book), so earlier jobs' request hashes still match."""
        return "chapter" if self.loudness_scope == "chapter" else None


def parse_job_request(payload: dict[str, Any]) -> JobRequest:
    """The body's job options, or the 400 that names the first field at fault and what it must be."""
    try:
        return JobRequest.model_validate(payload)
    except ValidationError as exc:
        raise e.ApiError(400, validation_message(exc)) from None


def validation_message(exc: ValidationError) -> str:
    first = exc.errors(include_url=False, include_context=False, include_input=False)[0]
    if first["type"] == RULE:
        return str(first["msg"])
    field = str(first["loc"][0]) if first["loc"] else "request"
    return MESSAGES.get(field, f"{field}: {first['msg']}")


def schema() -> dict[str, Any]:
    """``JobRequest``'s JSON schema with the body's own names (for ``facade.openapi``)."""
    return JobRequest.model_json_schema(by_alias=True)
