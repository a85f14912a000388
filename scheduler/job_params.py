"""A job's options, typed both ways: written to the row's ``params`` and read back from it.

Why one object: the options are written once at intake and read by every step after it
(planning, synthesis, assembly, assembly ahead, the jobs API). Read back as ``params["..."]``
each reader guessed a key's spelling and its default on its own; here a key, its type and its
default are written once, and a new option is a field here, its parser in the facade and its
reader.

The stored form is the JSON object rows have always held (no migration): every field by its
name, except the optional ones left at their defaults, which are left out so that an earlier
job's request hash (``intake.JobSpec.request_hash``) still matches a repeat of its request.
The shapes of given chapters and of a cast are the book domain's (``books.options``), and
``JobParams`` is a ``books.options.BookOptions`` as it stands: the book's functions take it.
Keys the store keeps beside the options (``batches_dispatched``, ``expired``: the job's progress,
written by ``store.db.jobs``) are not options and are ignored when reading.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Final, NotRequired, Self, TypedDict, cast

from books.options import GivenChapter, StoredCast

#: Left out of the stored object while at their defaults (added after the first jobs were made).
_OMITTED_AT_DEFAULT: Final = ("skip_front_matter", "chapters", "pauses", "loudness_lufs", "loudness_scope", "lexicons", "delivery", "cast", "cover", "qa", "ssml")


class LexiconPin(TypedDict):
    """A lexicon a job uses, at the version it had when the job was submitted: a redelivery and a
    rerun read the book the same way, whatever was PUT since."""

    name: str
    version: NotRequired[int]  # absent only in a request not yet pinned (facade, before intake)


class CoverRef(TypedDict):
    """The m4b's cover, stored beside the text (``objects.cover_key``): its type and digest (the
    digest makes a different cover a different request)."""

    type: str | None
    sha256: str


@dataclass(frozen=True, slots=True, kw_only=True)
class JobParams:
    """Everything a job was asked for but its text (which lives in the object store)."""

    speaker: str
    model_id: str
    lang: str
    sampling_rate: int | None = None  # None: the assembly's rate (``assembly.DEFAULT_RATE``)
    time_scale: float = 1.0
    speed_alpha: float | None = None  # a rate, above 1.0 faster: the facade turns mistv2's length factor into one
    format: str = "wav"
    webhook_url: str | None = None
    title: str | None = None
    author: str | None = None
    normalize: bool = True
    skip_front_matter: bool = False  # Project Gutenberg header/footer, title page, contents
    chapters: list[GivenChapter] | None = None  # else detected
    pauses: dict[str, int] | None = None  # {"sentence", "paragraph", "chapter"}: milliseconds
    loudness_lufs: float | None = None  # integrated loudness of the book; None: assembly.TARGET_LUFS
    loudness_scope: str | None = None  # "chapter": each chapter at the target (scheduler.progressive_assembly); None: the book
    lexicons: list[LexiconPin] | None = None  # pinned at intake (scheduler.lexicons.for_request)
    delivery: str | None = None  # "acx": a retailer's package (books.acx) cut from a WAV master
    cast: StoredCast | None = None  # checked by books.casting.check_cast
    cover: CoverRef | None = None  # set at intake from JobSpec.cover_image
    qa: bool = False  # the speech-recognition check of every chunk before assembly (scheduler.qa)
    ssml: bool = False  # the text is a <speak> document, read with its markup (books.job_ssml)

    @property
    def chapter_scope(self) -> bool:
        """Each chapter is brought to the loudness target on its own (and assembled ahead)."""
        return self.loudness_scope == "chapter"

    def to_stored(self) -> dict[str, object]:
        """The row's ``params``: JSON types only, a copy (the caller may keep the object)."""
        stored = {f.name: copy.deepcopy(getattr(self, f.name)) for f in fields(JobParams)}
        for name in _OMITTED_AT_DEFAULT:
            if not stored[name]:
                del stored[name]
        return stored

    @classmethod
    def from_stored(cls, stored: Mapping[str, object]) -> Self:
        """The options a row holds. Missing optional keys take their defaults (older rows, and the
        defaults ``to_stored`` leaves out); a row without a speaker, model or language is not a
        job's and raises ``ValueError``."""
        names = {f.name for f in fields(JobParams)}
        given = {name: copy.deepcopy(value) for name, value in stored.items() if name in names}
        missing = {"speaker", "model_id", "lang"} - given.keys()
        if missing:
            raise ValueError(f"stored job params lack {', '.join(sorted(missing))}")
        if given.get("time_scale") is None:
            given.pop("time_scale", None)  # stored as null by nothing today; 1.0 is what it meant
        return cls(**cast(dict[str, Any], given))  # the row is ours: written by to_stored
