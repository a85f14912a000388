"""W3C Pronunciation Lexicon Specification (PLS 1.0) documents, and applying them to text.

A lexicon is ``<lexicon version="1.0" alphabet="ipa" xml:lang="en-US">`` holding ``lexeme``s;
a lexeme has one or more ``grapheme``s (how the word or phrase is written) and one or more
pronunciations, ``phoneme`` (IPA) or ``alias`` (other words to say instead). What lector does
with them, following the spec where it speaks and saying so where it leaves a choice:

- the pronunciation used is the first one marked ``prefer="true"``, else the first in document
  order (PLS 4.6); an ``alias`` is spoken as written and not looked up again;
- a grapheme's whitespace is normalised, so a multi-word grapheme ("New York") matches the
  words with any run of spaces or a line break between them; matches are whole words, and the
  longest grapheme wins where two start at the same place;
- case: a grapheme is matched as written; one written all in lower case also matches the word
  capitalised or in capitals ("read" matches "Read" at a sentence start), while one with a
  capital matches only as written, so "US" never rewrites "us";
- when several lexicons apply, the first one named wins for a grapheme both define;
- a lexicon applies to text in its own language (its ``xml:lang``), also inside an SSML
  ``lang`` switch, and never to text in another.

Malformed documents are a ``LexiconError`` that names the line and what is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from speech.errors import LexiconError, MalformedXml, UnsafeXml
from speech.text.languages import canonical
from speech.text.markup import PhonemeSegment, Segment, TextSegment
from speech.text.offsets import Traced
from speech.text.xml_safe import XmlLimits, XmlNode, parse_nodes

PLS_NS: Final = "http://www.w3.org/2005/01/pronunciation-lexicon"
_XML_LANG: Final = "{http://www.w3.org/XML/1998/namespace}lang"
_XML_ID: Final = "{http://www.w3.org/XML/1998/namespace}id"
_SCHEMA_LOCATION: Final = "{http://www.w3.org/2001/XMLSchema-instance}schemaLocation"
_LEXICON_ATTRS: Final = frozenset({"version", "alphabet", _XML_LANG, _SCHEMA_LOCATION, "{http://www.w3.org/XML/1998/namespace}base"})
_IGNORED: Final = frozenset({"meta", "metadata", "example"})
"""Elements the spec allows that carry nothing to speak: accepted and not used."""


@dataclass(frozen=True, slots=True)
class Lexeme:
    graphemes: tuple[str, ...]
    phoneme: str | None
    alias: str | None
    line: int


@dataclass(frozen=True, slots=True)
class PronunciationLexicon:
    lang: str
    """The two-letter language of its ``xml:lang``."""
    lexemes: tuple[Lexeme, ...]


def _local(node: XmlNode) -> str:
    namespace, _, local = node.tag[1:].partition("}") if node.tag.startswith("{") else ("", "", node.tag)
    return local if namespace in ("", PLS_NS) else node.tag


def _fail(node: XmlNode | None, what: str) -> LexiconError:
    return LexiconError(f"lexicon line {node.line if node else 1}: {what}")


def parse_pls(document: str | bytes, *, max_lexemes: int = 10_000, limits: XmlLimits = XmlLimits()) -> PronunciationLexicon:
    """A PLS document -> its lexemes. ``LexiconError`` names the line and the fault."""
    try:
        root = parse_nodes(document, what="the lexicon", limits=limits)
    except (MalformedXml, UnsafeXml) as exc:
        raise LexiconError(str(exc)) from None
    if _local(root) != "lexicon":
        raise _fail(root, f"the root element must be <lexicon>, not <{root.tag[:60]}>")
    for attr in root.attrib:
        if attr not in _LEXICON_ATTRS:
            raise _fail(root, f'<lexicon> attribute "{attr[:60]}" is not part of PLS 1.0')
    if root.attrib.get("version") != "1.0":
        raise _fail(root, '<lexicon> needs version="1.0"')
    alphabet = root.attrib.get("alphabet")
    if alphabet is None:
        raise _fail(root, "<lexicon> needs an alphabet attribute")
    tag = root.attrib.get(_XML_LANG)
    if tag is None:
        raise _fail(root, "<lexicon> needs xml:lang")
    lang = canonical(tag)
    if lang is None:
        raise _fail(root, f'xml:lang "{tag[:20]}" is not a language lector speaks')
    lexemes: list[Lexeme] = []
    for child in root.children:
        if isinstance(child, str):
            if child.strip():
                raise _fail(root, f'text "{child.strip()[:30]}" outside a lexeme')
            continue
        local = _local(child)
        if local in _IGNORED:
            continue
        if local != "lexeme":
            raise _fail(child, f"<{local[:60]}> is not a PLS element here (expected <lexeme>)")
        lexemes.append(_lexeme(child, alphabet))
        if len(lexemes) > max_lexemes:
            raise _fail(child, f"more than {max_lexemes} lexemes")
    return PronunciationLexicon(lang, tuple(lexemes))


def _lexeme(node: XmlNode, alphabet: str) -> Lexeme:
    for attr in node.attrib:
        if attr not in ("role", _XML_ID):
            raise _fail(node, f'<lexeme> attribute "{attr[:60]}" is not part of PLS 1.0')
    graphemes: list[str] = []
    pronunciations: list[tuple[bool, str | None, str | None]] = []  # (preferred, phoneme, alias)
    for child in node.children:
        if isinstance(child, str):
            if child.strip():
                raise _fail(node, f'text "{child.strip()[:30]}" directly inside <lexeme>')
            continue
        local = _local(child)
        if any(isinstance(c, XmlNode) for c in child.children):
            raise _fail(child, f"<{local[:60]}> may hold only text")
        text = " ".join(child.text().split())
        if local == "grapheme":
            if pronunciations:
                raise _fail(child, "<grapheme> must come before the lexeme's pronunciations")
            if not text:
                raise _fail(child, "<grapheme> is empty")
            graphemes.append(text)
        elif local in ("phoneme", "alias"):
            prefer = child.attrib.get("prefer", "false")
            if prefer not in ("true", "false"):
                raise _fail(child, f'prefer must be "true" or "false", not "{prefer[:20]}"')
            if not text:
                raise _fail(child, f"<{local}> is empty")
            if local == "phoneme":
                own = child.attrib.get("alphabet", alphabet)
                if own != "ipa":
                    raise _fail(child, f'alphabet "{own[:20]}" is not supported (use "ipa")')
                pronunciations.append((prefer == "true", text, None))
            else:
                pronunciations.append((prefer == "true", None, text))
        elif local not in _IGNORED:
            raise _fail(child, f"<{local[:60]}> is not a PLS element (expected grapheme, phoneme, alias or example)")
    if not graphemes:
        raise _fail(node, "<lexeme> has no <grapheme>")
    if not pronunciations:
        raise _fail(node, "<lexeme> has no <phoneme> or <alias>")
    _, phoneme, alias = next((p for p in pronunciations if p[0]), pronunciations[0])
    return Lexeme(tuple(graphemes), phoneme, alias, node.line)


class LexiconMatcher:
    """Lexicons compiled for one language: one regular expression over every grapheme."""

    def __init__(self, lexicons: Sequence[PronunciationLexicon], lang: str) -> None:
        self.exact: dict[str, Lexeme] = {}
        self.folded: dict[str, Lexeme] = {}
        for lex in lexicons:
            if lex.lang != lang:
                continue
            for lexeme in lex.lexemes:
                for grapheme in lexeme.graphemes:
                    self.exact.setdefault(grapheme, lexeme)
                    if grapheme == grapheme.lower():
                        self.folded.setdefault(grapheme, lexeme)
        alternatives = []
        for grapheme in sorted(self.exact, key=len, reverse=True):
            body = r"\s+".join(re.escape(word) for word in grapheme.split())
            alternatives.append(f"(?i:{body})" if grapheme in self.folded else body)
        self.pattern = (
            re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + r")(?!\w)") if alternatives else None
        )

    def lookup(self, written: str) -> Lexeme | None:
        key = " ".join(written.split())
        return self.exact.get(key) or self.folded.get(key.lower())

    def apply(self, segment: TextSegment) -> list[Segment]:
        if self.pattern is None:
            return [segment]
        out: list[Segment] = []
        text, origin = segment.text, segment.origin
        cursor = 0
        for m in self.pattern.finditer(text):
            lexeme = self.lookup(m.group(0))
            if lexeme is None:  # a case-folded alternative matched a grapheme it must not
                continue
            if m.start() > cursor:
                out.append(_part(segment, cursor, m.start()))
            where = origin.span(m.start(), m.end()) if origin is not None else None
            if lexeme.phoneme is not None:
                out.append(PhonemeSegment(lexeme.phoneme, word=m.group(0), voicing=segment.voicing, source=where))
            else:
                alias = lexeme.alias or ""
                spoken = Traced.spread(alias, where) if where is not None else None
                out.append(replace(segment, text=alias, origin=spoken))
            cursor = m.end()
        if cursor < len(text):
            out.append(_part(segment, cursor, len(text)))
        return _join_text(out)


def _part(segment: TextSegment, start: int, end: int) -> TextSegment:
    origin = segment.origin.slice(start, end) if segment.origin is not None else None
    return replace(segment, text=segment.text[start:end], origin=origin)


def _join_text(segments: list[Segment]) -> list[Segment]:
    """Alias text joins the text around it (one sentence stays one engine call)."""
    joined: list[Segment] = []
    for segment in segments:
        last = joined[-1] if joined else None
        if (
            isinstance(segment, TextSegment) and isinstance(last, TextSegment)
            and (last.speed, last.voicing) == (segment.speed, segment.voicing)
        ):
            both = last.origin + segment.origin if last.origin is not None and segment.origin is not None else None
            joined[-1] = replace(last, text=last.text + segment.text, origin=both)
        else:
            joined.append(segment)
    return joined


def lexicon_matches(text: str, lexicons: Sequence[PronunciationLexicon], lang: str) -> list[tuple[str, Lexeme]]:
    """Each stretch of ``text`` a lexicon changes, as written, with the lexeme that changes it
    (what ``/phonemize`` shows)."""
    matcher = LexiconMatcher(lexicons, lang)
    if matcher.pattern is None:
        return []
    found = []
    for m in matcher.pattern.finditer(text):
        lexeme = matcher.lookup(m.group(0))
        if lexeme is not None:
            found.append((m.group(0), lexeme))
    return found


def apply_lexicons(segments: Sequence[Segment], lexicons: Sequence[PronunciationLexicon], voice_lang: str) -> list[Segment]:
    """Each text stretch with its language's lexicons applied: graphemes with a phoneme become
    ``PhonemeSegment``s (the written word kept for timings and billing), those with an alias
    become the alias's text."""
    if not lexicons:
        return list(segments)
    matchers: dict[str, LexiconMatcher] = {}
    out: list[Segment] = []
    for segment in segments:
        if not isinstance(segment, TextSegment):
            out.append(segment)
            continue
        lang = segment.voicing.lang or voice_lang
        if lang not in matchers:
            matchers[lang] = LexiconMatcher(lexicons, lang)
        out.extend(matchers[lang].apply(segment))
    return out
