"""Downloads: one response shape for the reading list's files and the proxy's CA certificate."""

from __future__ import annotations

from urllib.parse import unquote

from readerproxy.web.download import attachment, attachment_headers, content_disposition


def test_a_plain_ascii_name_is_sent_as_it_is() -> None:
    assert content_disposition("reading-list.epub") == 'attachment; filename="reading-list.epub"'
    assert content_disposition("readerproxy-ca.pem") == 'attachment; filename="readerproxy-ca.pem"'


def test_a_name_in_another_script_gets_an_ascii_fallback_and_the_exact_name() -> None:
    value = content_disposition("über-uns.md")
    fallback, exact = value.removeprefix("attachment; ").split("; ")
    assert fallback == 'filename="uber-uns.md"'
    assert exact.startswith("filename*=UTF-8''") and unquote(exact.split("''", 1)[1]) == "über-uns.md"
    assert 'filename="download.epub"' in content_disposition("ωραία-μέρα.epub")


def test_nothing_in_a_name_can_break_out_of_the_header_value() -> None:
    for name in ('a"; filename="evil.exe', "line\r\nSet-Cookie: x=1.md", "back\\slash.html"):
        value = content_disposition(name)
        assert "\r" not in value and "\n" not in value
        fallback = value.split("; ")[1]
        assert fallback.count('"') == 2 and "\\" not in fallback and ";" not in fallback.strip(";")
        assert all(ord(ch) < 128 for ch in value)


def test_every_download_is_not_stored_and_not_sniffed() -> None:
    headers = dict(attachment_headers("application/x-pem-file", "ca.pem"))
    assert headers == {
        "Content-Type": "application/x-pem-file",
        "Content-Disposition": 'attachment; filename="ca.pem"',
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
    }
    response = attachment(b"book", "application/epub+zip", "list.epub")
    assert response.body == b"book" and response.headers["Cache-Control"] == "no-store"
    assert response.content_type == "application/epub+zip"
