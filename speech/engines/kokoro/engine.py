"""``KokoroEngine``: one Kokoro voice (a style pack) over the process-wide Kokoro model.

Sentences become Kokoro phonemes (``phonemes.py``), then token ids. An utterance holds at most
510 phoneme tokens; a longer sentence is cut between words into pieces whose audio is joined.
Pieces are sorted by length and cut into batches by a token budget (padded ids times items);
each item carries its own style (``pack[n_tokens - 1]``) and speed, and its audio is what it
gets alone (see ``layers.py``). Word timings come from the predicted durations (25 ms a frame).

The 82M weights are loaded once per device and precision and shared by every voice, so a
lineup of thirty voices costs thirty 510x256 style packs, not thirty models.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from speech.engines.base import engine_errors
from speech.engines.kokoro.model import SAMPLES_PER_FRAME, KokoroModel
from speech.engines.kokoro.phonemes import (
    MAX_TOKENS,
    KokoroPhonemizer,
    char_id_positions,
    char_owners,
    token_ids,
)
from speech.engines.kokoro.vocab import VOCAB
from speech.engines.kokoro.weights import load_state_dict, model_file
from speech.engines.threads import claim_torch_threads, on_torch_thread
from speech.engines.timing import word_timings
from speech.errors import EngineError
from speech.types import AudioChunk, SynthesisOptions, WordTiming

SAMPLE_RATE = 24000
SECONDS_PER_FRAME = SAMPLES_PER_FRAME / SAMPLE_RATE
_DTYPES = {"float32": None, "bfloat16": torch.bfloat16, "float16": torch.float16, "int8": None}
DTYPES = (*_DTYPES, "auto")
# Padded tokens and items per forward pass. On CPU an item's work is already large and padding
# is pure waste: float32 batches of four ran at RTF 1.14 against 0.69 one by one (bench.engine
# --engine kokoro --quick --dtype float32, 2 vCPUs), so CPU passes hold one item. On GPU large
# batches keep the device busy.
CPU_TOKEN_BUDGET, CPU_MAX_BATCH = 1024, 1
# On an H100, 64 sentences in one call ran at 408x realtime (float32) and 605x (bfloat16) with
# every sentence in one pass, and at 505x and 851x in passes of at most 4096 padded ids: big
# passes pad every item to the longest one (bench.engine --engine kokoro --device cuda).
GPU_TOKEN_BUDGET, GPU_MAX_BATCH = 4096, 64
_STAND_IN = "\ua794"  # a letter with no decomposition, standing in for ç while aligning words


@dataclass(slots=True)
class _Piece:
    sentence: int
    text: str
    phonemes: str
    ids: list[int]
    positions: list[int]
    words: list[tuple[str, str]]


@dataclass(slots=True)
class _Shared:
    model: KokoroModel
    lock: threading.Lock
    dtype: str = "float32"  # resolved: what the decoder computes in


_models: dict[tuple[str, str, bool, bool, bool, bool], _Shared] = {}
_models_lock = threading.Lock()


def resolve_dtype(dtype: str, device: str) -> str:
    """``auto``: bfloat16 on a CPU that multiplies it natively (AMX, or AVX-512 BF16), float32
    elsewhere.

    Quality first (issue 24: within 0.05 DNSMOS P.808 and 0.10 OVRL of float32,
    ``python -m bench.quality``). The int8 path was the CPU default and sounded far worse (P.808
    3.40 against 4.25 for ``af_heart``): torch's dynamic int8 ``Conv1d`` requantized its output
    at its input's scale. bfloat16, with the instance norms' statistics, the harmonic source,
    the STFTs and ``conv_post`` in float32, scores within 0.03 P.808 of float32 and runs at
    0.34x onnxruntime's time where AMX multiplies bfloat16 (an Intel Xeon; ``time_major.py``) and 0.68x where
    AVX-512 BF16's dot products do (an AMD Zen 5, whose float32 takes 1.3-1.4x; the instance
    norms as one ``batch_norm``, ``kernels.adain``); on an AVX2 CPU oneDNN converts bfloat16 to
    float32 around each product, and float32 stays. GPUs keep float32:
    bfloat16 is not batch-invariant (a padded batch moves an item by 15-20 dB waveform SNR),
    which ``test_engine.py`` asks of the GPU's large batches."""
    if dtype not in DTYPES:
        raise EngineError(f"dtype must be one of {sorted(DTYPES)}, not {dtype!r}")
    if dtype == "auto":
        cpu = torch.device(device).type == "cpu"
        native = torch.cpu._is_amx_tile_supported() or torch.cpu._is_avx512_bf16_supported()
        return "bfloat16" if cpu and native else "float32"
    if dtype == "int8" and torch.device(device).type != "cpu":
        raise EngineError("int8 Kokoro runs on CPU only; use float32 or bfloat16 on GPUs")
    return dtype


