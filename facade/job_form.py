"""A ``/v1/jobs`` multipart submission read as the JSON body it stands for.

The book is the ``file`` part (``.txt``, ``.md``, ``.ssml`` or ``.epub``; ``books.sources``
reads it), an image in the ``cover`` part; every other option is a form field of the same name,
booleans as ``true``/``1``/``yes``/``on`` and ``chapters``, ``pauses`` and ``cast`` as JSON
strings. What the body then says is checked as a JSON body's is (``facade.job_request``).
"""

from __future__ import annotations

import json
from typing import Any, Final

from fastapi import Request
from starlette.datastructures import UploadFile
from starlette.requests import ClientDisconnect

from books import sources
from books.sources import MAX_COVER_BYTES
from facade import errors as e
from facade.deps import Services
from speech.audio.m4b import cover_type

MAX_UPLOAD_BYTES: Final = 64 * 1024 * 1024
BOOLEAN_FIELDS: Final = ("skipFrontMatter", "noTextNormalization", "qa")
JSON_FIELDS: Final = ("chapters", "pauses", "cast")


async def form_payload(request: Request, services: Services, *, max_chars: int) -> dict[str, Any]:
    """A multipart submission as the JSON body it stands for: the file's text (and, for an EPUB,
    its chapters, title and author unless given) plus the other fields. ``max_chars``: the
    longest book a job may be (the form's parts are capped by it)."""
    try:
        form = await request.form(max_files=2, max_fields=50, max_part_size=max(max_chars * 4, MAX_COVER_BYTES))
    except (e.ApiError, ClientDisconnect):  # the body cap, its deadline, a hang-up: answered as such
        raise
    except Exception as exc:  # noqa: BLE001 - python-multipart's errors carry no stable type
        raise e.ApiError(400, f"cannot read the form: {e.cut(exc, 120)}") from None
    payload: dict[str, Any] = {}
    upload: UploadFile | None = None
    for name, value in form.multi_items():
        if isinstance(value, UploadFile) and name == "cover":
            payload["cover"] = await _cover(value)
        elif isinstance(value, UploadFile):
            if name != "file":
                raise e.ApiError(400, "the book goes in the form field named file")
            upload = value
        elif name in BOOLEAN_FIELDS:
            payload[name] = value.strip().lower() in {"true", "1", "yes", "on"}
        elif name in JSON_FIELDS:
            try:
                payload[name] = json.loads(value)
            except ValueError:
                raise e.ApiError(400, f"{name} must be JSON") from None
        else:
            payload[name] = value
    if upload is None:
        if "text" not in payload:
            raise e.ApiError(400, "file is required (a .txt, .md or .epub book)")
        return payload
    if "text" in payload:
        raise e.ApiError(400, "send either text or file, not both")
    data = await upload.read(MAX_UPLOAD_BYTES + 1)
    await form.close()
    if len(data) > MAX_UPLOAD_BYTES:
        raise e.ApiError(413, f"file is too large (at most {MAX_UPLOAD_BYTES // (1024 * 1024)} MiB)")
    book = await services.offload(  # a SourceError (not the book it claims to be) is the table's 400
        sources.read_upload, upload.filename or "", upload.content_type, data,
        skip_front_matter=bool(payload.get("skipFrontMatter")),
    )
    payload["text"] = book.text
    if book.chapters and "chapters" not in payload:
        payload["chapters"] = book.chapters
    if book.cover and "cover" not in payload:  # an image uploaded with the job wins over the EPUB's
        payload["cover"] = book.cover
    for name, found in (("title", book.title), ("author", book.author)):
        if found and not payload.get(name):
            payload[name] = found
    return payload


async def _cover(upload: UploadFile) -> bytes:
    """An image uploaded with the job for the m4b's cover: JPEG or PNG by its bytes."""
    data = await upload.read(MAX_COVER_BYTES + 1)
    if len(data) > MAX_COVER_BYTES:
        raise e.ApiError(413, f"cover is too large (at most {MAX_COVER_BYTES // (1024 * 1024)} MiB)")
    if cover_type(data) is None:
        raise e.ApiError(400, "cover must be a JPEG or PNG image")
    return data
