"""Uploaded books to plain text: ``.txt``, ``.md`` and ``.epub``.

EPUB is read with the standard library alone (an EPUB is a zip of XHTML files listed by an OPF
package document): the spine gives the reading order, each spine document becomes a chapter,
titled by the table of contents (EPUB 3 ``nav`` or EPUB 2 NCX), else by its first heading.
Documents with no text (covers, images) are left out; a document with text but no title
continues the chapter before it.
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any, Final
from urllib.parse import unquote, urlsplit
from xml.etree import ElementTree

from books.chapters import markdown_to_text
from books.errors import SourceError
from books.options import GivenChapter
from speech.audio.m4b import cover_type
from speech.errors import MalformedXml, UnsafeXml
from speech.text.xml_safe import parse_element

_NS: Final = {
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
    "ncx": "http://www.daisy.org/z3986/2005/ncx/",
}
_BLOCKS: Final = frozenset(
    "p div h1 h2 h3 h4 h5 h6 li blockquote section article header footer tr br hr pre dt dd figcaption".split()
)
_HEADINGS: Final = frozenset("h1 h2 h3 h4".split())
_SKIP: Final = frozenset("script style head title svg math".split())
MAX_EPUB_MEMBER_BYTES: Final = 32 * 1024 * 1024
MAX_COVER_BYTES: Final = 10 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class SourceText:
    """A book read from an upload: its text, and the chapters, title and author the file carried."""

    text: str
    chapters: list[GivenChapter] = field(default_factory=list)
    title: str | None = None
    author: str | None = None
    cover: bytes | None = None  # the EPUB's cover image (JPEG or PNG), for the m4b


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.paragraphs: list[str] = []
        self._current: list[str] = []
        self._skip = 0
        self._in_heading = 0
        self._heading: list[str] = []
        self.first_heading: str | None = None

    def _flush(self) -> None:
        text = " ".join("".join(self._current).split())
        if text:
            self.paragraphs.append(text)
        self._current = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in _SKIP:
            self._skip += 1
        elif tag in _BLOCKS:
            self._flush()
        if tag in _HEADINGS:
            self._in_heading += 1

    def handle_startendtag(self, tag: str, attrs: Any) -> None:
        if tag in _BLOCKS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self._skip = max(self._skip - 1, 0)
        elif tag in _BLOCKS:
            self._flush()
        if tag in _HEADINGS and self._in_heading:
            self._in_heading -= 1
            if not self._in_heading and self.first_heading is None:
                heading = " ".join("".join(self._heading).split())
                self.first_heading = heading or None
            self._heading = []

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        self._current.append(data)
        if self._in_heading:
            self._heading.append(data)

    def result(self) -> str:
        self._flush()
        return "\n\n".join(self.paragraphs)


def _read(archive: zipfile.ZipFile, name: str) -> bytes:
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise SourceError(f"the EPUB lacks {name}") from None
    if info.file_size > MAX_EPUB_MEMBER_BYTES:
        raise SourceError("the EPUB has a file too large to read")
    return archive.read(info)


_NCX_DOCTYPE: Final = re.compile(
    rb"""^(\xef\xbb\xbf)?(\s*(?:<\?xml[^>]*\?>)?\s*)<!DOCTYPE\s+ncx\s+PUBLIC\s+(["'])-//NISO//DTD ncx 2005-1//EN\3"""
    rb"""\s*(["'])[^"'<>\[\]]*\4\s*>"""
)


def _xml(data: bytes, name: str) -> ElementTree.Element:
    """An EPUB's package XML (container, OPF, NCX) through the hardened parser
    (``speech.text.xml_safe``): an upload is untrusted, and a DTD with entities in it would
    otherwise grow a small file into gigabytes. XHTML documents go through ``html.parser``,
    which expands no declared entity at all.

    The NCX's standard document type declaration is taken out first: EPUB 2 NCX files carry it
    (``<!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN" "...ncx-2005-1.dtd">``, Project
    Gutenberg's and Calibre's among them), it declares nothing and its DTD is never fetched.
    Any other DTD (an internal subset, another identifier) still reaches the parser and is
    refused (``bench/epub_shapes.py`` measured the real-world shapes)."""
    if name.endswith(".ncx"):
        data = _NCX_DOCTYPE.sub(lambda m: (m.group(1) or b"") + m.group(2), data, count=1)
    try:
        return parse_element(data, what=f"the EPUB's {name}")
    except (MalformedXml, UnsafeXml) as exc:
        raise SourceError(str(exc)) from None


def _resolve(base_dir: str, href: str) -> str:
    return posixpath.normpath(posixpath.join(base_dir, unquote(urlsplit(href).path)))


def _cover(archive: zipfile.ZipFile, opf: ElementTree.Element, opf_dir: str, manifest: dict[str, dict[str, str]]) -> bytes | None:
    """The cover image: EPUB 3's ``cover-image`` item, else EPUB 2's ``<meta name="cover">``; a
    JPEG or PNG by its bytes, within ``MAX_COVER_BYTES``, else none (a book without a cover plays)."""
    item = next((i for i in manifest.values() if "cover-image" in i.get("properties", "").split()), None)
    if item is None:
        meta = next((m for m in opf.iterfind("opf:metadata/opf:meta", _NS) if m.get("name") == "cover"), None)
        item = manifest.get(meta.get("content", "")) if meta is not None else None
    if item is None or not item.get("href"):
        return None
    try:
        info = archive.getinfo(_resolve(opf_dir, item["href"]))
    except KeyError:
        return None
    data = archive.read(info) if info.file_size <= MAX_COVER_BYTES else b""
    return data if cover_type(data) else None


def _toc_labels(archive: zipfile.ZipFile, opf_dir: str, manifest: dict[str, dict[str, str]], toc_id: str | None) -> dict[str, str]:
    """File -> the first table-of-contents label pointing into it."""
    labels: dict[str, str] = {}
    nav = next((item for item in manifest.values() if "nav" in item.get("properties", "").split()), None)
    if nav is not None:
        path = _resolve(opf_dir, nav["href"])
        parser = _NavLinks()
        parser.feed(_read(archive, path).decode("utf-8", errors="replace"))
        for href, label in parser.links:
            labels.setdefault(_resolve(posixpath.dirname(path), href), label)
    elif toc_id and toc_id in manifest:
        path = _resolve(opf_dir, manifest[toc_id]["href"])
        root = _xml(_read(archive, path), posixpath.basename(path))
        for point in root.iter(f"{{{_NS['ncx']}}}navPoint"):
            text = point.find("ncx:navLabel/ncx:text", _NS)
            content = point.find("ncx:content", _NS)
            if text is not None and text.text and content is not None and content.get("src"):
                labels.setdefault(_resolve(posixpath.dirname(path), content.get("src", "")), " ".join(text.text.split()))
    return labels


class _NavLinks(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str]] = []
        self._href: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "a":
            self._href = dict(attrs).get("href")
            self._text = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href:
            label = " ".join("".join(self._text).split())
            if label:
                self.links.append((self._href, label))
            self._href = None

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text.append(data)


