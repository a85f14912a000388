"""An ``Engine`` that is a model service over HTTP (``MODEL_URL``), and the synthesizer using it.

The facade, cloud or self-hosted, runs the same code whether the voice is in-process or in a
model service: ``RemoteEngine`` meets the ``speech`` Engine protocol and speaks the wire format of
``facade.invocations_format``.

Failing fast matters more than anything else here: a model service that is down must turn a
synthesis into a 500 ``internal error`` within about a second, not a hung request. So the
connect timeout is short (connection refused on loopback is immediate; an unreachable host
costs ``connect_timeout``), while the read timeout stays long enough for a long sentence on a
busy GPU. Nothing is cached about a failure: the next request simply tries again, so the facade
recovers by itself the moment the model service is back.

``RemoteSynthesizer`` drops the base class's one-inference-at-a-time lock: with a remote engine
the lock would serialise every request of this process and defeat the model service's batching,
which needs concurrent requests to arrive together.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from facade import invocations_format as wire
from speech.engines.base import Engine
from speech.errors import EngineError, VoiceNotFound
from speech.synthesizer import Controls, Synthesizer
from speech.types import AudioChunk, SynthesisOptions

if TYPE_CHECKING:
    from speech.voices.entries import Voice

DEFAULT_CONNECT_TIMEOUT = 0.5
DEFAULT_READ_TIMEOUT = 60.0


class ModelUnavailable(EngineError):
    """The model service could not be reached, was not ready, or broke off its answer."""


class RemoteVoice(Protocol):
    """What routing a voice to a model service reads of it: the catalog's ``Voice`` has these
    (``speech.voices.entries``), and so must any stand-in, rather than being probed for them."""

    @property
    def speaker(self) -> str:
        """The name the model service knows the voice by (``joe``)."""
        ...

    @property
    def lang(self) -> str:
        """Its 2-letter language: ``arcana`` is routed by it (``facade.model_routes``)."""
        ...

    @property
    def engine(self) -> str:
        """``vits``, ``kokoro`` or ``espeak``: whether it is worth a GPU host (``is_neural``)."""
        ...


class VoiceNotServed(VoiceNotFound):
    """The model service answered that it does not serve this voice: a deployment whose model
    service was started for other voices. A 400 (``VoiceNotFound``), not a 500: retrying cannot
    help, and the vendor API contract tells clients to retry a 500."""

    def __init__(self, speaker: str, served: Sequence[str]) -> None:
        super().__init__(speaker, "")
        listed = ", ".join(served) or "none"
        self.args = (f"speaker {speaker} is not served by this deployment's model service (it serves {listed})",)
        self.served = list(served)


def _refusal(response: httpx.Response, url: str, what: str) -> ModelUnavailable | VoiceNotServed:
    """The error for a non-200 answer: ``VoiceNotServed`` for the service's "not served" 400."""
    if response.status_code == 400:
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict) and isinstance(body.get("served"), list):
            return VoiceNotServed(str(body.get("voice")), [str(v) for v in body["served"]])
    return ModelUnavailable(f"model service {what} at {url} answered {response.status_code}: {response.text[:200]}")


def service_url(invocations_url: str, path: str) -> str:
    """``http://h:8080/invocations`` -> ``http://h:8080/<path>`` (for ``readyz``, ``phonemize``)."""
    base = invocations_url.rstrip("/")
    if base.endswith("/invocations"):
        base = base[: -len("/invocations")]
    return f"{base}/{path.lstrip('/')}"


