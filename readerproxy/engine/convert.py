"""Strings from a command line, query string, environment or config file into typed values.

One converter for every place that turns text into a dataclass field: the extractors' parameters
(`Extractor.make_params`) and the server settings (`settings.py`). `coerce` follows the field's type
hint (bool, int, float, str, Path, an Enum, a Literal, or an optional one of those) and raises
`ValueError` naming the value and what was expected; `check_range` is the range check the parameter
dataclasses run in `__post_init__`. `parse_flag` is the lenient reading of an on/off query flag.
"""

from __future__ import annotations

import enum
import math
import types
import typing
from pathlib import Path
from typing import Any

#: Strings read as true and as false (case-insensitive, surrounding whitespace ignored).
TRUE_STRINGS = frozenset({"1", "true", "yes", "on"})
FALSE_STRINGS = frozenset({"0", "false", "no", "off", ""})
#: Strings read as "no value" for an optional field (besides None itself).
NONE_STRINGS = frozenset({"", "none"})


def parse_flag(value: str | None) -> bool:
    """True iff the string is one of TRUE_STRINGS; anything else (also None) is False."""
    return (value or "").strip().lower() in TRUE_STRINGS


def coerce(name: str, value: Any, hint: Any) -> Any:
    """`value` converted to the type hint `hint` of the field `name`; ValueError if it cannot be."""
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        choices = typing.get_args(hint)
        for choice in choices:
            if value == choice or str(value) == str(choice):
                return choice
        raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}, got {value!r}")
    if origin in (typing.Union, types.UnionType):
        if value is None or (isinstance(value, str) and value.strip().lower() in NONE_STRINGS):
            return None
        hint = next(arg for arg in typing.get_args(hint) if arg is not type(None))
        return coerce(name, value, hint)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum_member(name, value, hint)
    try:
        if hint is bool:
            if isinstance(value, bool):
                return value
            lowered = str(value).strip().lower()
            if lowered in TRUE_STRINGS:
                return True
            if lowered in FALSE_STRINGS:
                return False
            raise ValueError(value)
        if hint is int:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError(value)
            return int(value)
        if hint is float:
            if isinstance(value, bool):
                raise ValueError(value)
            result = float(value)
            if math.isnan(result):
                raise ValueError(value)
            return result
        if hint is Path:
            return Path(str(value)).expanduser()
        if hint is str:
            if not isinstance(value, str):
                raise ValueError(value)
            return value
    except (TypeError, ValueError, OverflowError):
        expected = getattr(hint, "__name__", str(hint))
        raise ValueError(f"{name} expects {expected}, got {value!r}") from None
    return value


def _enum_member(name: str, value: Any, enum_type: type[enum.Enum]) -> enum.Enum:
    """The member of `enum_type` whose value (or name, case-insensitive, '-' for '_') is `value`."""
    if isinstance(value, enum_type):
        return value
    candidates: list[Any] = [value]
    if isinstance(value, str):
        text = value.strip()
        by_name = {member.name.lower(): member for member in enum_type}
        member = by_name.get(text.lower().replace("-", "_"))
        if member is not None:
            return member
        if text.lstrip("+-").isdigit():
            candidates.append(int(text))
    for candidate in candidates:
        if isinstance(candidate, bool):
            continue
        try:
            return enum_type(candidate)
        except ValueError:
            continue
    choices = ", ".join(f"{member.value} ({member.name.lower()})" for member in enum_type)
    raise ValueError(f"{name} must be one of {choices}, got {value!r}")


def check_range(
    name: str,
    value: float,
    low: float,
    high: float,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    """ValueError naming `name` and its range unless low <= value <= high (or < for an open end).

    The message reads e.g. "c1 must be in (0, 1], got -1.0".
    """
    above = value > low if low_open else value >= low
    below = value < high if high_open else value <= high
    if not (above and below):  # also refuses NaN
        interval = f"{'(' if low_open else '['}{_number(low)}, {_number(high)}{')' if high_open else ']'}"
        raise ValueError(f"{name} must be in {interval}, got {value!r}")


def check_choice(name: str, value: Any, hint: Any) -> None:
    """ValueError unless `value` is one of the choices of the Literal type `hint`."""
    choices = typing.get_args(hint)
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}, got {value!r}")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
