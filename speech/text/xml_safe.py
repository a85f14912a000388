"""The one XML parser for what customers send: SSML, PLS lexicons and the XML inside an EPUB.

Why not ``xml.etree.ElementTree.fromstring``: a document is untrusted input, and the standard
parser expands internal entities (a "billion laughs" DTD grows a few hundred bytes into
gigabytes), keeps a DTD's declarations, and builds a tree of any depth and width. Here:

- ``defusedxml``'s parser refuses any DTD at all (``forbid_dtd``), hence entity declarations
  and external entities; an undeclared ``&entity;`` is expat's own error;
- the input is capped in bytes before parsing, and the tree as it is built: nesting depth,
  element count, attributes per element and characters per attribute value (``XmlLimits``), so a
  hostile document costs at most the cap's time and memory and ends in ``UnsafeXml``;
- every element keeps its line and column, so a caller can say where a problem is.

``parse_nodes`` gives ``XmlNode`` trees with mixed content in document order (what SSML and PLS
walk); ``parse_element`` gives an ``ElementTree.Element`` (what the EPUB reader queries).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final
from xml.etree import ElementTree

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

from speech.errors import MalformedXml, UnsafeXml
from speech.text.offsets import Traced


@dataclass(frozen=True, slots=True)
class XmlLimits:
    """How large a document may be, in bytes and in tree shape. Defaults suit SSML and PLS."""

    max_bytes: int = 1_000_000
    max_depth: int = 64
    max_elements: int = 50_000
    max_attributes: int = 32
    max_attribute_chars: int = 8_192


EPUB_LIMITS: Final = XmlLimits(
    max_bytes=32 * 1024 * 1024, max_depth=256, max_elements=100_000, max_attributes=64, max_attribute_chars=65_536
)


@dataclass(slots=True)
class XmlNode:
    """One element: ``tag`` as ElementTree spells it (``{namespace}local``), its attributes, where
    it starts (1-based line and column) and its children, text strings and elements in order."""

    tag: str
    attrib: dict[str, str]
    line: int
    column: int
    children: list[XmlNode | str] = field(default_factory=list)
    offset: int | None = None
    """Where the start tag begins in the document, in characters (a document given as ``str``)."""
    origins: dict[int, Traced] | None = None
    """For each text child (by index), where its characters stand in the document (a document
    given as ``str``): entities and character references stand for all of their markup. None:
    no positions, or no text (not an empty dict each: 50,000 elements are allowed)."""

    def origin(self, index: int) -> Traced | None:
        """Where text child ``index`` stands in the document, if known."""
        return self.origins.get(index) if self.origins is not None else None

    @property
    def local(self) -> str:
        return self.tag.rsplit("}", 1)[-1]

    @property
    def position(self) -> str:
        return f"line {self.line}, column {self.column}"

    def text(self) -> str:
        """All the text inside, children's included."""
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)


class _Guard:
    """A parser target that enforces the limits while the tree grows and hands each event on."""

    def __init__(self, limits: XmlLimits, what: str) -> None:
        self.limits = limits
        self.what = what
        self.parser: Any = None  # the DefusedXMLParser, set once built (it needs its target first)
        self.depth = 0
        self.elements = 0

    def where(self) -> tuple[int, int]:
        expat = getattr(self.parser, "parser", None)
        if expat is None:
            return 0, 0
        return int(expat.CurrentLineNumber), int(expat.CurrentColumnNumber) + 1

    def refuse(self, reason: str) -> UnsafeXml:
        line, column = self.where()
        return UnsafeXml(f"{self.what} refused at line {line}, column {column}: {reason}")

    def check_start(self, attrib: dict[str, str]) -> None:
        self.depth += 1
        self.elements += 1
        limits = self.limits
        if self.depth > limits.max_depth:
            raise self.refuse(f"elements nested deeper than {limits.max_depth}")
        if self.elements > limits.max_elements:
            raise self.refuse(f"more than {limits.max_elements} elements")
        if len(attrib) > limits.max_attributes:
            raise self.refuse(f"more than {limits.max_attributes} attributes on one element")
        if any(len(value) > limits.max_attribute_chars for value in attrib.values()):
            raise self.refuse(f"an attribute value longer than {limits.max_attribute_chars} characters")


