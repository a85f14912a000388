"""Errors of the job lifecycle. No HTTP statuses: ``facade/errors.py`` maps them.

    SchedulerError
    ├── InvalidWebhookUrl     not http(s), or a private/loopback target where not allowed
    ├── TooManyJobs           an account over its unfinished jobs
    ├── LexiconRefused        a lexicon name, size or count over the operator's limits
    └── SegmentNotFound       a live playlist's segment that is not listed (yet)

A book that cannot be read, chaptered or cast as given raises ``books.errors``' tree instead.
``job_error`` turns any failure of a job into one of ``JOB_ERRORS``' sentences for the customer.
"""

from __future__ import annotations

from speech import errors as speech_errors
from store import errors as store_errors


class SchedulerError(Exception):
    """Root of every error the scheduler raises."""


class InvalidWebhookUrl(SchedulerError):
    pass


class TooManyJobs(SchedulerError):
    """The account already has as many unfinished jobs as it may (``Settings.max_active_jobs``)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"too many unfinished jobs: an account may have at most {limit} queued or running")
        self.limit = limit


class LexiconRefused(SchedulerError):
    """A lexicon or a request's list of lexicons breaks a rule or a limit (the message is the client's)."""


class SegmentNotFound(SchedulerError):
    """A name that is no segment of the job's live playlist, or one not listed yet."""


# What a customer reads in a failed job's ``error`` (the API and the webhook): a short list of
# our own sentences. The exception itself, which may carry SQL, a path or a traceback's last
# line, goes to the worker's log only.
JOB_ERRORS: dict[type[Exception], str] = {
    speech_errors.VoiceNotFound: "the job's voice is not available",
    speech_errors.ModelNotFound: "the job's model is not available",
    speech_errors.LanguageNotSupported: "the job's language is not supported by its voice",
    speech_errors.TextError: "the job's text could not be read",
    speech_errors.PhonemizerError: "the job's text could not be phonemized",
    speech_errors.EngineError: "synthesis failed",
    speech_errors.AudioError: "audio encoding failed",
    speech_errors.RecognizerError: "the speech-recognition check could not run",
    store_errors.ObjectNotFound: "the job's stored text or audio is missing",
    store_errors.LexiconNotFound: "a lexicon the job uses was deleted",
}
JOB_ERROR_INTERNAL = "internal error"


def job_error(exc: BaseException) -> str:
    """The customer's sentence for a job that failed with ``exc``, most specific class first."""
    for cls in type(exc).__mro__:
        if cls in JOB_ERRORS:
            return JOB_ERRORS[cls]
    return JOB_ERROR_INTERNAL
