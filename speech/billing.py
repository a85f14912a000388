"""What a billed character is: the one rule every transport and the batch engine bill by.

The vendor API contract bills "by characters synthesized". lector counts the characters of the text as the
customer wrote it (not our normalised expansion: "$5" is two characters, not "five dollars"),
with one exception that keeps the count independent of layout: **whitespace and control
characters are separators, and a run of them counts as one character between words and as
nothing at the start or end of the text.** So "Hello,\\n\\n  world." bills 13, the same as
"Hello, world.", whether it is streamed over HTTP, a WebSocket or the OpenAI route, or read as a
book job whose paragraphs become separate chunks.

A job bills chunk by chunk (a chunk is billed once, when its audio is stored). Its chunks are
the text cut at whitespace, so each chunk after the first also carries the one character of
the break before it (``continues=True``); the chunks of a text then sum to the whole text's
count. (The single exception, a "word" longer than a chunk that must be cut mid-word, would
count one character more; no real text has one.)
"""

from __future__ import annotations

import re
from typing import Final

# Unicode whitespace and the C0/C1 control characters (what job intake blanks to spaces).
_SEPARATORS: Final = re.compile(r"[\s\x00-\x1f\x7f-\x9f]+")


def billed_characters(text: str, *, continues: bool = False) -> int:
    """Billed characters of ``text``; ``continues``: it is a later piece of a longer text cut at
    whitespace (a job's chunk after its first), and carries the break before it."""
    count = len(_SEPARATORS.sub(" ", text).strip(" "))
    return count + 1 if continues and count else count
