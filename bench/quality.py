"""How the voices sound: DNSMOS and Whisper CER per voice, engine, precision and runtime, with
onnxruntime on the shipped Kokoro graph as the reference.

    PYTHONPATH=$PWD .venv/bin/python -m bench.quality [--quick] [--voices ivy,owen,joe]
        [--dtypes float32,int8] [--kernels eager,compiled] [--languages en,fr] [--cer-sentences N]
        [--no-cer] [--threads N]

Speed and Whisper's character error rate were measured for years while nobody listened: the
CPU int8 path was the default and sounded worse than the formant voice it replaced. This bench
puts a naturalness figure beside every change to an engine, precision, kernel or runtime.

Per row: DNSMOS P.808 MOS and P.835 SIG, BAK, OVRL (``speechmos``: Microsoft's DNSMOS models as
ONNX in the wheel, a predictor trained on noisy speech, good for comparing runs of the same
text) over the language's fixed paragraph (``tests/data/quality_paragraphs.toml``), at 16 kHz,
peak-normalised (the graph's output carries a 1.5x gain; loudness is not what is scored); the
energy above 8 kHz relative to 100 Hz-4 kHz in dB (noise that int8 adds shows there first);
Whisper base's CER on the development sentences (``tests/data/intelligibility_dev.toml``, the
``bench.intelligibility`` path); and the paragraph's RTF (a shared machine's clock: the
``bench.engine`` ratios are the speed figures). Kokoro voices are spoken once per precision of
``--dtypes`` and once by onnxruntime on the shipped int8 graph with the same pack and phonemes
(runtime ``onnxruntime``); VITS voices by their ``auto`` runtime in float32, the paragraph four times
(``VITS_DRAWS``: their graph draws fresh noise on every call).

``--quick`` (a few minutes): English and French, the four English ``coda`` Kokoro voices and the
first French one, three CER sentences. The end: one ``RESULT`` line per row, then a ``DRIFT``
line per Kokoro voice and precision against float32 (the limits of issue 24: 0.05 P.808, 0.10
OVRL).
"""

from __future__ import annotations

import argparse
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.rounds import kokoro_reference

REPO = Path(__file__).resolve().parents[1]
PARAGRAPHS = REPO / "tests" / "data" / "quality_paragraphs.toml"
DEV_SENTENCES = REPO / "tests" / "data" / "intelligibility_dev.toml"
QUICK_VOICES = ("ivy", "nora", "owen", "miles", "elodie")
QUICK_LANGUAGES = ("en", "fr")
LIMITS = {"p808": 0.05, "ovrl": 0.10}  # how far a precision may fall below float32 (issue 24)
GAP_SECONDS = 0.25  # silence between sentences, as bench.intelligibility joins them
DNSMOS_RATE = 16000


@dataclass(frozen=True, slots=True)
class Scores:
    p808: float
    sig: float
    bak: float
    ovrl: float
    high_band_db: float
    """Energy above 8 kHz relative to 100 Hz-4 kHz (dB); ``nan`` at rates of 16 kHz or less."""


@dataclass(frozen=True, slots=True)
class Row:
    voice: str
    lang: str
    engine: str
    precision: str
    runtime: str
    scores: Scores
    cer: float | None
    rtf: float


def load_paragraphs(path: Path = PARAGRAPHS) -> dict[str, str]:
    """Language -> the fixed paragraph the bench speaks (one a language)."""
    with path.open("rb") as handle:
        rows = tomllib.load(handle)["paragraph"]
    paragraphs: dict[str, str] = {}
    for row in rows:
        if row["lang"] in paragraphs:
            raise ValueError(f"{path}: two paragraphs for {row['lang']}")
        paragraphs[row["lang"]] = " ".join(row["text"].split())
    return paragraphs


def peak_normalised(samples: np.ndarray, peak: float = 0.99) -> np.ndarray:
    """``samples`` scaled to ``peak``: DNSMOS wants [-1, 1], and level is not what it should judge."""
    audio = np.asarray(samples, dtype=np.float32)
    top = float(np.max(np.abs(audio))) if audio.size else 0.0
    if top == 0.0:
        raise ValueError("silent audio has no quality to score")
    return (audio * (peak / top)).astype(np.float32)


