"""Reading what a streaming endpoint sent as WAV."""

from __future__ import annotations


def fix_streaming_sizes(data: bytes) -> bytes:
    """A streamed WAV carries 0xFFFFFFFF sizes; Python's wave module wants the real ones."""
    riff = bytearray(data)
    riff[4:8] = (len(riff) - 8).to_bytes(4, "little")
    index = riff.find(b"data")
    riff[index + 4 : index + 8] = (len(riff) - index - 8).to_bytes(4, "little")
    return bytes(riff)
