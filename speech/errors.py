"""Errors raised by the synthesis core. They carry no HTTP status: ``facade/errors.py`` maps them.

    SpeechError
    ├── VoiceNotFound            speaker is not a voice of the selected model
    ├── ModelNotFound            unknown modelId
    ├── LanguageNotSupported     lang outside the model's (or voice's) languages
    ├── CatalogError             the voice catalog file is malformed (names the bad entry)
    ├── TextError
    │   ├── PhonemesNotSupported `{phonemes}` for a voice whose engine takes only text
    │   ├── MalformedXml         SSML or PLS that is not well-formed XML (names line and column)
    │   ├── UnsafeXml            a hostile document: a DTD, entities, or past a size/shape limit
    │   ├── SsmlError            SSML lector does not support or cannot read (names it, and where)
    │   └── LexiconError         a PLS lexicon that is malformed (names the line and the fault)
    ├── PhonemizerError          eSpeak NG failed or is unavailable
    ├── WireError                (facade.invocations_format: an adapter's, rooted here for the one table) a model-service request or reply out of format
    ├── EngineError              inference failed (torch or weight loading)
    │   └── WeightsError         voice weights missing or not in the expected shape
    ├── RecognizerError          the speech-recognition check cannot run (speech.asr)
    └── AudioError
        ├── UnsupportedFormat    no encoder for a requested format
        └── EncodeError          the codec library failed
"""

from __future__ import annotations

#: How much of a caller's input (a speaker, a model, a language) a message repeats: enough to
#: recognise it, never a 10 KB name echoed back whole.
ECHO_CHARS = 64


def _cut(value: str) -> str:
    return value if len(value) <= ECHO_CHARS else value[: ECHO_CHARS - 3] + "..."


class SpeechError(Exception):
    """Root of every error the synthesis core raises."""


class VoiceNotFound(SpeechError):
    def __init__(self, speaker: str, model_id: str) -> None:
        super().__init__(f"speaker {_cut(speaker)} is not a voice of model {_cut(model_id)}")
        self.speaker = speaker
        self.model_id = model_id


class ModelNotFound(SpeechError):
    def __init__(self, model_id: str) -> None:
        super().__init__(f"modelId {_cut(model_id)} is not supported")
        self.model_id = model_id


class LanguageNotSupported(SpeechError):
    def __init__(self, lang: str, model_id: str) -> None:
        super().__init__(f"Language {_cut(lang)} is not supported for model {_cut(model_id)}")
        self.lang = lang
        self.model_id = model_id


class CatalogError(SpeechError):
    """The voice catalog cannot be loaded: the message names the file and the bad entry."""


class TextError(SpeechError):
    """The text cannot be processed as given."""


class PhonemesNotSupported(TextError):
    def __init__(self, speaker: str) -> None:
        super().__init__(f"speaker {_cut(speaker)} does not accept phonemes between brackets")
        self.speaker = speaker


class MalformedXml(TextError):
    """Not well-formed XML; the message names the line and column."""


class UnsafeXml(TextError):
    """A document refused before or while it was parsed: a DTD, entities, or past a limit
    (``speech.text.xml_safe.XmlLimits``). The message says which and where."""


class SsmlError(TextError):
    """An SSML element, attribute or value lector does not support; the message names it and
    its position: nothing in a document is dropped silently."""


class LexiconError(TextError):
    """A PLS lexicon lector cannot use; the message names the line and what is wrong."""


class PhonemizerError(SpeechError):
    pass


class EngineError(SpeechError):
    pass


class WeightsError(EngineError):
    pass


class AudioError(SpeechError):
    pass


class UnsupportedFormat(AudioError):
    pass


class EncodeError(AudioError):
    pass


class RecognizerError(SpeechError):
    """The speech-recognition check (``speech.asr``) cannot run: its model packages are missing
    or the recognizer failed. A server failure, never the customer's."""
