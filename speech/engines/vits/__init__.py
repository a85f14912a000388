"""Piper-format VITS voices run by our own PyTorch modules (see ``engine.VitsEngine``)."""

from speech.engines.vits.engine import VitsEngine

__all__ = ["VitsEngine"]
