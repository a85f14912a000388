"""Which EPUB reader handles more of the shapes real books come in: lector's own
(``books.sources.epub_to_book``, the standard library behind the hardened XML parser) or
``ebooklib`` (with the same XHTML-to-text step, since ebooklib hands back each document's bytes
and leaves the text to its caller).

    PYTHONPATH=/path/to/ebooklib:. python -m bench.epub_shapes

ebooklib is not a dependency of lector: install it anywhere apart (``pip install --target DIR
ebooklib==0.20``) and put that folder on ``PYTHONPATH``; without it only lector's reader runs.
Each shape is a small book built here the way the named tools or shops lay books out; a reader
*handles* a shape when it reads the book without an error, with both chapters' text, the
chapter titles of the table of contents and (where the book has one) the cover.
"""

from __future__ import annotations

import importlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from books.errors import SourceError
from books.sources import _Text, epub_to_book
from speech.audio.m4b import cover_type
from tests.fixtures.epub import CHAPTERS, CONTAINER, build_epub, png, zip_epub

NCX_DOCTYPE = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN" '
               '"http://www.daisy.org/z3986/2005/ncx-2005-1.dtd">\n')
XHTML_DOCTYPE = ('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" '
                 '"http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">\n')


def _opf(items: str, spine: str, *, version: int = 2, toc: bool = True, meta: str = "") -> str:
    toc_attr = ' toc="ncx"' if toc else ""
    return (f'<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="{version}.0" '
            'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>T</dc:title>'
            f'<dc:creator>A</dc:creator>{meta}</metadata><manifest>{items}</manifest>'
            f"<spine{toc_attr}>{spine}</spine></package>")


def _ncx(hrefs: list[str], doctype: str = "") -> str:
    points = "".join(f'<navPoint id="p{i}" playOrder="{i + 1}"><navLabel><text>{name}</text></navLabel>'
                     f'<content src="{href}"/></navPoint>' for i, ((name, _), href) in enumerate(zip(CHAPTERS, hrefs, strict=True)))
    return f'{doctype}<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><navMap>{points}</navMap></ncx>'


def _xhtml(i: int, doctype: str = "", body_extra: str = "") -> str:
    name, body = CHAPTERS[i]
    return (f'{doctype}<html xmlns="http://www.w3.org/1999/xhtml"><head><title>{name}</title></head>'
            f"<body><h1>Chapter {i + 1}</h1><p>{body}{body_extra}</p></body></html>")


def _book(files: dict[str, str | bytes], container: str = CONTAINER) -> bytes:
    if container == CONTAINER:
        return zip_epub(files)
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
        z.writestr("META-INF/container.xml", container)
        for name, data in files.items():
            z.writestr(name, data)
    return buffer.getvalue()


def _epub2(*, ncx_doctype: str = "", xhtml_doctype: str = "", names: tuple[str, str] = ("text/c0.xhtml", "text/c1.xhtml"),
           hrefs: tuple[str, str] | None = None, extra_items: str = "", extra_spine: str = "", cover: bool = True) -> bytes:
    hrefs = hrefs or names
    items = "".join(f'<item id="c{i}" href="{h}" media-type="application/xhtml+xml"/>' for i, h in enumerate(hrefs))
    items += '<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>' + extra_items
    meta = ""
    files: dict[str, str | bytes] = {}
    if cover:
        items += '<item id="cover-img" href="images/cover.png" media-type="image/png"/>'
        meta = '<meta name="cover" content="cover-img"/>'
        files["OEBPS/images/cover.png"] = png()
    files["OEBPS/content.opf"] = _opf(items, extra_spine + '<itemref idref="c0"/><itemref idref="c1"/>', meta=meta)
    files["OEBPS/toc.ncx"] = _ncx(list(hrefs), ncx_doctype)
    for i, name in enumerate(names):
        files[f"OEBPS/{name}"] = _xhtml(i, xhtml_doctype)
    return _book(files)


def _root_opf() -> bytes:
    """The package document at the zip's root (no OEBPS folder), as some shops ship."""
    container = CONTAINER.replace("OEBPS/content.opf", "content.opf")
    items = "".join(f'<item id="c{i}" href="c{i}.html" media-type="application/xhtml+xml"/>' for i in range(2))
    items += '<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>'
    files: dict[str, str | bytes] = {
        "content.opf": _opf(items, '<itemref idref="c0"/><itemref idref="c1"/>'),
        "toc.ncx": _ncx(["c0.html", "c1.html"]),
        "c0.html": _xhtml(0), "c1.html": _xhtml(1),
    }
    return _book(files, container)


def _epub3_ncx_only() -> bytes:
    """EPUB 3 in name, EPUB 2 inside: no nav document, an NCX (older converters)."""
    items = "".join(f'<item id="c{i}" href="text/c{i}.xhtml" media-type="application/xhtml+xml"/>' for i in range(2))
    items += '<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>'
    return _book({"OEBPS/content.opf": _opf(items, '<itemref idref="c0"/><itemref idref="c1"/>', version=3),
                  "OEBPS/toc.ncx": _ncx(["text/c0.xhtml", "text/c1.xhtml"]),
                  "OEBPS/text/c0.xhtml": _xhtml(0), "OEBPS/text/c1.xhtml": _xhtml(1)})


