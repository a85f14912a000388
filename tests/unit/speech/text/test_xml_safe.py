from __future__ import annotations

import tracemalloc

import pytest

from speech.errors import MalformedXml, UnsafeXml
from speech.text.xml_safe import XmlLimits, parse_element, parse_nodes
from tests.fixtures.hostile_xml import ATTACKS, Builder

SPEAK = 'version="1.0" xmlns="http://www.w3.org/2001/10/synthesis"'


@pytest.mark.parametrize(("name", "build"), ATTACKS, ids=[name for name, _ in ATTACKS])
def test_every_attack_is_refused_without_growing(name: str, build: Builder) -> None:
    document = build("speak", SPEAK)
    tracemalloc.start()
    try:
        with pytest.raises(UnsafeXml) as caught:
            parse_nodes(document, what="SSML")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(caught.value).startswith("SSML refused")
    # bounded memory: a few times the document, never the expansion (billion laughs is 3 GB)
    assert peak < 20 * len(document) + 2_000_000


@pytest.mark.parametrize(("name", "build"), ATTACKS, ids=[name for name, _ in ATTACKS])
def test_the_element_tree_flavour_refuses_them_too(name: str, build: Builder) -> None:
    with pytest.raises(UnsafeXml):
        parse_element(build("package", ""), what="OPF", limits=XmlLimits(max_bytes=2_000_000))


def test_the_refusal_names_where() -> None:
    with pytest.raises(UnsafeXml, match=r"refused at line 2, column \d+: a DTD"):
        parse_nodes('<?xml version="1.0"?>\n<!DOCTYPE speak [<!ENTITY a "b">]><speak/>', what="SSML")
    with pytest.raises(UnsafeXml, match="nested deeper than 3"):
        parse_nodes("<a><b><c><d/></c></b></a>", what="SSML", limits=XmlLimits(max_depth=3))


def test_a_document_over_the_byte_cap_is_not_parsed() -> None:
    with pytest.raises(UnsafeXml, match="larger than 100 bytes"):
        parse_nodes("<a>" + "x" * 200 + "</a>", what="SSML", limits=XmlLimits(max_bytes=100))


def test_undeclared_entities_and_broken_xml_are_malformed_with_a_position() -> None:
    with pytest.raises(MalformedXml, match=r"line 1, column 4: undefined entity"):
        parse_nodes("<a>&lol;</a>", what="SSML")
    with pytest.raises(MalformedXml, match=r"line 2, column 3: mismatched tag"):
        parse_nodes("<a>\n</b>", what="SSML")


def test_nodes_keep_mixed_content_and_positions() -> None:
    root = parse_nodes('<speak xmlns="urn:x">Hi <break time="1s"/> there\n  <s>you</s></speak>', what="SSML")
    assert root.tag == "{urn:x}speak" and root.local == "speak"
    kinds = [c if isinstance(c, str) else c.local for c in root.children]
    assert kinds == ["Hi ", "break", " there\n  ", "s"]
    brk, s = root.children[1], root.children[3]
    assert not isinstance(brk, str) and (brk.line, brk.column, brk.attrib) == (1, 25, {"time": "1s"})
    assert not isinstance(s, str) and (s.line, s.column) == (2, 3)
    assert root.text() == "Hi  there\n  you"


def test_ordinary_entities_still_work() -> None:
    assert parse_nodes("<a>Tom &amp; Jerry &#233;</a>", what="x").text() == "Tom & Jerry é"
