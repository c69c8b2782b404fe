"""Bytes to text, never crashing: BOM, HTTP charset, <meta>, detector, then UTF-8 with replacement.

The order follows the HTML standard's encoding sniffing algorithm (BOM first, then the transport
layer, then a pre-scan of the first bytes for <meta charset>), with charset-normalizer standing in
for the browser's frequency-based detector. A declared charset that cannot decode the bytes is
treated as wrong and the next source is tried, so a page that lies about its charset still reads.
"""

from __future__ import annotations

import codecs
import re
import zlib
from dataclasses import dataclass

PRESCAN_BYTES = 4096
GZIP_MAGIC = b"\x1f\x8b"
DEFAULT_MAX_DECOMPRESSED = 64 * 1024 * 1024

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_CHARSET_PARAM = re.compile(rb"""charset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]+)""", re.I)
_META_TAG = re.compile(rb"<meta\b[^>]*>", re.I)
_HTTP_EQUIV = re.compile(rb"""http-equiv\s*=\s*["']?\s*content-type""", re.I)
_CONTENT_ATTR = re.compile(rb"""content\s*=\s*(["'])(.*?)\1""", re.I | re.S)
_META_CHARSET = re.compile(rb"""\bcharset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]+)""", re.I)


_LATIN_SINGLE_BYTE = frozenset(
    {
        "cp1250",
        "cp1252",
        "iso8859-1",
        "cp1254",
        "cp1257",
        "iso8859-2",
        "iso8859-15",
        "latin-1",
        "mac-roman",
        "iso8859-3",
        "iso8859-4",
        "iso8859-9",
        "iso8859-10",
        "iso8859-13",
        "iso8859-14",
        "iso8859-16",
        "cp850",
        "cp437",
        "mac-latin2",
    }
)


class DecompressionError(ValueError):
    """Compressed input that is corrupt or expands beyond the allowed size."""


class DecompressionTooLarge(DecompressionError):
    """Compressed input that expands beyond the allowed size."""


@dataclass(frozen=True, slots=True)
class Decoded:
    """Text of a page and how its encoding was decided."""

    text: str
    encoding: str
    source: str  # "bom" | "http" | "meta" | "utf-8" | "detector" | "fallback"


def normalize_encoding(label: str | bytes | None) -> str | None:
    """Python codec name for a charset label, or None if unknown; labels per the WHATWG table's spirit."""
    if not label:
        return None
    if isinstance(label, bytes):
        label = label.decode("ascii", "ignore")
    label = label.strip().strip("\"'").lower()
    # The HTML standard maps these labels to supersets; browsers never use the strict codecs.
    aliases = {
        "iso-8859-1": "cp1252",
        "latin1": "cp1252",
        "latin-1": "cp1252",
        "us-ascii": "cp1252",
        "ascii": "cp1252",
        "iso-8859-9": "cp1254",
        "tis-620": "cp874",
        "gb2312": "gb18030",
        "gbk": "gb18030",
        "x-sjis": "shift_jis",
        "utf8": "utf-8",
        "unicode": "utf-16-le",
        "x-user-defined": "cp1252",
    }
    label = aliases.get(label, label)
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    if name in ("utf-16", "utf-32"):  # a <meta> can't honestly declare these; HTML says use UTF-8
        return "utf-8"
    return name


def charset_from_content_type(content_type: str | None) -> str | None:
    """The charset parameter of a Content-Type header value, normalised."""
    if not content_type:
        return None
    match = _CHARSET_PARAM.search(content_type.encode("latin-1", "ignore"))
    return normalize_encoding(match.group(1)) if match else None


def charset_from_meta(head: bytes) -> str | None:
    """<meta charset> or <meta http-equiv="Content-Type" content="…charset=…"> in the first bytes."""
    for tag_match in _META_TAG.finditer(head[:PRESCAN_BYTES]):
        tag = tag_match.group(0)
        content = _CONTENT_ATTR.search(tag)
        if _HTTP_EQUIV.search(tag) and content:
            found = _META_CHARSET.search(content.group(2))
        else:
            found = _META_CHARSET.search(tag)
        if found:
            encoding = normalize_encoding(found.group(1))
            if encoding:
                return encoding
    return None