def high_band_db(samples: np.ndarray, rate: int) -> float:
    """Energy above 8 kHz over energy in 100 Hz-4 kHz, in dB: hiss and quantization noise that
    speech has little of."""
    if rate <= 16000:
        return float("nan")
    power = np.abs(np.fft.rfft(np.asarray(samples, dtype=np.float64))) ** 2
    freqs = np.fft.rfftfreq(len(samples), 1 / rate)
    high = power[freqs >= 8000].sum()
    speech = power[(freqs >= 100) & (freqs < 4000)].sum()
    return float(10 * np.log10(max(high, 1e-30) / max(speech, 1e-30)))


def dnsmos(samples: np.ndarray, rate: int) -> Scores:
    """DNSMOS of ``samples`` at ``rate``: resampled to 16 kHz, peak-normalised."""
    import speechmos.dnsmos

    from speech.audio.resample import resample

    audio = samples.astype(np.float32)
    if rate != DNSMOS_RATE:
        audio = resample(audio, rate, DNSMOS_RATE)
    result = speechmos.dnsmos.run(peak_normalised(audio), DNSMOS_RATE)
    return Scores(
        p808=float(result["p808_mos"]),
        sig=float(result["sig_mos"]),
        bak=float(result["bak_mos"]),
        ovrl=float(result["ovrl_mos"]),
        high_band_db=high_band_db(samples, rate),
    )


def joined(pieces: Sequence[np.ndarray], rate: int) -> np.ndarray:
    """Sentences end to end with a short silence between them, as a listener hears a paragraph."""
    gap = np.zeros(int(GAP_SECONDS * rate), dtype=np.float32)
    parts = [part for piece in pieces if piece.size for part in (piece.astype(np.float32), gap)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)


Speak = Callable[[str], np.ndarray]  # text -> samples at the speaker's rate


def character_error_rate(speak: Speak, rate: int, lang: str, limit: int | None) -> float | None:
    """Whisper base's CER over the language's development sentences, weighted by length (as
    ``bench.intelligibility`` and the intelligibility test score it); ``None`` without any."""
    from tests.support.asr_multilingual import cer, sentences, transcribe

    written = sentences(lang, source=DEV_SENTENCES)[:limit]
    if not written:
        return None
    edits = 0.0
    total = 0
    for sentence in written:
        heard = transcribe(speak(sentence.text), rate, lang)
        edits += cer(sentence.renderings, heard, lang) * len(sentence.text)
        total += len(sentence.text)
    return edits / total


def lector_speaker(engine: Any, lang: str) -> Speak:
    """The service's path: ``prepare`` then the engine, sentence by sentence in one call."""
    from speech.synthesizer import prepare

    def speak(text: str) -> np.ndarray:
        chunks = engine.synthesize(prepare(text, lang))
        return joined([chunk.samples for chunk in chunks], engine.sample_rate)

    return speak


def onnxruntime_speaker(session: Any, voice: Any, lang: str) -> Speak:
    """The reference: onnxruntime on the shipped int8 graph, one sentence a run (its batch is 1),
    with the voice's pack and the same Kokoro phonemes, sentences cut as lector cuts them."""
    from speech.engines.kokoro.phonemes import MAX_TOKENS, KokoroPhonemizer, token_ids
    from speech.engines.registry import kokoro_pack
    from speech.synthesizer import prepare

    pack = kokoro_pack(voice)
    pack = pack.reshape(pack.shape[0], -1)
    phonemizer = KokoroPhonemizer(lang, voice.espeak_voice)

    def speak(text: str) -> np.ndarray:
        pieces = []
        for sentence in prepare(text, lang):
            ids, _ = token_ids(phonemizer.phonemize(sentence))
            ids = ids[:MAX_TOKENS]
            if not ids:
                continue
            pieces.append(kokoro_reference(session, ids, pack))
        return joined(pieces, 24000)

    return speak


@dataclass(slots=True)
class Rendered:
    """What a voice said for one row: the paragraph, its RTF, and each CER sentence by its text."""

    paragraph: np.ndarray
    rate: int
    rtf: float
    sentences: dict[str, np.ndarray]


VITS_DRAWS = 4
"""Times a VITS voice speaks its paragraph, the renderings scored end to end. A Piper graph draws
fresh noise on every call (its ``RandomNormalLike`` nodes: the flow's prior and the durations),
so the same code spoke ``joe``'s paragraph at P.808 4.10-4.31 in three runs (Zen 5); DNSMOS
averages its 9 s windows, and four renderings halve that spread. A change to VITS's kernels is
compared with the noise fixed (``test_vits_onnxruntime.py``, the planar graph)."""


