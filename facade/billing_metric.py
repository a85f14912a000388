"""``lector_characters_billed_total``, on its own so that every process that bills can count
into it without the rest of the API's metrics: the API (streams, ``facade.usage``) and the
Celery workers (job chunks, wired by ``lector.worker``)."""

from __future__ import annotations

from prometheus_client import Counter

CHARACTERS_BILLED = Counter("lector_characters_billed_total", "Characters billed", ["model", "transport"])
