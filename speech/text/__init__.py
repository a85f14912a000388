"""Text front end: languages, normalisation, sentence segmentation and chunking, inline markup
and the out-of-vocabulary check. (Phonemes live in ``speech.text.phonemize``, imported on its
own so this package stays free of eSpeak.)"""

from speech.text.chunking import REQUEST_LIMIT, Chunk, chunk
from speech.text.languages import (
    LANGUAGES,
    SUPPORTED,
    Language,
    canonical,
    espeak_voice,
    is_supported,
    language,
    legacy,
)
from speech.text.markup import (
    MAX_PAUSE_MS,
    PauseSegment,
    PhonemeSegment,
    Segment,
    TextSegment,
    parse_inline_speeds,
    parse_markup,
    spoken_text,
)
from speech.text.normalize import normalize
from speech.text.oov import oov_words
from speech.text.segment import Span, paragraphs, split_sentences

__all__ = [
    "Chunk",
    "LANGUAGES",
    "Language",
    "MAX_PAUSE_MS",
    "PauseSegment",
    "PhonemeSegment",
    "REQUEST_LIMIT",
    "SUPPORTED",
    "Segment",
    "Span",
    "TextSegment",
    "canonical",
    "chunk",
    "espeak_voice",
    "is_supported",
    "language",
    "legacy",
    "normalize",
    "oov_words",
    "paragraphs",
    "parse_inline_speeds",
    "parse_markup",
    "split_sentences",
    "spoken_text",
]