def render(
    speak: Speak, rate: int, paragraph: str, lang: str, cer_limit: int | None, with_cer: bool, draws: int = 1
) -> Rendered:
    speak(paragraph.split(" ", 3)[-1][:40])  # warm-up: first-call costs (phonemizer, kernels) are not speed
    start = time.perf_counter()
    audio = joined([speak(paragraph) for _ in range(draws)], rate) if draws > 1 else speak(paragraph)
    rtf = (time.perf_counter() - start) / (len(audio) / rate)
    written = dev_sentences(lang)[:cer_limit] if with_cer else []
    return Rendered(audio, rate, rtf, {text: speak(text) for text in written})


def dev_sentences(lang: str) -> list[str]:
    """The development sentences' texts, read without the recognizer (a GPU host has none)."""
    with DEV_SENTENCES.open("rb") as handle:
        return [" ".join(row["text"].split()) for row in tomllib.load(handle)["sentence"] if row["lang"] == lang]


def score(voice: str, lang: str, engine: str, precision: str, runtime: str, rendered: Rendered) -> Row:
    cer = character_error_rate(lambda text: rendered.sentences[text], rendered.rate, lang, len(rendered.sentences))
    return Row(voice, lang, engine, precision, runtime, dnsmos(rendered.paragraph, rendered.rate),
               cer if rendered.sentences else None, rendered.rtf)


