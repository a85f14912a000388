"""Speech recognition for the QA check of a book: Whisper models from registry packages, and the
scores that say whether a rendered chunk said its text (``scheduler.qa`` runs the check)."""

from speech.asr.listening import Hearing, Recognizer, listen, sentence_spans
from speech.asr.recognizer import WhisperRecognizer
from speech.asr.scoring import Score, Threshold, normalise, score, threshold

__all__ = [
    "Hearing", "Recognizer", "Score", "Threshold", "WhisperRecognizer", "listen", "normalise", "score", "sentence_spans",
    "threshold",
]
