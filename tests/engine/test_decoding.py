"""Every charset path of decode_html, and broken bytes that must never crash."""

from __future__ import annotations

import codecs
import gzip

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from readerproxy.engine.parse.decoding import (
    DecompressionError,
    charset_from_content_type,
    charset_from_meta,
    decode_html,
    gunzip_capped,
    maybe_gunzip,
    normalize_encoding,
)

TEXT = "<p>Grüße aus Köln — naïve café</p>"


@pytest.mark.parametrize(
    ("bom", "codec"),
    [
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ],
)
def test_bom_wins_over_everything(bom: bytes, codec: str) -> None:
    data = bom + TEXT.encode(codec)
    decoded = decode_html(data, content_type="text/html; charset=iso-8859-1")
    assert decoded.text == TEXT
    assert decoded.source == "bom"


def test_http_charset_is_used() -> None:
    decoded = decode_html(TEXT.encode("cp1252"), content_type="text/html; charset=windows-1252")
    assert decoded.text == TEXT
    assert (decoded.encoding, decoded.source) == ("cp1252", "http")


def test_meta_charset_is_used_without_http_charset() -> None:
    page = '<html><head><meta charset="iso-8859-15"></head><body><p>Preis: 5 €</p></body></html>'
    decoded = decode_html(page.encode("iso-8859-15"))
    assert "5 €" in decoded.text
    assert decoded.source == "meta"


def test_meta_http_equiv_is_used() -> None:
    page = '<meta http-equiv="Content-Type" content="text/html; charset=koi8-r"><p>Привет мир</p>'
    decoded = decode_html(page.encode("koi8-r"))
    assert "Привет мир" in decoded.text
    assert decoded.source == "meta"


def test_wrong_declared_charset_falls_through() -> None:
    # Declared UTF-8 but the bytes are windows-1252: UTF-8 cannot decode them, so it is not believed.
    data = ("<p>" + "café crème brûlée " * 20 + "</p>").encode("cp1252")
    decoded = decode_html(data, content_type="text/html; charset=utf-8")
    assert "café crème brûlée" in decoded.text
    assert decoded.source in ("detector", "fallback")


def test_undeclared_utf8_is_recognised() -> None:
    decoded = decode_html(TEXT.encode("utf-8"))
    assert decoded.text == TEXT


def test_detector_for_undeclared_legacy_encoding() -> None:
    data = ("<p>" + "Съешь же ещё этих мягких французских булок, да выпей чаю. " * 10 + "</p>").encode(
        "cp1251"
    )
    decoded = decode_html(data)
    assert "французских булок" in decoded.text
    assert decoded.source == "detector"


def test_unknown_labels_are_ignored() -> None:
    assert normalize_encoding("no-such-charset") is None
    assert charset_from_content_type("text/html; charset=bogus") is None
    assert charset_from_content_type(None) is None
    assert normalize_encoding("latin1") == "cp1252"  # the HTML standard's mapping
    assert charset_from_meta(b"<meta charset='utf-16'>") == "utf-8"  # HTML: utf-16 in <meta> means utf-8


@settings(max_examples=200, deadline=None)
@given(
    st.binary(max_size=2000),
    st.one_of(
        st.none(),
        st.sampled_from(["text/html; charset=utf-8", "text/html; charset=shift_jis", "text/html; charset=x"]),
    ),
)
def test_arbitrary_bytes_never_crash(data: bytes, content_type: str | None) -> None:
    decoded = decode_html(data, content_type)
    assert isinstance(decoded.text, str)


def test_gzip_input_is_accepted_and_bombs_are_refused() -> None:
    page = TEXT.encode()
    assert maybe_gunzip(gzip.compress(page)) == page
    assert maybe_gunzip(page) == page
    bomb = gzip.compress(b"\0" * (5 * 1024 * 1024))
    with pytest.raises(DecompressionError):
        gunzip_capped(bomb, max_size=1024 * 1024)
    with pytest.raises(DecompressionError):
        gunzip_capped(b"\x1f\x8b\x08\x00garbage")


@pytest.mark.parametrize("text", ["<p>Café crème</p>", "Café crème", "Déjà vu à côté", "Naïve façade — £5"])
def test_latin1_bytes_labelled_utf8_fall_back_to_windows_1252(text: str) -> None:
    decoded = decode_html(text.encode("cp1252"), "text/html; charset=utf-8")
    assert decoded.text == text and decoded.encoding == "cp1252"


def test_cyrillic_labelled_utf8_is_not_taken_for_windows_1252() -> None:
    decoded = decode_html("Привет мир, как дела".encode("cp1251"), "text/html; charset=utf-8")
    assert decoded.text == "Привет мир, как дела"
