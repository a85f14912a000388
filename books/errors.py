"""Errors of the book domain: a book that cannot be read, chaptered or cast as it was given. No
HTTP statuses: ``facade/errors.py`` maps them (each message is the client's).

    BookError
    ├── SourceError           an upload that is not the book it claims to be (a broken EPUB)
    ├── InvalidChapters       chapters given with a job that do not fit its text
    └── InvalidCast           a job's cast that is not narrator, characters and dialogue voices

Why a tree of its own: ``books`` sits below ``scheduler`` and may not import it, and these are
failures of the book as given, found before any job exists (the jobs API checks an upload, its
chapters and its cast before intake).
"""

from __future__ import annotations


class BookError(Exception):
    """Root of every error the book domain raises."""


class SourceError(BookError):
    """The upload cannot be read as the kind of file it claims to be (the message is the client's)."""


class InvalidChapters(BookError, ValueError):
    """A job's given chapters are malformed (the message is the client's). Also a ``ValueError``,
    as the argument checks it is."""


class InvalidCast(BookError):
    """A job's cast is malformed (the message is the client's)."""