class Recording:
    """Renders kept in one ``.npz`` under their row's key, for ``--record`` and ``--replay``: a GPU
    host has neither DNSMOS nor Whisper installed, so it renders and this machine scores."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    @staticmethod
    def key(voice: str, precision: str, runtime: str) -> str:
        return f"{voice}|{precision}|{runtime}"

    def put(self, key: str, rendered: Rendered) -> None:
        self.arrays[f"{key}|paragraph"] = rendered.paragraph
        self.arrays[f"{key}|meta"] = np.array([rendered.rate, rendered.rtf], dtype=np.float64)
        for index, (text, audio) in enumerate(rendered.sentences.items()):
            self.arrays[f"{key}|sentence|{index}"] = audio
            self.arrays[f"{key}|text|{index}"] = np.array(text)

    def save(self, path: Path) -> None:
        arrays: dict[str, Any] = self.arrays
        np.savez_compressed(path, **arrays)

    @classmethod
    def load(cls, path: Path) -> Recording:
        recording = cls()
        with np.load(path) as data:
            recording.arrays = {name: data[name] for name in data.files}
        return recording

    def keys(self) -> list[str]:
        return [name.removesuffix("|paragraph") for name in self.arrays if name.endswith("|paragraph")]

    def get(self, key: str) -> Rendered:
        rate, rtf = self.arrays[f"{key}|meta"]
        texts = sorted((n for n in self.arrays if n.startswith(f"{key}|text|")), key=lambda n: int(n.rsplit("|", 1)[1]))
        sentences = {str(self.arrays[n]): self.arrays[n.replace("|text|", "|sentence|")] for n in texts}
        return Rendered(self.arrays[f"{key}|paragraph"], int(rate), float(rtf), sentences)


def kokoro_engine(voice: Any, dtype: str, threads: int, kernels: str, device: str = "cpu") -> Any:
    """The catalog voice on Kokoro at ``dtype``; ``kernels`` "eager" is the service's path
    (``load_engine``: on a GPU its ``auto``, compiled chains and CUDA graphs; on a CPU in float32
    the spectral convolutions), "direct" that path with every convolution direct (the float32
    CPU path before ``speech/engines/kokoro/spectral_conv.py``), "compiled" the same
    voice with the decoder's chains through ``torch.compile`` and no graphs, "graphs" compiled
    and small batches replayed from CUDA graphs (``speech/engines/kokoro/graphs.py``)."""
    from speech.engines.registry import load_engine

    if kernels == "eager":
        return load_engine(voice, device=device, dtype=dtype, threads=threads)
    if kernels == "direct":
        return load_engine(voice, device=device, dtype=dtype, threads=threads, kokoro_convolutions="direct")
    if kernels not in ("compiled", "graphs"):
        raise SystemExit(f"--kernels: eager, direct, compiled or graphs, not {kernels!r}")
    from speech.engines.kokoro import KokoroEngine
    from speech.engines.registry import kokoro_pack

    return KokoroEngine.load(
        kokoro_pack(voice), lang=voice.lang, espeak_voice=voice.espeak_voice, device=device, threads=threads,
        dtype=dtype, compile_kernels=True, cuda_graphs=kernels == "graphs",
    )


def twice(speak: Speak) -> Speak:
    """Each text spoken twice, the second kept: a CUDA graph is recorded the second time a shape
    is seen, and its warm-up pass is the answer then, bit for bit what a replay gives
    (``tests/unit/speech/engines/kokoro/test_graphs.py``)."""

    def again(text: str) -> np.ndarray:
        speak(text)
        return speak(text)

    return again


HEADER = "| voice | lang | engine | precision | runtime | P.808 | SIG | BAK | OVRL | >8 kHz dB | CER | RTF |"


def table_line(row: Row) -> str:
    s = row.scores
    cer = "n/a" if row.cer is None else f"{row.cer:.3f}"
    return (
        f"| {row.voice} | {row.lang} | {row.engine} | {row.precision} | {row.runtime} | {s.p808:.2f} | "
        f"{s.sig:.2f} | {s.bak:.2f} | {s.ovrl:.2f} | {s.high_band_db:.1f} | {cer} | {row.rtf:.3f} |"
    )


def drift_lines(rows: Sequence[Row]) -> list[str]:
    """Each non-float32 Kokoro row against the same voice's float32 row on the same device (a
    precision is named ``bfloat16 cuda`` off the CPU), with the issue's limits."""
    lines = []

    def device(row: Row) -> str:
        return row.precision.rsplit(" ", 1)[1] if row.precision.endswith(" cuda") else "cpu"

    base = {(r.voice, device(r)): r.scores for r in rows
            if r.runtime == "torch" and r.precision.split(" ")[0] == "float32" and r.precision.split(" ")[-1] != "compiled"}
    for row in rows:
        reference = base.get((row.voice, device(row)))
        if reference is None or row.engine != "kokoro" or (row.runtime == "torch" and reference is row.scores):
            continue
        d_p808, d_ovrl = reference.p808 - row.scores.p808, reference.ovrl - row.scores.ovrl
        ok = d_p808 <= LIMITS["p808"] and d_ovrl <= LIMITS["ovrl"]
        lines.append(
            f"DRIFT voice={row.voice} runtime={row.runtime} precision={row.precision.replace(' ', '_')} "
            f"p808_below_float32={d_p808:+.2f} ovrl_below_float32={d_ovrl:+.2f} {'ok' if ok else 'OVER'}"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="English and French, five voices, three CER sentences")
    parser.add_argument("--voices", help="catalog speakers, comma-separated (default: every coda voice)")
    parser.add_argument("--model", default="coda", help="the catalog model the voices come from")
    parser.add_argument("--languages", help="only these languages, comma-separated")
    parser.add_argument("--dtypes", default="float32,int8", help="Kokoro precisions to score (auto included)")
    parser.add_argument("--cer-sentences", type=int, default=None, help="development sentences a voice (default all)")
    parser.add_argument("--no-cer", action="store_true", help="DNSMOS only")
    parser.add_argument("--no-reference", action="store_true", help="skip onnxruntime on the shipped graph")
    parser.add_argument("--threads", type=int, default=0, help="torch and onnxruntime threads (0: every core)")
    parser.add_argument(
        "--kernels", default="eager",
        help="Kokoro decoder kernels, comma-separated: eager (the service's path), direct (every convolution "
        "direct), compiled (torch.compile), graphs (compiled + CUDA graphs)"
    )
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="where the Kokoro voices run")
    parser.add_argument("--record", type=Path, help="render only, into this .npz (a GPU host without DNSMOS)")
    parser.add_argument("--replay", type=Path, action="append", default=[],
                        help="score the renders of a --record run instead of rendering (repeatable)")
    args = parser.parse_args(argv)

    from bench.machine import describe, usable_cores

    print(HEADER if args.record is None else describe(args.device, args.dtypes))  # noqa: T201
    rows: list[Row] = []
    recording = Recording() if args.record is not None else None

    def add(voice: Any, engine: str, precision: str, runtime: str, rendered: Rendered) -> None:
        if recording is not None:
            recording.put(Recording.key(voice.speaker, precision, runtime), rendered)
            print(f"RENDERED voice={voice.speaker} precision={precision} runtime={runtime} rtf={rendered.rtf:.4f}", flush=True)  # noqa: T201
            return
        row = score(voice.speaker, voice.lang, engine, precision, runtime, rendered)
        rows.append(row)
        print(table_line(row), flush=True)  # noqa: T201

    if args.replay:
        replayed(args, add)
    else:
        rendered_here(args, add, usable_cores())
    if recording is not None:
        recording.save(args.record)
        return
    for row in rows:
        s = row.scores
        print(  # noqa: T201
            f"RESULT voice={row.voice} lang={row.lang} engine={row.engine} precision={row.precision.replace(' ', '_')} "
            f"runtime={row.runtime} p808={s.p808:.2f} sig={s.sig:.2f} bak={s.bak:.2f} ovrl={s.ovrl:.2f} "
            f"high_band_db={s.high_band_db:.1f} cer={'n/a' if row.cer is None else f'{row.cer:.3f}'} rtf={row.rtf:.3f}"
        )
    for line in drift_lines(rows):
        print(line)  # noqa: T201