class RemoteEngine:
    """A voice served by a model service. Thread-safe: one pooled ``httpx.Client`` per engine."""

    def __init__(
        self,
        url: str,
        *,
        voice: str | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        encoding: str = "f32",
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = url
        self.voice = voice
        self.encoding = encoding
        self._sample_rate: int | None = None
        timeout = httpx.Timeout(read_timeout, connect=connect_timeout, pool=connect_timeout * 4)
        self._client = httpx.Client(
            timeout=timeout, transport=transport, limits=httpx.Limits(max_connections=256, max_keepalive_connections=64)
        )
        self._lock = threading.Lock()

    @property
    def sample_rate(self) -> int:
        if self._sample_rate is None:
            body = self._get_json("readyz")
            rates = body.get("sampleRates") or {}
            self._sample_rate = int(rates.get(self.voice) or body["sampleRate"])
        return self._sample_rate

    def phonemize(self, text: str) -> str:
        try:
            response = self._client.post(service_url(self.url, "phonemize"), json={"text": text, "voice": self.voice})
        except httpx.HTTPError as exc:
            raise ModelUnavailable(f"model service at {self.url} unreachable: {exc}") from exc
        if response.status_code != 200:
            raise _refusal(response, self.url, "phonemize")
        return str(response.json()["phonemes"])

    def synthesize(self, sentences: Sequence[str], options: SynthesisOptions | None = None) -> list[AudioChunk]:
        return self._invoke(sentences, options, "text")

    def synthesize_phonemes(
        self, phoneme_strings: Sequence[str], options: SynthesisOptions | None = None
    ) -> list[AudioChunk]:
        """IPA spoken as written, by the model service's engine (``{...}`` markup)."""
        return self._invoke(phoneme_strings, options, "ipa")

    def _invoke(self, sentences: Sequence[str], options: SynthesisOptions | None, kind: str) -> list[AudioChunk]:
        if not sentences:
            return []
        options = options or SynthesisOptions()
        request = wire.InvocationRequest(
            sentences=list(sentences), voice=self.voice, length_scale=options.length_scale,
            noise_scale=options.noise_scale, noise_w=options.noise_w, encoding=self.encoding, input=kind,
        )
        try:
            with self._client.stream("POST", self.url, json=request.to_json()) as response:
                if response.status_code != 200:
                    response.read()
                    raise _refusal(response, self.url, "invocations")
                decoded = wire.decode(response.iter_bytes())
        except httpx.HTTPError as exc:
            raise ModelUnavailable(f"model service at {self.url} unreachable: {exc}") from exc
        except wire.WireError as exc:
            raise ModelUnavailable(f"model service at {self.url}: {exc}") from exc
        self._sample_rate = decoded.sample_rate
        if len(decoded.chunks) != len(sentences):
            raise ModelUnavailable(f"model service returned {len(decoded.chunks)} of {len(sentences)} sentences")
        return decoded.chunks

    def ready(self, timeout: float = 1.0) -> bool:
        """Whether the model service answers ``/readyz`` with 200 within ``timeout``."""
        try:
            response = self._client.get(service_url(self.url, "readyz"), timeout=timeout)
        except httpx.HTTPError:
            return False
        return response.status_code == 200

    def close(self) -> None:
        self._client.close()

    def _get_json(self, path: str) -> dict[str, Any]:
        try:
            response = self._client.get(service_url(self.url, path))
        except httpx.HTTPError as exc:
            raise ModelUnavailable(f"model service at {self.url} unreachable: {exc}") from exc
        if response.status_code != 200:
            raise ModelUnavailable(f"model service {path} answered {response.status_code}")
        body: dict[str, Any] = response.json()
        return body


Route = Callable[[RemoteVoice, Controls], str]  # (voice, controls) -> the model service's /invocations URL


class RemoteSynthesizer(Synthesizer):
    """A ``Synthesizer`` whose engines are model services, one ``RemoteEngine`` per (url, voice).

    ``route(voice, controls)`` picks the model service: ``MODEL_URL``, or for ``arcana`` the one of
    the voice's language (``controls.route`` is the model that serves the request, which is
    how a voice shared by several lineups still reaches the right container). ``voice_name``
    gives the name sent in requests (default: the voice's ``speaker``).

    ``local`` (cloud mode): voices for which ``is_remote(voice)`` is false are synthesized by this
    in-process synthesizer instead; the cloud keeps its cheap formant voices in the facade and
    sends the neural ones to the GPU hosts. Self-hosted mode has no ``local``: every voice is remote.
    """

    def __init__(
        self,
        route: Route,
        *,
        voice_name: Callable[[RemoteVoice], str | None] | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        local: Synthesizer | None = None,
        is_remote: Callable[[RemoteVoice], bool] | None = None,
    ) -> None:
        super().__init__(self._load)
        self._route = route
        self._local = local
        self._is_remote = is_remote or (lambda voice: True)
        self._voice_name = voice_name or default_voice_name
        self._timeouts = (connect_timeout, read_timeout)
        self._remote: dict[tuple[str, str | None], RemoteEngine] = {}
        self._remote_lock = threading.Lock()

    def _load(self, voice: Voice) -> RemoteEngine:
        return self.remote_engine(voice)

    def remote_engine(self, voice: Voice, controls: Controls | None = None) -> RemoteEngine:
        key = (self._route(voice, controls or Controls()), self._voice_name(voice))
        with self._remote_lock:
            engine = self._remote.get(key)
            if engine is None:
                connect, read = self._timeouts
                engine = RemoteEngine(key[0], voice=key[1], connect_timeout=connect, read_timeout=read)
                self._remote[key] = engine
            return engine

    def _remote_voice(self, voice: Voice) -> bool:
        return self._local is None or self._is_remote(voice)

    def engine(self, voice: Voice) -> Engine:
        if not self._remote_voice(voice):
            assert self._local is not None
            return self._local.engine(voice)
        return self.remote_engine(voice)

    def synthesize(
        self, voice: Voice, sentences: Sequence[str], controls: Controls | None = None
    ) -> list[AudioChunk]:
        return self._dispatch(voice, sentences, controls, phonemes=False)

    def synthesize_phonemes(
        self, voice: Voice, phoneme_strings: Sequence[str], controls: Controls | None = None
    ) -> list[AudioChunk]:
        return self._dispatch(voice, phoneme_strings, controls, phonemes=True)

    def _dispatch(
        self, voice: Voice, items: Sequence[str], controls: Controls | None, *, phonemes: bool
    ) -> list[AudioChunk]:
        """Local voices to the in-process synthesizer, the rest to the routed model service."""
        if not self._remote_voice(voice):
            assert self._local is not None
            local = self._local.synthesize_phonemes if phonemes else self._local.synthesize
            return local(voice, items, controls)
        controls = controls or Controls()
        options = SynthesisOptions(length_scale=controls.length_scale())
        engine = self.remote_engine(voice, controls)
        return (engine.synthesize_phonemes if phonemes else engine.synthesize)(list(items), options)

    def speaks_phonemes(self, voice: Voice) -> bool:
        if not self._remote_voice(voice):
            assert self._local is not None
            return self._local.speaks_phonemes(voice)
        return True  # the model service answers 400 if its engine takes no phonemes

    def close(self) -> None:
        with self._remote_lock:
            for engine in self._remote.values():
                engine.close()
            self._remote.clear()


def default_voice_name(voice: RemoteVoice) -> str:
    """The name a model service knows a voice by: its speaker name (``joe``)."""
    return voice.speaker


NEURAL_ENGINES = frozenset({"vits", "kokoro"})


def is_neural(voice: RemoteVoice) -> bool:
    """Voices worth a GPU host: the neural ones (the catalog's ``engine = "vits"`` and
    ``engine = "kokoro"``); the eSpeak NG formant voices cost too little to send anywhere."""
    return voice.engine in NEURAL_ENGINES


def remote_synthesizer(model_url: str, *, local: Synthesizer | None = None, **kwargs: Any) -> RemoteSynthesizer:
    """The cloud facade's case: neural voices through the model service at ``model_url``, the
    rest through ``local`` (every voice remote when ``local`` is None)."""
    return RemoteSynthesizer(lambda voice, controls: model_url, local=local, is_remote=is_neural, **kwargs)