def _try(data: bytes, encoding: str) -> str | None:
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None


def _detect(data: bytes) -> str | None:
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # pragma: no cover - it is a declared dependency
        return None
    results = from_bytes(data[:200_000])
    best = results.best()
    if best is None:
        return None
    encoding = normalize_encoding(best.encoding)
    # Single-byte Latin code pages are often indistinguishable; like browsers in Western locales,
    # prefer windows-1252 when the detector lists it as a candidate.
    candidates = {normalize_encoding(match.encoding) for match in results}
    if encoding in _LATIN_SINGLE_BYTE and "cp1252" in candidates:
        return "cp1252"
    return encoding


#: Non-letters that Western text in windows-1252 commonly has above ASCII.
_CP1252_PUNCTUATION = frozenset("–—‘’‚“”„…€£¥©®°±·«»×÷§¶•™¡¿¢ºª¼½¾\u00a0")


def _plausible_cp1252(data: bytes) -> str | None:
    """The text if `data` reads as windows-1252 whose non-ASCII characters are nearly all letters or
    common punctuation, and a minority of its letters (Western text has mostly ASCII letters; Cyrillic
    or Greek read as windows-1252 has almost none): Latin-1 mislabelled, typically as UTF-8."""
    text = _try(data, "cp1252")
    if text is None:
        return None
    high = [ch for ch in text if ord(ch) > 127]
    if not high:
        return None
    plausible = sum(1 for ch in high if ch.isalpha() or ch in _CP1252_PUNCTUATION)
    letters = sum(1 for ch in text if ch.isalpha())
    high_letters = sum(1 for ch in high if ch.isalpha())
    return text if plausible >= 0.9 * len(high) and high_letters <= 0.5 * letters else None


def decode_html(data: bytes, content_type: str | None = None) -> Decoded:
    """Decode page bytes: BOM, HTTP charset, <meta>, detector, then UTF-8 with replacement."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return Decoded(data[len(bom) :].decode(encoding, "replace"), encoding, "bom")
    candidates = (
        (charset_from_content_type(content_type), "http"),
        (charset_from_meta(data), "meta"),
    )
    declared_failed = False
    for declared, source in candidates:
        if declared:
            text = _try(data, declared)
            if text is not None:
                return Decoded(text, declared, source)
            declared_failed = True
    # Valid UTF-8 with non-ASCII bytes is UTF-8 with near certainty; detectors misfire on it.
    text = _try(data, "utf-8")
    if text is not None:
        return Decoded(text, "utf-8", "utf-8")
    if declared_failed:
        # A declared charset that does not decode is usually UTF-8 on Latin-1 bytes; a detector on a
        # short page picks any single-byte code page ("Cafķ crĶme"), so Western text is tried first.
        text = _plausible_cp1252(data)
        if text is not None:
            return Decoded(text, "cp1252", "detector")
    detected = _detect(data)
    if detected:
        text = _try(data, detected)
        if text is not None:
            return Decoded(text, detected, "detector")
    return Decoded(data.decode("utf-8", "replace"), "utf-8", "fallback")


def gunzip_capped(data: bytes, max_size: int = DEFAULT_MAX_DECOMPRESSED) -> bytes:
    """Decompress gzip bytes, refusing output larger than max_size (decompression bombs)."""
    decompressor = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = decompressor.decompress(data, max_size + 1)
    except zlib.error as exc:
        raise DecompressionError(f"corrupt gzip data: {exc}") from exc
    if len(out) > max_size or decompressor.unconsumed_tail:
        raise DecompressionTooLarge(f"decompressed size exceeds {max_size} bytes")
    if not decompressor.eof:
        raise DecompressionError("truncated or corrupt gzip data")
    return out


def maybe_gunzip(data: bytes, max_size: int = DEFAULT_MAX_DECOMPRESSED) -> bytes:
    """Gunzip data that starts with the gzip magic number; pass anything else through."""
    return gunzip_capped(data, max_size) if data[:2] == GZIP_MAGIC else data


__all__ = [
    "Decoded",
    "DecompressionError",
    "DecompressionTooLarge",
    "charset_from_content_type",
    "charset_from_meta",
    "decode_html",
    "gunzip_capped",
    "maybe_gunzip",
    "normalize_encoding",
]
