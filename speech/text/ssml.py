"""SSML 1.1 ``<speak>`` documents, read into the core's segments (``speech.text.markup``).

A document becomes the same ``TextSegment``/``PauseSegment``/``PhonemeSegment`` list the
vendor's bracket markup becomes, plus ``MarkSegment`` for ``mark`` and a ``Voicing`` on each
stretch (rate, level, language, voice), so every transport speaks SSML through the one path it
already has. What is supported, and how:

- ``p``, ``s``: each sentence is spoken on its own; a paragraph ends with a 400 ms pause;
- ``break``: ``time`` ("500ms", "2s", at most ``MAX_PAUSE_MS``) or ``strength``;
- ``prosody``: ``rate`` (x-slow..x-fast, "150%", "+20%", "0.8") and ``volume`` (silent..x-loud,
  "+6dB"): a rate is the engine's own speed, a volume a gain on the audio as made, which is
  exactly what the attribute asks for. ``pitch``, ``contour``, ``range`` and ``duration`` are
  refused: none of our engines can honour them;
- ``emphasis``: ``level`` strong/moderate/reduced, read a little slower and louder (or faster
  and softer): the engines have no stress control beyond that;
- ``say-as`` (``speech.text.say_as``), ``sub`` (``alias`` spoken), ``phoneme`` (``alphabet="ipa"``);
- ``lang`` (and ``xml:lang`` on ``speak``, ``p``, ``s``, ``voice``): the text is normalised in
  that language and spoken by the voice with that language's phonemes;
- ``voice``: ``name`` is another voice of the request's model;
- ``mark``: its ``name`` shows in the word timings where it falls.

Anything else, an element, an attribute or a value, is an ``SsmlError`` that names it with its
line and column: nothing is dropped silently. The XML is read by ``speech.text.xml_safe``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Final

from speech.errors import SsmlError
from speech.text.languages import canonical
from speech.text.markup import (
    MAX_PAUSE_MS,
    PLAIN,
    MarkSegment,
    PauseSegment,
    PhonemeSegment,
    Segment,
    TextSegment,
    Voicing,
)
from speech.text.offsets import Traced
from speech.text.say_as import say_as
from speech.text.xml_safe import XmlLimits, XmlNode, parse_nodes

SSML_NS: Final = "http://www.w3.org/2001/10/synthesis"
XML_LANG: Final = "{http://www.w3.org/XML/1998/namespace}lang"
_SCHEMA_LOCATION: Final = "{http://www.w3.org/2001/XMLSchema-instance}schemaLocation"
PARAGRAPH_PAUSE_MS: Final = 400

_BREAK_STRENGTHS: Final = {"none": 0, "x-weak": 100, "weak": 250, "medium": 400, "strong": 700, "x-strong": 1200}
_RATES: Final = {"x-slow": 0.6, "slow": 0.8, "medium": 1.0, "default": 1.0, "fast": 1.25, "x-fast": 1.6}
_VOLUMES: Final = {"silent": -120.0, "x-soft": -12.0, "soft": -6.0, "medium": 0.0, "default": 0.0, "loud": 4.0, "x-loud": 8.0}
_EMPHASIS: Final = {"strong": (0.9, 3.0), "moderate": (0.95, 1.5), "none": (1.0, 0.0), "reduced": (1.08, -3.0)}
RATE_MIN, RATE_MAX = 0.25, 4.0
GAIN_MIN_DB, GAIN_MAX_DB = -120.0, 12.0

#: element -> the attributes it may carry (``xml:lang`` where the spec puts it).
ALLOWED: Final[dict[str, frozenset[str]]] = {
    "speak": frozenset({"version", XML_LANG, _SCHEMA_LOCATION}),
    "p": frozenset({XML_LANG}),
    "s": frozenset({XML_LANG}),
    "break": frozenset({"time", "strength"}),
    "prosody": frozenset({"rate", "volume"}),
    "emphasis": frozenset({"level"}),
    "say-as": frozenset({"interpret-as", "format"}),
    "sub": frozenset({"alias"}),
    "phoneme": frozenset({"alphabet", "ph"}),
    "lang": frozenset({XML_LANG}),
    "voice": frozenset({"name", XML_LANG}),
    "mark": frozenset({"name"}),
}
EMPTY: Final = frozenset({"break", "mark"})
"""Elements that hold no content."""
TEXT_ONLY: Final = frozenset({"say-as", "sub", "phoneme"})
"""Elements whose content is text alone (what is read differently, or replaced)."""


def looks_like_ssml(text: str) -> bool:
    """The text is an SSML document: it starts with ``<speak`` (after blanks or an XML
    declaration), the rule the vendor's clients use."""
    return bool(re.match(r"\s*(<\?xml[^>]*\?>\s*)?<speak[\s>/]", text))