Add = Callable[[Any, str, str, str, Rendered], None]


def replayed(args: argparse.Namespace, add: Add) -> None:
    """Each row of each ``--replay`` file, scored here (its RTF is the recording host's)."""
    from speech.voices.catalog import Catalog

    catalog = Catalog.load()
    for path in args.replay:
        recording = Recording.load(path)
        for key in recording.keys():
            speaker, precision, runtime = key.split("|")
            voice = catalog.voice(args.model, speaker)
            add(voice, voice.engine, precision, runtime, recording.get(key))


def rendered_here(args: argparse.Namespace, add: Add, cores: int) -> None:
    from bench.machine import describe
    from bench.rounds import onnxruntime_session
    from speech.engines.kokoro.engine import resolve_dtype
    from speech.engines.kokoro.weights import model_file
    from speech.engines.registry import load_engine
    from speech.voices.catalog import Catalog

    paragraphs = load_paragraphs()
    catalog = Catalog.load()
    languages = args.languages.split(",") if args.languages else (QUICK_LANGUAGES if args.quick else None)
    names = args.voices.split(",") if args.voices else (QUICK_VOICES if args.quick else None)
    voices = [catalog.voice(args.model, n) for n in names] if names else list(catalog.voices_of(args.model))
    voices = [v for v in voices if languages is None or v.lang in languages]
    cer_limit = args.cer_sentences or (3 if args.quick else None)
    threads = args.threads or cores
    dtypes = [resolve_dtype(d, args.device) for d in args.dtypes.split(",")]
    where = "" if args.device == "cpu" else f" {args.device}"
    if args.record is None:
        print(describe(args.device, ",".join(dtypes)))  # noqa: T201
        print(f"{len(voices)} voices; {threads} threads; paragraphs {PARAGRAPHS.name}; CER on {DEV_SENTENCES.name}")  # noqa: T201
        print("|" + "---|" * HEADER.count(" | ") + "---|")  # noqa: T201
    session = None
    for voice in voices:
        paragraph = paragraphs[voice.lang]
        with_cer = not args.no_cer
        if voice.engine == "kokoro":
            for dtype in dtypes:
                for kernels in args.kernels.split(","):
                    engine = kokoro_engine(voice, dtype, threads, kernels, args.device)
                    speak = lector_speaker(engine, voice.lang)
                    speak = twice(speak) if kernels == "graphs" else speak
                    precision = (dtype if kernels == "eager" else f"{dtype} {kernels}") + where
                    add(voice, "kokoro", precision, "torch",
                        render(speak, engine.sample_rate, paragraph, voice.lang, cer_limit, with_cer))
            if not args.no_reference:
                session = session or onnxruntime_session(str(model_file()), threads, "cpu")
                speak = onnxruntime_speaker(session, voice, voice.lang)
                add(voice, "kokoro", "int8 graph", "onnxruntime",
                    render(speak, 24000, paragraph, voice.lang, cer_limit, with_cer))
        else:
            engine = load_engine(voice, threads=threads)
            runtime = getattr(engine, "runtime", voice.engine)
            add(voice, voice.engine, "float32", str(runtime),
                render(lector_speaker(engine, voice.lang), engine.sample_rate, paragraph, voice.lang, cer_limit, with_cer,
                       draws=VITS_DRAWS))


if __name__ == "__main__":
    main()
