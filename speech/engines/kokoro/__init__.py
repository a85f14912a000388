"""Kokoro-82M, lector's flagship neural engine: every API language, batched in PyTorch."""

from speech.engines.kokoro.engine import KokoroEngine

__all__ = ["KokoroEngine"]
