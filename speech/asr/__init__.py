"""Speech recognition for the QA check of a book: Whisper models from registry packages, and the
scores that say whether a rendered chunk said its text (``scheduler.qa`` runs the check)."""

from speech.asr.recognizer import WhisperRecognizer
from speech.asr.scoring import Score, Threshold, normalise, score, threshold

__all__ = ["Score", "Threshold", "WhisperRecognizer", "normalise", "score", "threshold"]