def resolve_compile(compile_kernels: bool | None, device: str) -> bool:
    """``None`` (auto): fused kernels on GPUs, eager on the CPU (see ``kernels.py``)."""
    return torch.device(device).type == "cuda" if compile_kernels is None else compile_kernels


def resolve_spectral(spectral: bool | None, device: str, dtype: str) -> bool:
    """``None`` (auto): the generator's long convolutions in the frequency domain
    (``spectral_conv.py``) on a CPU, in float32 (0.76x the direct decoder's time on a Zen 4) and in
    bfloat16 on AVX-512 BF16 without AMX (0.73-0.75x on the Zen 4, the same 23 dB SNR to float32
    as the direct bfloat16 decoder). With AMX, oneDNN's bfloat16 convolutions run on the tile
    unit and the spectral form gains nothing (an Intel Xeon's RTF 0.296 against 0.276 direct, for
    800 MB more), so direct stays; where bfloat16 is emulated (AVX2) it is a choice made by hand.
    GPUs' cuDNN and int8 keep direct convolutions."""
    cpu = torch.device(device).type == "cpu"
    usable = cpu and dtype in ("float32", "bfloat16")
    if spectral and not usable:
        raise EngineError("Kokoro's spectral convolutions run in float32 or bfloat16 on a CPU")
    if spectral is not None:
        return spectral
    measured = torch.cpu._is_avx512_bf16_supported() and not torch.cpu._is_amx_tile_supported()
    return usable and (dtype == "float32" or measured)


def resolve_time_major(device: str, dtype: str, spectral: bool) -> bool:
    """The generator's residual blocks over time-major activations (``time_major.py``): for
    direct bfloat16 convolutions on a CPU with AMX, oneDNN's own layout there (the generator
    0.73x its channel-first time on an Intel Xeon). Elsewhere the spectral form or the GPU's
    kernels serve, and channel-first stays."""
    cpu = torch.device(device).type == "cpu"
    return cpu and dtype == "bfloat16" and not spectral and torch.cpu._is_amx_tile_supported()


def resolve_graphs(cuda_graphs: bool | None, device: str) -> bool:
    """``None`` (auto): small batches replay CUDA graphs on GPUs (``graphs.py``)."""
    cuda = torch.device(device).type == "cuda"
    if cuda_graphs and not cuda:
        raise EngineError("Kokoro's CUDA graphs need device 'cuda'")
    return cuda if cuda_graphs is None else cuda_graphs


def shared_model(
    device: str = "cpu",
    dtype: str = "float32",
    cache_dir: str | Path | None = None,
    compile_kernels: bool | None = None,
    cuda_graphs: bool | None = None,
    spectral: bool | None = None,
) -> _Shared:
    """The process's Kokoro model on ``device`` at ``dtype`` (loaded on first use)."""
    dtype = resolve_dtype(dtype, device)
    fused = resolve_compile(compile_kernels, device)
    spectral = resolve_spectral(spectral, device, dtype)
    target = torch.device(device)
    if target.type == "cuda" and not torch.cuda.is_available():
        raise EngineError("device 'cuda' requested but CUDA is not available")
    graphs = resolve_graphs(cuda_graphs, device)
    time_major = resolve_time_major(device, dtype, spectral)
    key = (str(target), dtype, fused, graphs, spectral, time_major)
    with _models_lock:
        shared = _models.get(key)
        if shared is None:

            def build() -> KokoroModel:
                with engine_errors("loading Kokoro"):
                    model = KokoroModel()
                    model.load_state_dict(load_state_dict(model_file(cache_dir), cache_dir), strict=True)
                    model.eval().to(target)
                    if spectral:  # from the float32 weights, then rounded once to the decoder's precision
                        model.use_spectral_convolutions()
                    model.set_decoder_dtype(_DTYPES[dtype])
                    if time_major:
                        model.use_time_major_blocks()
                    if dtype == "int8":
                        model.quantize_dynamic()
                    if fused:
                        model.compile_kernels()
                    if graphs:
                        model.record_graphs()
                    if fused and target.type == "cuda":  # on a CPU compiling is a bench's opt-in; it warms itself
                        model.warm_compiled_kernels()
                return model

            # on a CPU the loading's parallel work runs on the torch thread too: a thread of its
            # own that ran it would keep an OpenMP team of its own (speech/engines/threads.py)
            model = on_torch_thread(build) if target.type == "cpu" else build()
            shared = _Shared(model, threading.Lock(), dtype)
            _models[key] = shared
        return shared