@dataclass(frozen=True, slots=True)
class _Context:
    voicing: Voicing
    lang: str  # the language the text is read in (the voice's unless a lang switch says)


@dataclass(frozen=True, slots=True)
class Ssml:
    segments: list[Segment]
    written: str
    """The document's text as written, markup left out: what is billed. Text nodes count as
    written (a ``say-as`` or ``phoneme`` counts its own text, not its reading); a ``sub`` counts
    its ``alias``, the words spoken in place of its content; tags, attributes, comments,
    ``break`` and ``mark`` count nothing."""


def parse_ssml(document: str, *, voice_lang: str, limits: XmlLimits = XmlLimits()) -> Ssml:
    """A ``<speak>`` document -> segments. ``voice_lang`` is the request's voice's language,
    the default of every stretch (``Voicing.lang`` stays ``None`` where it applies)."""
    root = parse_nodes(document, what="SSML", limits=limits)
    if _local(root) != "speak":
        raise SsmlError(f"SSML must start with <speak>, not <{_name(root)}> at {root.position}")
    reader = _Reader(voice_lang)
    reader.element(root, _Context(PLAIN, voice_lang))
    return Ssml(reader.segments, "".join(reader.written))


def _local(node: XmlNode) -> str:
    """The element's SSML name, or its whole name when it is in another namespace."""
    if node.tag.startswith("{"):
        namespace, _, local = node.tag[1:].partition("}")
        return local if namespace == SSML_NS else node.tag
    return node.tag


def _name(node: XmlNode) -> str:
    return node.tag.replace("{" + SSML_NS + "}", "")[:60]


def _attr_name(name: str) -> str:
    return "xml:lang" if name == XML_LANG else name[:60]