class _NodeBuilder(_Guard):
    def __init__(self, limits: XmlLimits, what: str, document: str | None = None) -> None:
        super().__init__(limits, what)
        self.stack: list[XmlNode] = []
        self.root: XmlNode | None = None
        self.document = document  # set: text children learn where they stand (``XmlNode.origins``)
        self._encoded = document.encode("utf-8", "surrogatepass") if document is not None else b""
        self._byte = self._char = 0  # the last byte index converted, and its character index

    def offset(self) -> int:
        """The current event's position in the document, in characters (expat counts bytes)."""
        expat = self.parser.parser
        byte = int(expat.CurrentByteIndex)
        if byte < self._byte:  # never, events come in order; start again rather than guess
            self._byte = self._char = 0
        self._char += len(self._encoded[self._byte : byte].decode("utf-8", "surrogatepass"))
        self._byte = byte
        return self._char

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        self.check_start(attrib)
        line, column = self.where()
        node = XmlNode(tag, dict(attrib), line, column, offset=self.offset() if self.document is not None else None)
        if self.stack:
            self.stack[-1].children.append(node)
        else:
            self.root = node
        self.stack.append(node)

    def end(self, tag: str) -> None:
        self.depth -= 1
        self.stack.pop()

    def data(self, data: str) -> None:
        if not self.stack:
            return
        node = self.stack[-1]
        children = node.children
        if children and isinstance(children[-1], str):
            children[-1] += data
        else:
            children.append(data)
        if self.document is not None:
            where = self._where(data)
            index = len(children) - 1
            if node.origins is None:
                node.origins = {}
            node.origins[index] = node.origins[index] + where if index in node.origins else where

    def _where(self, data: str) -> Traced:
        """``data`` (one expat event: text, or one reference) where it stands in the document."""
        at = self.offset()
        document = self.document
        assert document is not None
        if document.startswith("&", at):  # a reference: a bare "&" is not well-formed
            return Traced.spread(data, (at, max(document.find(";", at) + 1, at + 1)))
        if document.startswith(data, at):
            return Traced.of(data, at)
        return Traced.spread(data, (at, at + len(data)))  # a line end written as "\r\n"

    def close(self) -> XmlNode | None:
        return self.root


class _TreeBuilder(_Guard):
    def __init__(self, limits: XmlLimits, what: str) -> None:
        super().__init__(limits, what)
        self.builder = ElementTree.TreeBuilder()

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        self.check_start(attrib)
        self.builder.start(tag, attrib)

    def end(self, tag: str) -> None:
        self.depth -= 1
        self.builder.end(tag)

    def data(self, data: str) -> None:
        self.builder.data(data)

    def close(self) -> ElementTree.Element:
        return self.builder.close()


def _run(source: bytes | str, target: _NodeBuilder | _TreeBuilder) -> Any:
    size = len(source.encode("utf-8", "surrogatepass")) if isinstance(source, str) else len(source)
    if size > target.limits.max_bytes:
        raise UnsafeXml(f"{target.what} is larger than {target.limits.max_bytes} bytes")
    parser = DefusedXMLParser(target=target, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    target.parser = parser
    if isinstance(target, _NodeBuilder) and target.document is not None:
        parser.parser.buffer_text = False  # one event per stretch, each with its own position
    try:
        parser.feed(source)
        return parser.close()
    except DefusedXmlException as exc:
        raise target.refuse(_defused_reason(exc)) from None
    except ElementTree.ParseError as exc:
        line, column = exc.position
        message = str(exc).split(":", 1)[0]
        raise MalformedXml(f"{target.what} is not well-formed XML at line {line}, column {column + 1}: {message}") from None
    except (RecursionError, MemoryError):
        raise target.refuse("the document is too complex") from None


def _defused_reason(exc: DefusedXmlException) -> str:
    name = type(exc).__name__
    if name == "DTDForbidden":
        return "a DTD (<!DOCTYPE>) is not allowed"
    if name == "EntitiesForbidden":
        return "entity declarations are not allowed"
    return "external references are not allowed"


def parse_nodes(source: bytes | str, *, what: str, limits: XmlLimits = XmlLimits()) -> XmlNode:
    """``source`` as an ``XmlNode`` tree; ``what`` ("SSML", "the lexicon") starts each message.
    A ``str`` document's nodes also say where they stand in it (``XmlNode.offset``, ``origins``)."""
    root = _run(source, _NodeBuilder(limits, what, source if isinstance(source, str) else None))
    if root is None:
        raise MalformedXml(f"{what} has no root element")
    assert isinstance(root, XmlNode)
    return root


def parse_element(source: bytes | str, *, what: str, limits: XmlLimits = EPUB_LIMITS) -> ElementTree.Element:
    """``source`` as an ``ElementTree.Element``, under the same guards."""
    root = _run(source, _TreeBuilder(limits, what))
    assert isinstance(root, ElementTree.Element)
    return root