def _nav_fragments() -> bytes:
    """EPUB 3 with a nested nav whose links carry fragments (``c0.xhtml#start``)."""
    book = build_epub(3, cover=png())
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(book)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "OEBPS/nav.xhtml":
                data = data.replace(b'.xhtml"', b'.xhtml#start"').replace(b"<ol>", b"<ol><li><span>Part</span><ol>", 1)
                data = data.replace(b"</ol></nav>", b"</ol></li></ol></nav>")
            dst.writestr(info, data)
    return out.getvalue()


SHAPES: dict[str, Callable[[], bytes]] = {
    "EPUB 3, nav, cover-image (the tests' book)": lambda: build_epub(3, cover=png()),
    "EPUB 2, NCX, meta cover (the tests' book)": lambda: build_epub(2, cover=png()),
    "EPUB 2, NCX with its DOCTYPE (Project Gutenberg, Calibre)": lambda: _epub2(ncx_doctype=NCX_DOCTYPE),
    "EPUB 2, XHTML 1.1 DOCTYPE in every document": lambda: _epub2(xhtml_doctype=XHTML_DOCTYPE),
    "file names with spaces, hrefs percent-encoded": lambda: _epub2(
        names=("Text/Chapter 1.xhtml", "Text/Chapter 2.xhtml"), hrefs=("Text/Chapter%201.xhtml", "Text/Chapter%202.xhtml")),
    "package document at the zip's root, .html documents": _root_opf,
    "manifest names a file the zip lacks (a font)": lambda: _epub2(
        extra_items='<item id="font" href="fonts/missing.otf" media-type="font/otf"/>'),
    "spine names an id the manifest lacks": lambda: _epub2(extra_spine='<itemref idref="ghost"/>'),
    "EPUB 3 with only an NCX": _epub3_ncx_only,
    "EPUB 3 nav nested, links with fragments": _nav_fragments,
}


@dataclass
class Outcome:
    ok: bool
    note: str


def _judge(text: str, titles: list[str], cover: bytes | None, wants_cover: bool) -> Outcome:
    missing = [name for name, body in CHAPTERS if body.split()[1] not in text]
    wrong_titles = titles[-2:] != [name for name, _ in CHAPTERS]
    no_cover = wants_cover and not cover
    notes = [f"text of {missing}" for _ in [0] if missing] + ["chapter titles " + repr(titles)] * wrong_titles + ["no cover"] * no_cover
    return Outcome(not notes, "; ".join(notes) or "ok")


def lector_reads(data: bytes, wants_cover: bool) -> Outcome:
    try:
        book = epub_to_book(data)
    except SourceError as exc:
        return Outcome(False, f"refused: {exc}")
    return _judge(book.text, [c["title"] for c in book.chapters], book.cover, wants_cover)


def ebooklib_reads(data: bytes, wants_cover: bool, epub: Any, ebooklib: Any) -> Outcome:
    with tempfile.NamedTemporaryFile(suffix=".epub", delete=False) as f:
        f.write(data)
    try:
        book = epub.read_epub(f.name, {"ignore_ncx": False})
        texts = []
        for idref, _ in book.spine:
            item = book.get_item_with_id(idref)
            if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT:
                continue
            parser = _Text()
            parser.feed(item.get_content().decode("utf-8", errors="replace"))
            texts.append(parser.result())
        titles: list[str] = []

        def walk(entries: Any) -> None:
            for entry in entries:
                if isinstance(entry, tuple):
                    walk(entry[1])
                else:
                    titles.append(entry.title)

        walk(book.toc)
        covers = [i for i in book.get_items() if i.get_type() in (ebooklib.ITEM_COVER, ebooklib.ITEM_IMAGE)]
        cover = next((i.get_content() for i in covers if cover_type(i.get_content())), None)
        return _judge("\n".join(texts), titles, cover, wants_cover)
    except Exception as exc:  # noqa: BLE001 - whatever ebooklib raises is the finding
        return Outcome(False, f"error: {type(exc).__name__}: {str(exc)[:80]}")
    finally:
        os.unlink(f.name)


def main() -> None:
    try:
        ebooklib: Any = importlib.import_module("ebooklib")
        epub: Any = importlib.import_module("ebooklib.epub")
        version = getattr(ebooklib, "VERSION", "?")
    except ImportError:
        ebooklib = epub = None
        version = "not installed"
    print(f"ebooklib {version}")  # noqa: T201
    handled = {"lector": 0, "ebooklib": 0}
    for name, build in SHAPES.items():
        data = build()
        wants_cover = "cover" in name or "DOCTYPE" in name or "spaces" in name or "font" in name or "spine" in name
        mine = lector_reads(data, wants_cover)
        handled["lector"] += mine.ok
        line = f"{name}: lector {'yes' if mine.ok else 'NO'} ({mine.note})"
        if epub is not None:
            theirs = ebooklib_reads(data, wants_cover, epub, ebooklib)
            handled["ebooklib"] += theirs.ok
            line += f"; ebooklib {'yes' if theirs.ok else 'NO'} ({theirs.note})"
        print(line)  # noqa: T201
    print(f"RESULT shapes {len(SHAPES)}: lector handles {handled['lector']}"  # noqa: T201
          + (f", ebooklib handles {handled['ebooklib']}" if epub is not None else ""))


if __name__ == "__main__":
    main()