class _Reader:
    def __init__(self, voice_lang: str) -> None:
        self.voice_lang = voice_lang
        self.segments: list[Segment] = []
        self.boundary = True  # a sentence starts here: the next text is not joined to the last
        self.written: list[str] = []

    # -- the walk ----------------------------------------------------------------------------

    def element(self, node: XmlNode, ctx: _Context) -> None:
        local = _local(node)
        allowed = ALLOWED.get(local)
        if allowed is None:
            raise SsmlError(f"SSML element <{_name(node)}> at {node.position} is not supported")
        for attr in node.attrib:
            if attr not in allowed:
                raise SsmlError(
                    f'SSML attribute "{_attr_name(attr)}" of <{local}> at {node.position} is not supported'
                )
        if local in EMPTY and (any(isinstance(c, XmlNode) for c in node.children) or node.text().strip()):
            raise SsmlError(f"SSML <{local}> at {node.position} must be empty")
        if local in TEXT_ONLY and any(isinstance(c, XmlNode) for c in node.children):
            raise SsmlError(f"SSML <{local}> at {node.position} may hold only text")
        ctx = self._with_lang(node, ctx)
        handlers = {
            "speak": self._speak, "p": self._p, "s": self._s, "break": self._break, "prosody": self._prosody,
            "emphasis": self._emphasis, "say-as": self._say_as, "sub": self._sub, "phoneme": self._phoneme,
            "lang": self._lang_element, "voice": self._voice, "mark": self._mark,
        }
        handlers[local](node, ctx)

    def children(self, node: XmlNode, ctx: _Context) -> None:
        for index, child in enumerate(node.children):
            if isinstance(child, str):
                self.written.append(child)
                self.text(child, ctx, node.origin(index))
            else:
                self.element(child, ctx)

    def text(self, text: str, ctx: _Context, origin: Traced | None) -> None:
        """Text joins the stretch before it when nothing between them changes how it is read, so
        a sentence with a ``say-as`` or ``sub`` inside is still one sentence to the engine.
        ``origin``: where the text stands in the document (what word timings point at)."""
        last = self.segments[-1] if self.segments else None
        if isinstance(last, TextSegment) and last.voicing == ctx.voicing and not self.boundary:
            joined = last.origin + origin if last.origin is not None and origin is not None else None
            self.segments[-1] = TextSegment(last.text + text, voicing=ctx.voicing, origin=joined)
        elif text.strip():
            self.segments.append(TextSegment(text, voicing=ctx.voicing, origin=origin))
            self.boundary = False

    def sentence(self, node: XmlNode, ctx: _Context) -> None:
        self.boundary = True
        self.children(node, ctx)
        self.boundary = True

    def other(self, segment: Segment) -> None:
        self.segments.append(segment)
        self.boundary = True

    def _with_lang(self, node: XmlNode, ctx: _Context) -> _Context:
        tag = node.attrib.get(XML_LANG)
        if tag is None:
            return ctx
        lang = canonical(tag)
        if lang is None:
            raise SsmlError(f'SSML xml:lang "{tag[:20]}" of <{_local(node)}> at {node.position} is not a supported language')
        voicing = replace(ctx.voicing, lang=None if lang == self.voice_lang else lang)
        return _Context(voicing, lang)

    # -- one method per element ------------------------------------------------------------

    def _speak(self, node: XmlNode, ctx: _Context) -> None:
        self.children(node, ctx)

    def _lang_element(self, node: XmlNode, ctx: _Context) -> None:
        if XML_LANG not in node.attrib:
            raise SsmlError(f"SSML <lang> at {node.position} needs xml:lang")
        self.children(node, ctx)

    def _p(self, node: XmlNode, ctx: _Context) -> None:
        self.sentence(node, ctx)
        if self.segments and not isinstance(self.segments[-1], PauseSegment):
            self.other(PauseSegment(PARAGRAPH_PAUSE_MS, implied=True))

    def _s(self, node: XmlNode, ctx: _Context) -> None:
        self.sentence(node, ctx)

    def _break(self, node: XmlNode, ctx: _Context) -> None:
        time, strength = node.attrib.get("time"), node.attrib.get("strength")
        if time is not None:
            m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s)\s*", time)
            if not m:
                raise SsmlError(f'SSML <break> at {node.position}: time "{time[:20]}" is not like "500ms" or "2s"')
            ms = round(float(m.group(1)) * (1000 if m.group(2) == "s" else 1))
        else:
            ms = _BREAK_STRENGTHS.get(strength or "medium", -1)
            if ms < 0:
                raise SsmlError(
                    f'SSML <break> at {node.position}: strength "{(strength or "")[:20]}" is not one of '
                    f"{', '.join(_BREAK_STRENGTHS)}"
                )
        ms = min(ms, MAX_PAUSE_MS)
        if ms > 0:
            self.other(PauseSegment(ms))

    def _prosody(self, node: XmlNode, ctx: _Context) -> None:
        voicing = ctx.voicing
        if "rate" in node.attrib:
            voicing = replace(voicing, rate=_scaled_rate(voicing.rate, _rate(node.attrib["rate"], node)))
        if "volume" in node.attrib:
            gain = voicing.gain_db + _volume(node.attrib["volume"], node)
            voicing = replace(voicing, gain_db=min(max(gain, GAIN_MIN_DB), GAIN_MAX_DB))
        self.children(node, _Context(voicing, ctx.lang))

    def _emphasis(self, node: XmlNode, ctx: _Context) -> None:
        level = node.attrib.get("level", "moderate")
        if level not in _EMPHASIS:
            raise SsmlError(f'SSML <emphasis> at {node.position}: level "{level[:20]}" is not one of {", ".join(_EMPHASIS)}')
        rate, gain = _EMPHASIS[level]
        voicing = replace(
            ctx.voicing,
            rate=_scaled_rate(ctx.voicing.rate, rate) if rate != 1.0 else ctx.voicing.rate,
            gain_db=min(max(ctx.voicing.gain_db + gain, GAIN_MIN_DB), GAIN_MAX_DB),
        )
        self.children(node, _Context(voicing, ctx.lang))

    def _say_as(self, node: XmlNode, ctx: _Context) -> None:
        kind = node.attrib.get("interpret-as")
        if not kind:
            raise SsmlError(f"SSML <say-as> at {node.position} needs interpret-as")
        text = node.text()
        self.written.append(text)
        if text.strip():
            reading = say_as(text, kind, node.attrib.get("format"), ctx.lang, node.position)
            self.text(reading, ctx, _read_for(reading, node))

    def _sub(self, node: XmlNode, ctx: _Context) -> None:
        alias = node.attrib.get("alias")
        if alias is None:
            raise SsmlError(f"SSML <sub> at {node.position} needs alias")
        self.written.append(alias)
        self.text(alias, ctx, _read_for(alias, node))

    def _phoneme(self, node: XmlNode, ctx: _Context) -> None:
        alphabet = node.attrib.get("alphabet", "ipa")
        if alphabet != "ipa":
            raise SsmlError(f'SSML <phoneme> at {node.position}: alphabet "{alphabet[:20]}" is not supported (use "ipa")')
        ph = node.attrib.get("ph", "").strip()
        if not ph:
            raise SsmlError(f"SSML <phoneme> at {node.position} needs ph")
        self.written.append(node.text())
        said = _read_for(node.text(), node)
        where = said.span(0, len(said)) if said is not None else None
        self.other(PhonemeSegment(ph, word=" ".join(node.text().split()), voicing=ctx.voicing, source=where))

    def _voice(self, node: XmlNode, ctx: _Context) -> None:
        name = node.attrib.get("name", "").strip()
        if not name:
            raise SsmlError(f"SSML <voice> at {node.position} needs name")
        self.children(node, _Context(replace(ctx.voicing, voice=name), ctx.lang))

    def _mark(self, node: XmlNode, ctx: _Context) -> None:
        name = node.attrib.get("name", "")
        if not name:
            raise SsmlError(f"SSML <mark> at {node.position} needs name")
        self.other(MarkSegment(name))


