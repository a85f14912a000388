"""The ``word_timestamps`` object every streaming transport sends (``/ws3``, ``/ws2``, SSE).

``words``, ``start`` and ``end`` are the vendor API contract's, unchanged. ``textOffset`` and
``textLength`` are lector's own, beside them, which the vendor's clients ignore: where each word
was written in the text the customer submitted, before normalisation
(``submitted[textOffset:textOffset + textLength]``; ``null`` for an SSML mark). Offsets count
Unicode code points (docs/api.md). On a socket, the submitted text is everything its text
messages carried, in order: runs and flushes do not restart the count.
"""

from __future__ import annotations

from collections.abc import Sequence

from speech.types import WordTiming


def word_timestamps(words: Sequence[WordTiming], at: int = 0) -> dict[str, list[object]]:
    """``at``: where the synthesized text starts in the text the offsets count in (a socket's
    run within everything the socket was sent)."""
    return {
        "words": [w.word for w in words],
        "start": [round(w.start, 3) for w in words],
        "end": [round(w.end, 3) for w in words],
        "textOffset": [None if w.source is None else at + w.source[0] for w in words],
        "textLength": [None if w.source is None else w.source[1] - w.source[0] for w in words],
    }
