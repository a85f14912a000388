"""Piper-format VITS voices run by our own PyTorch modules, or on CPU by the voice's own graph
on onnxruntime (see ``engine.VitsEngine``)."""

from speech.engines.vits.engine import VitsEngine

__all__ = ["VitsEngine"]