def _read_for(words: str, node: XmlNode) -> Traced | None:
    """``words`` read in place of a text-only element's content (``say-as``, ``sub``,
    ``phoneme``): each stands for the whole content as written, or, for an empty element, for
    the point where it stands. None where the document gave no positions."""
    if node.offset is None:
        return None
    parts = [node.origin(i) for i, child in enumerate(node.children) if isinstance(child, str)]
    if any(p is None for p in parts):
        return None
    content = Traced.join(p for p in parts if p is not None)
    return Traced.spread(words, content.span(0, len(content)) or (node.offset, node.offset))


def _scaled_rate(current: float | None, factor: float) -> float:
    return min(max((current or 1.0) * factor, RATE_MIN), RATE_MAX)


def _rate(value: str, node: XmlNode) -> float:
    value = value.strip()
    if value in _RATES:
        return _RATES[value]
    m = re.fullmatch(r"([+-]?)(\d+(?:\.\d+)?)(%?)", value)
    if m:
        sign, number, percent = m.group(1), float(m.group(2)), m.group(3)
        if percent and sign:  # "+20%": a relative change
            return max(1.0 + (number if sign == "+" else -number) / 100, RATE_MIN)
        if percent:
            return number / 100 if number > 0 else RATE_MIN
        if not sign and number > 0:
            return number
    raise SsmlError(
        f'SSML <prosody> at {node.position}: rate "{value[:20]}" is not one of {", ".join(_RATES)}, a percentage or a factor'
    )


def _volume(value: str, node: XmlNode) -> float:
    value = value.strip()
    if value in _VOLUMES:
        return _VOLUMES[value]
    m = re.fullmatch(r"([+-]\d+(?:\.\d+)?)dB", value)
    if m:
        return float(m.group(1))
    raise SsmlError(f'SSML <prosody> at {node.position}: volume "{value[:20]}" is not one of {", ".join(_VOLUMES)} or "+NdB"')
