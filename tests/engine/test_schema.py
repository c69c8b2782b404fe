"""engine/schema.py: the one JSON-LD walker, the `@type` readers (parsed, text, bytes) and the
readers built on them."""

from __future__ import annotations

import json
from typing import Any

from readerproxy.engine.learn.blocks import json_ld_text, json_ld_types
from readerproxy.engine.parse.document import parse
from readerproxy.engine.schema import (
    bytes_types,
    has_type,
    ld_types,
    objects,
    page_objects,
    text_types,
    type_name,
    walk,
)

PAGE = {
    "@context": "https://schema.org",
    "@graph": [
        {"@type": "WebPage", "name": "page", "mainEntity": {"@type": "Product", "name": "own"}},
        {
            "@type": "Product",
            "name": "main",
            "isRelatedTo": [{"@type": "Product", "name": "related", "offers": {"@type": "Offer"}}],
        },
    ],
}


def _names(found: list[dict[str, Any]]) -> list[Any]:
    return [item.get("name", item.get("@type")) for item in found]


def test_every_object_in_document_order_an_object_before_what_it_holds() -> None:
    found = _names(list(objects(PAGE)))
    assert found == [None, "page", "own", "main", "related", "Offer"]


def test_follow_reads_only_the_keys_named_in_their_order() -> None:
    value = {"mainEntity": {"name": "entity"}, "@graph": [{"name": "member"}], "other": {"name": "no"}}
    assert _names(list(objects(value, ("@graph", "mainEntity"))))[1:] == ["member", "entity"]
    assert _names(list(objects(value, ("mainEntity", "@graph"))))[1:] == ["entity", "member"]
    # several objects in a row, each with the followed keys: each object's own members are read
    many = [{"@graph": [{"name": f"a{i}"}], "mainEntity": {"name": f"b{i}"}} for i in range(3)]
    assert [n for n in _names(list(objects(many, ("@graph", "mainEntity")))) if n] == [
        "a0",
        "b0",
        "a1",
        "b1",
        "a2",
        "b2",
    ]


def test_max_depth_counts_lists_and_keys() -> None:
    nested: Any = {"name": "leaf"}
    for _ in range(5):
        nested = {"child": [nested]}  # each wrapper: one key and one list, two levels
    assert "leaf" in _names(list(objects(nested, max_depth=10)))
    assert "leaf" not in _names(list(objects(nested, max_depth=9)))


def test_marks_say_whose_an_object_is() -> None:
    marked = [(mark, node.get("name")) for mark, node in walk(PAGE, marks={"isRelatedTo"})]
    assert ("", "main") in marked and ("", "own") in marked
    assert ("isRelatedTo", "related") in marked and ("isRelatedTo", None) in marked  # the offer too


def test_members_each_before_the_values_inside_it() -> None:
    value = {"a": {"text": "inner"}, "text": "outer"}
    assert [v for k, v in walk(value, members=True) if k == "text"] == ["inner", "outer"]


def test_no_recursion_error_at_any_depth() -> None:
    deep: Any = {"name": "bottom"}
    for _ in range(5000):
        deep = [deep]
    assert _names(list(objects(deep))) == ["bottom"]


def test_type_readers() -> None:
    item = {"@type": ["https://schema.org/NewsArticle", 5, "Comment"]}
    assert ld_types(item) == ["NewsArticle", "Comment"]
    assert has_type(item, {"comment"}) and not has_type(item, {"product"})
    assert ld_types({"name": "untyped"}) == []
    assert type_name("https://schema.org/Product/") == "product"
    assert type_name("schema:Product") == "product"


def test_the_text_and_bytes_readers_read_the_same_types() -> None:
    raw = '{"@type": "NewsArticle", "about": {"@type": ["schema:Product", "Thing"]}, broken'
    assert text_types(raw) == ["NewsArticle", "schema:Product", "Thing"]
    assert bytes_types(raw.encode()) == [type_name(name) for name in text_types(raw)]
    # beyond ASCII, a byte reads as U+FFFD, the limits count bytes
    assert bytes_types('{"@type": "Café"}'.encode()) == ["caf\ufffd\ufffd"]
    assert text_types('{"@type": "' + "x" * 81 + '"}') == []


def _page(*scripts: object) -> str:
    body = "".join(f'<script type="application/ld+json">{json.dumps(s)}</script>' for s in scripts)
    return f"<html><head>{body}</head><body><p>text</p></body></html>"


def test_page_objects_follow_graphs_and_lists() -> None:
    doc = parse(_page(PAGE, [{"@type": "Person", "name": "p"}]), "https://example.com/")
    assert _names(list(page_objects(doc))) == [None, "page", "main", "p"]  # not under mainEntity


def test_block_features_read_types_and_text_through_the_shared_readers() -> None:
    words = " ".join(f"word{i}" for i in range(60))
    doc = parse(
        _page({"@type": ["https://schema.org/BlogPosting", "Web Page"], "articleBody": words}),
        "https://example.com/",
    )
    assert json_ld_types(doc) == {"blogposting"}  # "Web Page" is no type name the model knows
    assert json_ld_text(doc) == words