def _as_pack(pack: np.ndarray) -> torch.Tensor:
    array = np.asarray(pack, dtype=np.float32)
    if array.ndim == 3 and array.shape[1] == 1:
        array = array[:, 0, :]
    if array.ndim != 2 or array.shape[1] != 256 or array.shape[0] < 1:
        raise EngineError(f"a Kokoro style pack is (rows, 256), not {tuple(np.shape(pack))}")
    return torch.from_numpy(np.array(array, dtype=np.float32, order="C", copy=True))


class KokoroEngine:
    """A Kokoro voice; calls may come from any thread (one forward pass at a time per model)."""

    sample_rate = SAMPLE_RATE

    def __init__(
        self,
        shared: _Shared,
        pack: np.ndarray,
        phonemizer: KokoroPhonemizer,
        *,
        token_budget: int,
        max_batch: int,
    ) -> None:
        self._shared = shared
        self.model = shared.model
        self.pack = _as_pack(pack)
        self.phonemizer = phonemizer
        self.token_budget = token_budget
        self.max_batch = max_batch

    @property
    def numerics(self) -> str:
        """The decoder's precision (``speech.engines.base.NumericsEngine``)."""
        return self._shared.dtype

    @classmethod
    def load(
        cls,
        pack: np.ndarray,
        *,
        lang: str,
        espeak_voice: str,
        device: str = "cpu",
        threads: int = 0,
        cache_dir: str | Path | None = None,
        dtype: str = "float32",
        token_budget: int | None = None,
        max_batch: int | None = None,
        compile_kernels: bool | None = None,
        cuda_graphs: bool | None = None,
        spectral: bool | None = None,
    ) -> KokoroEngine:
        """A voice speaking ``lang`` with style ``pack`` (``(rows, 256)`` or ``(rows, 1, 256)``).

        On CPU the voice claims torch's intra-op threads (``threads``, else every usable core;
        ``speech/engines/threads.py`` owns the rule). ``dtype``: "float32" (exact,
        batch-invariant), "bfloat16" (the decoder at that precision, for GPUs), "int8" (CPU:
        convolutions quantized on the fly, one item per pass, opt-in) or "auto" (float32; see
        ``resolve_dtype``). ``compile_kernels``: fuse the decoder's elementwise chains
        with ``torch.compile`` (default: on GPUs only). ``cuda_graphs``: small batches replay the
        decoder from recorded CUDA graphs (``graphs.py``; default: on GPUs only). ``spectral``: the
        generator's long convolutions in the frequency domain (``spectral_conv.py``; default: in
        float32 on a CPU)."""
        if threads > 0 or torch.device(device).type == "cpu":
            claim_torch_threads("intra_op", threads)
        dtype = resolve_dtype(dtype, device)
        shared = shared_model(device, dtype, cache_dir, compile_kernels, cuda_graphs, spectral)
        gpu = shared.model.device.type != "cpu"
        if dtype == "int8":
            max_batch = 1  # activation scales span the batch: one item per pass keeps items exact
        return cls(
            shared,
            pack,
            KokoroPhonemizer(lang, espeak_voice),
            token_budget=token_budget or (GPU_TOKEN_BUDGET if gpu else CPU_TOKEN_BUDGET),
            max_batch=max_batch or (GPU_MAX_BATCH if gpu else CPU_MAX_BATCH),
        )

    def phonemize(self, text: str) -> str:
        return self.phonemizer.phonemize(text)

    def synthesize(
        self, sentences: Sequence[str], options: SynthesisOptions | None = None
    ) -> list[AudioChunk]:
        """One chunk per sentence, in order; empty sentences give empty chunks."""
        pieces: list[_Piece] = []
        for index, text in enumerate(sentences):
            if not text.strip():
                continue
            phonemes = self.phonemizer.phonemize(text)
            if phonemes:
                pieces += self._pieces(index, text, phonemes, self.phonemizer.phonemize_words(text))
        return self._render(pieces, sentences, options)

    def synthesize_phonemes(
        self, phoneme_strings: Sequence[str], options: SynthesisOptions | None = None
    ) -> list[AudioChunk]:
        """Client IPA (``{...}``), mapped into Kokoro's symbols; one "word" per string."""
        pieces: list[_Piece] = []
        for index, raw in enumerate(phoneme_strings):
            phonemes = self.phonemizer.from_ipa(raw.strip()) if raw.strip() else ""
            if phonemes:
                pieces += self._pieces(index, raw, phonemes, [(raw.strip(), phonemes)])
        return self._render(pieces, phoneme_strings, options)

    # -- internals ------------------------------------------------------------------------

    def _pieces(self, index: int, text: str, phonemes: str, words: list[tuple[str, str]]) -> list[_Piece]:
        """Cut ``phonemes`` between words into utterances of at most ``MAX_TOKENS`` tokens; each
        piece keeps the words whose phonemes it holds."""
        ids, sources = token_ids(phonemes)
        if not ids:
            return []
        if len(ids) <= MAX_TOKENS:
            return [_Piece(index, text, phonemes, ids, char_id_positions(sources, len(phonemes)), words)]
        owners = char_owners(phonemes, [p for _, p in words])
        pieces = []
        start = 0
        while start < len(phonemes):
            count = 0
            limit = start
            for k in range(start, len(phonemes)):
                count += phonemes[k] in VOCAB
                if count > MAX_TOKENS:
                    break
                limit = k + 1
            end = limit
            if limit < len(phonemes):  # cut at the last space inside the limit, if there is one
                space = phonemes.rfind(" ", start, limit)
                end = space + 1 if space > start else limit
            part = phonemes[start:end].strip()
            part_ids, part_sources = token_ids(part)
            if part_ids:
                held = sorted({owners[k] for k in range(start, end) if owners[k] >= 0})
                pieces.append(
                    _Piece(
                        index,
                        text,
                        part,
                        part_ids,
                        char_id_positions(part_sources, len(part)),
                        [words[w] for w in held],
                    )
                )
            start = end
        return pieces

    def _batches(self, pieces: list[_Piece]) -> Iterator[list[_Piece]]:
        """Longest first; a batch grows while its padded size stays within the token budget."""
        ordered = sorted(pieces, key=lambda piece: len(piece.ids), reverse=True)
        batch: list[_Piece] = []
        for piece in ordered:
            longest = len(batch[0].ids) + 2 if batch else len(piece.ids) + 2
            if batch and (len(batch) >= self.max_batch or longest * (len(batch) + 1) > self.token_budget):
                yield batch
                batch = []
            batch.append(piece)
        if batch:
            yield batch

    def _speed(self, options: SynthesisOptions | None) -> float:
        length_scale = 1.0 if options is None or options.length_scale is None else options.length_scale
        if length_scale <= 0:
            raise EngineError("length_scale must be positive")
        return 1.0 / float(length_scale)

    def _render(
        self, pieces: list[_Piece], texts: Sequence[str], options: SynthesisOptions | None
    ) -> list[AudioChunk]:
        speed = self._speed(options)
        done: dict[int, tuple[np.ndarray, list[WordTiming]]] = {}
        for batch in self._batches(pieces):
            for piece, result in zip(batch, self._run(batch, speed), strict=True):
                done[id(piece)] = result
        chunks = []
        for index, text in enumerate(texts):
            parts = [done[id(piece)] for piece in pieces if piece.sentence == index]
            if not parts:
                chunks.append(AudioChunk(np.zeros(0, dtype=np.float32), SAMPLE_RATE, text))
                continue
            words: list[WordTiming] = []
            offset = 0.0
            for samples, timings in parts:
                words += [WordTiming(w.word, w.start + offset, w.end + offset) for w in timings]
                offset += len(samples) / SAMPLE_RATE
            audio = np.concatenate([samples for samples, _ in parts]).astype(np.float32, copy=False)
            chunks.append(AudioChunk(audio, SAMPLE_RATE, text, words))
        return chunks

    def _run(self, batch: list[_Piece], speed: float) -> list[tuple[np.ndarray, list[WordTiming]]]:
        rows = [min(len(piece.ids), self.pack.shape[0]) - 1 for piece in batch]
        styles = self.pack[rows]
        speeds = torch.full((len(batch),), speed, dtype=torch.float32)

        def forward() -> tuple[list[np.ndarray], list[np.ndarray]]:
            with self._shared.lock, engine_errors("Kokoro synthesis"), torch.inference_mode():
                out = self.model([[0, *piece.ids, 0] for piece in batch], styles, speeds)
                # one copy each to the host, then split there (a copy per item waits per item)
                audio = np.split(torch.cat(out.audio).cpu().numpy(), np.cumsum([len(a) for a in out.audio])[:-1])
                durations = np.split(
                    torch.cat(out.durations).float().cpu().numpy(), np.cumsum([len(d) for d in out.durations])[:-1]
                )
            return audio, durations

        # on a CPU every pass runs on the process's one torch thread, at the rule's thread count
        # (speech/engines/threads.py: two OpenMP teams on two cores ran every pass throttled)
        audio, durations = on_torch_thread(forward) if self.model.device.type == "cpu" else forward()
        results = []
        for piece, samples, frames in zip(batch, audio, durations, strict=True):
            words = [(w, p.replace("ç", _STAND_IN)) for w, p in piece.words]
            timings = word_timings(
                words,
                piece.phonemes.replace("ç", _STAND_IN),
                piece.positions,
                len(piece.ids) + 2,
                frames,
                SECONDS_PER_FRAME,
            )
            results.append((np.ascontiguousarray(samples, dtype=np.float32), timings))
        return results

    def close(self) -> None:
        """Nothing to stop: the shared model stays loaded for the other voices."""
