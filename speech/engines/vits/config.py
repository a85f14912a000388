"""A Piper voice's fixed data (``<voice>.onnx.json``) and the model shape of the "medium" quality.

The JSON carries what the voice needs at run time: sample rate, eSpeak voice, default
inference scales and the phoneme-to-id map. The network's hyper-parameters are not in it;
they are those of Piper's medium voices and are checked against the weights when loading.
"""

from __future__ import annotations

import json
import logging
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, cast

from speech.errors import EngineError

_LOG = logging.getLogger(__name__)

DEFAULT_NOISE_SCALE: Final = 0.667
DEFAULT_LENGTH_SCALE: Final = 1.0
DEFAULT_NOISE_W: Final = 0.8
BOS: Final = "^"
EOS: Final = "$"
PAD: Final = "_"


@dataclass(frozen=True, slots=True)
class ModelShape:
    """Hyper-parameters of Piper's medium VITS (the ONNX graph does not record them)."""

    n_vocab: int = 256
    hidden: int = 192
    filter: int = 768
    n_heads: int = 2
    n_layers: int = 6
    kernel_size: int = 3
    window_size: int = 4
    inter_channels: int = 192
    flow_kernel: int = 5
    flow_layers: int = 4
    flow_count: int = 4
    dp_flows: int = 4
    dp_bins: int = 10
    dp_tail_bound: float = 5.0
    upsample_initial: int = 256
    upsample_rates: tuple[int, ...] = (8, 8, 4)
    upsample_kernels: tuple[int, ...] = (16, 16, 8)
    resblock_kernels: tuple[int, ...] = (3, 5, 7)
    resblock_dilations: tuple[tuple[int, ...], ...] = ((1, 2), (2, 6), (3, 12))

    @property
    def hop_length(self) -> int:
        hop = 1
        for rate in self.upsample_rates:
            hop *= rate
        return hop


@dataclass(frozen=True, slots=True)
class VoiceConfig:
    """What ``<voice>.onnx.json`` says, read once at load."""

    sample_rate: int
    espeak_voice: str
    phoneme_id_map: Mapping[str, Sequence[int]]
    noise_scale: float = DEFAULT_NOISE_SCALE
    length_scale: float = DEFAULT_LENGTH_SCALE
    noise_w: float = DEFAULT_NOISE_W
    num_symbols: int = 256
    num_speakers: int = 1
    language: str = ""
    extra: Mapping[str, object] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> VoiceConfig:
        """A parsed Piper ``.onnx.json``; a file of another shape is an ``EngineError``."""
        raw = cast("Mapping[str, Any]", data)  # its shape is checked by reading it (the except below)
        try:
            inference = raw.get("inference", {})
            if raw.get("phoneme_type", "espeak") != "espeak":
                raise EngineError(f"unsupported phoneme_type {raw.get('phoneme_type')!r}")
            return cls(
                sample_rate=int(raw["audio"]["sample_rate"]),
                espeak_voice=str(raw["espeak"]["voice"]),
                phoneme_id_map={str(k): [int(i) for i in v] for k, v in raw["phoneme_id_map"].items()},
                noise_scale=float(inference.get("noise_scale", DEFAULT_NOISE_SCALE)),
                length_scale=float(inference.get("length_scale", DEFAULT_LENGTH_SCALE)),
                noise_w=float(inference.get("noise_w", DEFAULT_NOISE_W)),
                num_symbols=int(raw.get("num_symbols", 256)),
                num_speakers=int(raw.get("num_speakers", 1)),
                language=str(raw.get("language", {}).get("code", "")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise EngineError(f"voice config is not a Piper config: {exc!r}") from exc

    @classmethod
    def load(cls, path: str | Path) -> VoiceConfig:
        try:
            with open(path, encoding="utf-8") as handle:
                return cls.from_dict(json.load(handle))
        except (OSError, json.JSONDecodeError) as exc:
            raise EngineError(f"cannot read voice config {path}: {exc}") from exc

    def phoneme_ids(self, phonemes: str) -> tuple[list[int], list[int]]:
        """Piper's id sequence ``^ _ p1 _ p2 _ ... $`` and, per phoneme character, the index of its
        id in that sequence (-1 for a character the voice does not know, which is skipped)."""
        ids = list(self.phoneme_id_map[BOS]) + list(self.phoneme_id_map[PAD])
        pad = self.phoneme_id_map[PAD]
        positions = []
        for char in unicodedata.normalize("NFD", phonemes):
            mapped = self.phoneme_id_map.get(char)
            if mapped is None:
                _LOG.debug("phoneme %r is not in the voice's id map; skipped", char)
                positions.append(-1)
                continue
            positions.append(len(ids))
            ids.extend(mapped)
            ids.extend(pad)
        ids.extend(self.phoneme_id_map[EOS])
        return ids, positions
