from __future__ import annotations

import io
import zipfile

import pytest

from books.sources import SourceError, epub_to_book, read_upload
from tests.fixtures.epub import CHAPTERS, build_epub, png, zip_epub
from tests.fixtures.hostile_xml import ATTACKS, Builder

OPF = """<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:title>The Test Book</dc:title><dc:creator>Ann Author</dc:creator>
  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="cover" href="cover.xhtml" media-type="application/xhtml+xml"/>
    <item id="c1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/>
    <item id="c2" href="text/ch2.xhtml" media-type="application/xhtml+xml"/>
    <item id="img" href="cover.png" media-type="image/png"/>
  </manifest>
  <spine><itemref idref="cover"/><itemref idref="c1"/><itemref idref="c2"/></spine>
</package>"""

NAV = """<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><body>
<nav epub:type="toc"><ol><li><a href="text/ch1.xhtml">The First Chapter</a></li>
<li><a href="text/ch2.xhtml#start">The Second Chapter</a></li></ol></nav></body></html>"""


def _page(body: str) -> str:
    return f'<html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title><style>p {{}}</style></head><body>{body}</body></html>'


def _epub(files: dict[str, str]) -> bytes:
    return zip_epub(files)


BOOK = {
    "OEBPS/content.opf": OPF,
    "OEBPS/nav.xhtml": NAV,
    "OEBPS/cover.xhtml": _page('<p>Cover of the book</p><img src="cover.png"/>'),
    "OEBPS/text/ch1.xhtml": _page("<h1>Chapter One</h1><p>It was a bright &amp; cold day.</p><p>The clocks\n   struck.</p>"),
    "OEBPS/text/ch2.xhtml": _page("<h2 id='start'>Chapter Two</h2><p>Rain fell.<br/>Then it stopped.</p>"),
}


def test_epub_spine_becomes_text_and_chapters_titled_by_the_toc() -> None:
    book = epub_to_book(_epub(BOOK))
    assert (book.title, book.author) == ("The Test Book", "Ann Author")
    assert book.text.split("\n\n") == [
        "Cover of the book", "Chapter One", "It was a bright & cold day.", "The clocks struck.",
        "Chapter Two", "Rain fell.", "Then it stopped.",
    ]
    titles = [c["title"] for c in book.chapters]
    assert titles == ["The Test Book", "The First Chapter", "The Second Chapter"]
    assert book.text[book.chapters[1]["start"] :].startswith("Chapter One")
    assert book.text[book.chapters[2]["start"] :].startswith("Chapter Two")


def test_epub_front_matter_is_left_out_when_asked() -> None:
    book = epub_to_book(_epub(BOOK), skip_front_matter=True)
    assert not book.text.startswith("Cover")
    assert [c["title"] for c in book.chapters] == ["The First Chapter", "The Second Chapter"]
    assert book.chapters[0]["start"] == 0


def test_epub2_ncx_titles() -> None:
    opf = OPF.replace('<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>',
                      '<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>')
    opf = opf.replace("<spine>", '<spine toc="ncx">')
    ncx = """<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/"><navMap>
      <navPoint id="a"><navLabel><text>Opening Chapter</text></navLabel><content src="text/ch1.xhtml"/></navPoint>
    </navMap></ncx>"""
    files = {**BOOK, "OEBPS/content.opf": opf, "OEBPS/toc.ncx": ncx}
    files.pop("OEBPS/nav.xhtml")
    book = epub_to_book(_epub(files))
    # ch2 has no TOC entry: its first heading names it
    assert [c["title"] for c in book.chapters] == ["The Test Book", "Opening Chapter", "Chapter Two"]


def test_bad_uploads_say_what_is_wrong() -> None:
    with pytest.raises(SourceError, match="EPUB"):
        read_upload("book.epub", None, b"not a zip")
    with pytest.raises(SourceError, match="UTF-8"):
        read_upload("book.txt", "text/plain", b"\xff\xfe\xfa")
    with pytest.raises(SourceError, match=r"\.txt, \.md, \.ssml or \.epub"):
        read_upload("book.pdf", "application/pdf", b"%PDF")


def test_text_and_markdown_uploads() -> None:
    assert read_upload("a.txt", "text/plain", "\ufeffHello.".encode()).text == "Hello."
    md = read_upload("a.md", None, b"# Title\n\nSome *emphasis* here.").text
    assert md == "# Title\n\nSome emphasis here."


@pytest.mark.parametrize(("name", "build"), ATTACKS, ids=[name for name, _ in ATTACKS])
@pytest.mark.parametrize("member", ["META-INF/container.xml", "OEBPS/content.opf"])
def test_a_hostile_epub_is_a_source_error(name: str, build: Builder, member: str) -> None:
    files = dict(BOOK)
    files[member] = build("package", 'xmlns="http://www.idpf.org/2007/opf"')
    data = _epub(files) if member != "META-INF/container.xml" else _epub_with_container(files, files[member])
    with pytest.raises(SourceError, match="refused"):
        epub_to_book(data)


def _epub_with_container(files: dict[str, str], container: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
        z.writestr("META-INF/container.xml", container)
        for name, text in files.items():
            if name != "META-INF/container.xml":
                z.writestr(name, text)
    return buffer.getvalue()


@pytest.mark.parametrize("version", [2, 3])
def test_an_epub_cover_and_table_of_contents_are_read(version: int) -> None:
    cover = png()
    book = epub_to_book(build_epub(version, cover=cover))
    assert book.cover == cover
    assert [c["title"] for c in book.chapters] == [name for name, _ in CHAPTERS]
    assert (book.title, book.author) == ("A Cast Book", "Ann Author")
    assert epub_to_book(build_epub(version)).cover is None


def test_a_cover_that_is_not_an_image_is_left_out() -> None:
    data = build_epub(3, cover=b"<svg>not a raster image</svg>")
    assert epub_to_book(data).cover is None


NCX_DOCTYPE = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN" '
               '"http://www.daisy.org/z3986/2005/ncx-2005-1.dtd">\n')


def _with_ncx(ncx_head: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(build_epub(2)), "r") as src, zipfile.ZipFile(buffer, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith(".ncx"):
                data = ncx_head.encode() + data
            dst.writestr(info, data)
    return buffer.getvalue()


def test_an_ncx_with_its_standard_doctype_is_read() -> None:
    """Project Gutenberg's and Calibre's EPUB 2 books open their NCX so."""
    book = epub_to_book(_with_ncx(NCX_DOCTYPE))
    assert [c["title"] for c in book.chapters] == [name for name, _ in CHAPTERS]


@pytest.mark.parametrize("head", [
    NCX_DOCTYPE.replace('.dtd">', '.dtd" [<!ENTITY x "y">]>'),
    '<!DOCTYPE ncx SYSTEM "http://127.0.0.1:9/evil.dtd">',
    '<!DOCTYPE ncx [<!ENTITY secret SYSTEM "file:///etc/passwd">]>',
], ids=["internal-subset", "other-dtd", "entity"])
def test_any_other_doctype_in_an_ncx_is_still_refused(head: str) -> None:
    with pytest.raises(SourceError, match="refused"):
        epub_to_book(_with_ncx(head))