_FRONT_MATTER: Final = re.compile(
    r"cover|title-?page|titlepage|copyright|colophon|contents|\btoc\b|licen[cs]e|pg-header|pg-footer|dedication|imprint",
    re.IGNORECASE,
)


def epub_to_book(data: bytes, *, skip_front_matter: bool = False) -> SourceText:
    """``skip_front_matter`` leaves out spine documents named or labelled like a cover, title page,
    contents, copyright or licence page (Project Gutenberg's header and footer included)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise SourceError("file is not a readable EPUB") from None
    with archive:
        container = _xml(_read(archive, "META-INF/container.xml"), "container.xml")
        rootfile = container.find("c:rootfiles/c:rootfile", _NS)
        if rootfile is None or not rootfile.get("full-path"):
            raise SourceError("the EPUB names no package document")
        opf_path = rootfile.get("full-path", "")
        opf_dir = posixpath.dirname(opf_path)
        opf = _xml(_read(archive, opf_path), posixpath.basename(opf_path))
        title = opf.findtext("opf:metadata/dc:title", default=None, namespaces=_NS)
        author = opf.findtext("opf:metadata/dc:creator", default=None, namespaces=_NS)
        manifest = {
            item.get("id", ""): dict(item.attrib) for item in opf.iterfind("opf:manifest/opf:item", _NS)
        }
        spine = opf.find("opf:spine", _NS)
        if spine is None:
            raise SourceError("the EPUB has no spine")
        labels = _toc_labels(archive, opf_dir, manifest, spine.get("toc"))
        cover = _cover(archive, opf, opf_dir, manifest)
        parts: list[str] = []
        chapters: list[GivenChapter] = []
        position = 0
        for ref in spine.iterfind("opf:itemref", _NS):
            item = manifest.get(ref.get("idref", ""))
            if item is None or ref.get("linear") == "no" or "html" not in item.get("media-type", ""):
                continue
            path = _resolve(opf_dir, item["href"])
            parser = _Text()
            parser.feed(_read(archive, path).decode("utf-8", errors="replace"))
            text = parser.result()
            if not text.strip():
                continue
            label = labels.get(path) or parser.first_heading
            if skip_front_matter and (_FRONT_MATTER.search(posixpath.basename(path)) or _FRONT_MATTER.search(label or "")):
                continue
            if label or not chapters:
                chapters.append({"title": label or (title or "Opening"), "start": position})
            parts.append(text)
            position += len(text) + 2
    if not parts:
        raise SourceError("the EPUB has no text")
    return SourceText(
        "\n\n".join(parts), chapters, (title or "").strip() or None, (author or "").strip() or None, cover
    )


def decode_text(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SourceError("file must be UTF-8 text") from None


_MD_NAMES: Final = re.compile(r"\.(md|markdown)$", re.IGNORECASE)


_SSML_NAMES: Final = re.compile(r"\.(ssml|xml)$", re.IGNORECASE)


def read_upload(filename: str, content_type: str | None, data: bytes, *, skip_front_matter: bool = False) -> SourceText:
    """An uploaded file as a book; the kind is told by the name's extension, else the media type.
    An SSML file (``.ssml``) is its document as text: the request reads it as SSML
    (``books.job_ssml``)."""
    name = (filename or "").lower()
    kind = (content_type or "").split(";")[0].strip().lower()
    if _SSML_NAMES.search(name) or kind == "application/ssml+xml":
        return SourceText(decode_text(data))
    if name.endswith(".epub") or kind == "application/epub+zip":
        return epub_to_book(data, skip_front_matter=skip_front_matter)
    if _MD_NAMES.search(name) or kind in ("text/markdown", "text/x-markdown"):
        return SourceText(markdown_to_text(decode_text(data)))
    if name.endswith(".txt") or kind.startswith("text/") or not name:
        return SourceText(decode_text(data))
    raise SourceError("file must be a .txt, .md, .ssml or .epub file")
