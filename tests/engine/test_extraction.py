"""Parameters are checked where they are made: `make_params` and the dataclasses refuse every value
outside its range (lower and upper bound) with a ValueError naming the parameter and the range."""

from __future__ import annotations

import dataclasses
import pickle
import typing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from readerproxy.engine.convert import FALSE_STRINGS, TRUE_STRINGS, check_range, coerce, parse_flag
from readerproxy.engine.extraction import Block, HolderBlocks, block_columns, params_dict, registry
from readerproxy.engine.extractors.linkfilters import LinkFilter

#: Per algorithm and numeric parameter: values refused, values accepted (bounds included).
RANGES: dict[str, dict[str, tuple[list[Any], list[Any]]]] = {
    "density": {
        "c1": ([-1, 0, 1.01, float("inf"), "nan"], [1e-6, 0.333, 1]),
        "c2": ([0, -4, 1001], [1, 4, 1000]),
    },
    "danag": {
        "segment_length": ([0, 9, 10001, 10**9], [10, 150, 10000]),
        "radius": ([-1, 101, 10**8], [0, 1, 100]),
        "max_gap": ([-2, 1001], [0, 50, 1000]),
    },
    "cetr": {
        "k": ([1, 0, 11], [2, 3, 10]),
        "radius": ([-1, 101, "1e8"], [0, 3, 100]),
        "sigma": ([0, -1, 101], [0.1, 2, 100]),
        "alpha": ([0, 101], [1, 3, 100]),
    },
    "cetr-km": {
        "k": ([1, 11], [2, 10]),
        "radius": ([-1, 101], [0, 100]),
        "sigma": ([0, 101], [2, 100]),
    },
    "cetr-tm": {
        "tau": ([-0.1, 100.5], [0, 1, 100]),
        "radius": ([-1, 101], [0, 100]),
        "sigma": ([0, 101], [2, 100]),
    },
    "lineblock": {
        "ttr_threshold": ([-1, 10001], [0, 30, 10000]),
        "attr_threshold": ([-0.1, 1.1], [0, 0.2, 1]),
        "tkd_threshold": ([-1, 1001], [0, 2, 1000]),
        "lambda_ttr": ([-1, 101], [0, 1, 100]),
        "lambda_tkd": ([-1, 101], [0, 1, 100]),
        "max_gap": ([-1, 1001], [0, 1000]),
    },
    "heuristic": {
        "threshold": ([-10001, 10001, "inf"], [-10000, 25, 10000]),
        "coverage": ([0, -0.5, 1.5], [0.01, 0.85, 1]),
        "neighbour_share": ([-0.1, 1.1], [0, 0.25, 1]),
        "candidate_share": ([0, 1.1], [0.5, 1]),
        "inner_threshold": ([-10001, 10001], [None, "none", 0, -10000, 10000]),
    },
    "accb": {
        "radius": ([0, 101], [1, 40, 100]),
        "sigma": ([-1, 101], [0, 13.3, 100]),
        "iterations": ([0, 21, 1000000000], [1, 3, 20]),
        "threshold": ([-0.1, 1.01], [0, 0.7, 1]),
    },
    "auto-heuristic": {
        "min_chars": ([-1, 10_000_001], [0, 200, 10_000_000]),
        "min_share": ([-0.1, 1.1], [0, 0.5, 1]),
    },
}
#: Parameters with a fixed set of values: one refused value and the accepted ones.
CHOICES: dict[str, dict[str, tuple[Any, list[Any]]]] = {
    "accb": {"anchors": ("drop", ["ignore", "remove"]), "unit": ("word", ["token", "char"])},
    "lineblock": {"tkd_rule": ("or", ["and", "rescue"]), "adaptive": ("maybe", ["1", "false", True])},
    "heuristic": {
        "article_root": ("root", ["coverage", "top-candidate"]),
        "unlikely_candidates": ("2", ["on", "no", False]),
    },
}
#: visual takes heuristic's parameters and adds its own (Berg 2020, §6.1).
RANGES["visual"] = {
    **RANGES["heuristic"],
    "boundary_trim": ([-0.1, 0.46], [0, 0.1, 0.45]),
    "boundary_penalty": ([1, -10001], [0, -1000, -10000]),
    "contrast_penalty": ([1, -10001], [0, -50, -10000]),
    "contrast_margin": ([-0.1, 21], [0, 0.5, 20]),
}
CHOICES["visual"] = CHOICES["heuristic"]
#: learned (and auto, the same extractor) takes auto-heuristic's limits, its own threshold, and a model path (checked in test_learn.py).
RANGES["learned"] = RANGES["auto"] = {
    **RANGES["auto-heuristic"],
    "threshold": ([-0.1, 1.1], [0, 0.5, 1]),
    "heuristic_threshold": ([-0.1, 1.1], [0, 0.3, 1]),
    "outside_threshold": ([-0.1, 1.1], [0, 0.7, 1]),
    "gallery_threshold": ([-0.1, 1.1], [0, 0.8, 1]),
    "wide_only_threshold": ([-0.1, 1.1], [0, 0.9, 1]),
    "short_page_chars": ([-1, 10_000_001], [0, 200, 10_000_000]),
    "link_run_blocks": ([-1, 10_001], [0, 3, 10_000]),
    "whole_table_share": ([-0.1, 1.1], [0, 0.2, 1]),
    "whole_list_share": ([-0.1, 1.1], [0, 0.3, 1]),
    "list_min_items": ([-1, 10_001], [0, 6, 10_000]),
}
CHOICES["learned"] = CHOICES["auto"] = {
    "cut_comments": ("maybe", ["1", "false", True]),
    "cut_reviews": ("maybe", ["1", "false", True]),
    "cut_repeats": ("maybe", ["1", "false", True]),
    "cut_labels": ("maybe", ["1", "false", True]),
    "related_prior": ("maybe", ["1", "false", True]),
    "cut_caption_repeats": ("maybe", ["1", "false", True]),
    "cut_choices": ("maybe", ["1", "false", True]),
    "cut_filters": ("maybe", ["1", "false", True]),
    "cut_teasers": ("maybe", ["1", "false", True]),
    "cut_other_articles": ("maybe", ["1", "false", True]),
    "keep_embeds": ("maybe", ["1", "false", True]),
    "cut_thread_extras": ("maybe", ["1", "false", True]),
    "cut_thread_outside": ("maybe", ["1", "false", True]),
    "cut_orphan_headings": ("maybe", ["1", "false", True]),
    "cut_credits": ("maybe", ["1", "false", True]),
    "cut_promos": ("maybe", ["1", "false", True]),
    "keep_thread_posts": ("maybe", ["1", "false", True]),
}
PATH_PARAMETERS = {"learned": {"model"}, "auto": {"model"}}
LINK_FILTERED = ("density", "danag", "cetr", "cetr-km", "cetr-tm", "lineblock")
#: The papers' values (and the measured ones where the papers give none) stay the defaults.
PAPER_DEFAULTS = {
    "density": {"c1": 0.333, "c2": 4, "link_filter": 0},
    "cetr": {"k": 3, "radius": 3, "sigma": 2.0, "alpha": 3, "link_filter": 0},
    "lineblock": {"ttr_threshold": 30.0, "attr_threshold": 0.2, "tkd_threshold": 2.0, "max_gap": 0},
    "danag": {"segment_length": 150, "radius": 1, "max_gap": 50, "link_filter": 0},
    "heuristic": {"threshold": 25.0, "coverage": 0.85},
    "visual": {"threshold": 25.0, "boundary_trim": 0.1, "boundary_penalty": -1000.0},
    "accb": {"radius": 40, "iterations": 3, "threshold": 0.7, "anchors": "ignore", "unit": "token"},
}


def cases(table: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    return [(algorithm, name) for algorithm, params in table.items() for name in params]


def test_every_parameter_is_in_the_tables() -> None:
    for name, extractor in registry().items():
        fields = {f.name for f in dataclasses.fields(extractor.params_type)}
        known = set(RANGES.get(name, {})) | set(CHOICES.get(name, {}))
        if name in LINK_FILTERED:
            known.add("link_filter")
        known |= PATH_PARAMETERS.get(name, set())
        assert fields == known, name


@pytest.mark.parametrize("algorithm", sorted(registry()))
def test_defaults_validate(algorithm: str) -> None:
    extractor = registry()[algorithm]
    defaults = extractor.defaults()
    assert extractor.make_params({}) == defaults
    # Every default, given back as a string (as from a query string), makes the same parameters.
    as_strings = {key: str(value) for key, value in dataclasses.asdict(defaults).items()}  # type: ignore[call-overload]
    assert extractor.make_params(as_strings) == defaults


@pytest.mark.parametrize("algorithm", sorted(registry()))
def test_params_dict_is_asdict(algorithm: str) -> None:
    """What an Extraction reports of its parameters: asdict's answer, same order, same values, made
    afresh each time (a caller may change the dict it gets)."""
    defaults = registry()[algorithm].defaults()
    expected = dataclasses.asdict(defaults)  # type: ignore[call-overload]
    got = params_dict(defaults)
    assert list(got.items()) == list(expected.items())
    assert all(type(got[key]) is type(value) for key, value in expected.items())
    got["extra"] = 1
    assert "extra" not in params_dict(defaults)


@pytest.mark.parametrize("algorithm", sorted(PAPER_DEFAULTS))
def test_paper_defaults_are_the_defaults(algorithm: str) -> None:
    values = dataclasses.asdict(registry()[algorithm].defaults())  # type: ignore[call-overload]
    assert {key: values[key] for key in PAPER_DEFAULTS[algorithm]} == PAPER_DEFAULTS[algorithm]


@pytest.mark.parametrize(("algorithm", "name"), cases(RANGES))
def test_out_of_range_values_are_refused_by_make_params(algorithm: str, name: str) -> None:
    extractor = registry()[algorithm]
    refused, accepted = RANGES[algorithm][name]
    for value in refused:
        with pytest.raises(ValueError, match=rf"^{name} (must be in [\[(].*[\])], got|expects)"):
            extractor.make_params({name: value})
        with pytest.raises(ValueError, match=rf"^{name} "):
            extractor.make_params({name: str(value)})
    for value in accepted:
        params = extractor.make_params({name: value})
        assert getattr(params, name) == coerce(
            name, value, typing.get_type_hints(extractor.params_type)[name]
        )


@pytest.mark.parametrize(("algorithm", "name"), cases(RANGES))
def test_out_of_range_values_are_refused_by_the_dataclass(algorithm: str, name: str) -> None:
    params_type = registry()[algorithm].params_type
    hint = typing.get_type_hints(params_type)[name]
    for value in RANGES[algorithm][name][0]:
        try:
            typed = coerce(name, value, hint)
        except ValueError:
            continue  # not even the right type
        with pytest.raises(ValueError, match=rf"^{name} must be in "):
            params_type(**{name: typed})


@pytest.mark.parametrize(("algorithm", "name"), cases(CHOICES))
def test_choices_are_checked(algorithm: str, name: str) -> None:
    extractor = registry()[algorithm]
    refused, accepted = CHOICES[algorithm][name]
    with pytest.raises(ValueError, match=rf"^{name} "):
        extractor.make_params({name: refused})
    for value in accepted:
        extractor.make_params({name: value})
    if (
        isinstance(refused, str)
        and not refused.isdigit()
        and name
        not in (
            "adaptive",
            "unlikely_candidates",
            "cut_comments",
            "cut_reviews",
            "cut_repeats",
            "cut_labels",
            "related_prior",
            "cut_caption_repeats",
            "cut_choices",
            "cut_filters",
            "cut_teasers",
            "cut_other_articles",
            "keep_embeds",
            "cut_thread_extras",
            "cut_thread_outside",
            "cut_orphan_headings",
            "cut_credits",
            "cut_promos",
            "keep_thread_posts",
        )
    ):
        with pytest.raises(ValueError, match=rf"^{name} must be one of"):
            extractor.params_type(**{name: refused})


@pytest.mark.parametrize("algorithm", LINK_FILTERED)
def test_link_filter_is_an_enum_of_0_to_3(algorithm: str) -> None:
    extractor = registry()[algorithm]
    for value, member in ((0, LinkFilter.NONE), ("1", LinkFilter.REMOVE_LINKS), ("2", 2), (3, 3)):
        params = extractor.make_params({"link_filter": value})
        assert params.link_filter == member and isinstance(params.link_filter, LinkFilter)
    assert extractor.params_type(link_filter=1).link_filter is LinkFilter.REMOVE_LINKS
    for bad in (-1, 4, 7, "7", "x", 2.5):
        with pytest.raises(ValueError, match=r"link_filter must be one of 0 \(none\), 1 \(remove_links\)"):
            extractor.make_params({"link_filter": bad})
    with pytest.raises(ValueError, match="link_filter"):
        extractor.params_type(link_filter=7)


def test_the_message_names_the_parameter_and_its_range() -> None:
    with pytest.raises(ValueError, match=r"^c1 must be in \(0, 1\], got -1.0$"):
        registry()["density"].make_params({"c1": "-1"})
    with pytest.raises(ValueError, match=r"^segment_length must be in \[10, 10000\], got 0$"):
        registry()["danag"].make_params({"segment_length": 0})
    with pytest.raises(ValueError, match=r"^iterations must be in \[1, 20\], got 1000000000$"):
        registry()["accb"].make_params({"iterations": "1000000000"})
    with pytest.raises(ValueError, match=r"^radius must be in \[0, 100\], got 100000000$"):
        registry()["cetr"].make_params({"radius": 1e8})


def test_check_range_open_and_closed_ends() -> None:
    check_range("x", 0, 0, 1)
    check_range("x", 1, 0, 1)
    with pytest.raises(ValueError, match=r"x must be in \(0, 1\)"):
        check_range("x", 1, 0, 1, low_open=True, high_open=True)
    with pytest.raises(ValueError, match=r"x must be in \[0.5, 2\], got nan"):
        check_range("x", float("nan"), 0.5, 2)


def test_coerce_types() -> None:
    assert coerce("n", "4", int) == 4 and coerce("n", 4.0, int) == 4
    assert coerce("x", "0.5", float) == 0.5
    assert coerce("p", "~/x", Path) == Path("~/x").expanduser()
    assert coerce("o", "none", int | None) is None and coerce("o", "", float | None) is None
    assert coerce("o", "3", int | None) == 3
    assert coerce("l", "b", typing.Literal["a", "b"]) == "b"
    assert coerce("f", "remove_links", LinkFilter) is LinkFilter.REMOVE_LINKS
    for bad, hint in (
        ("4.5", int),
        (4.5, int),
        (True, int),
        ("nan", float),
        (False, float),
        (3, str),
        ("x", bool),
    ):
        with pytest.raises(ValueError, match="expects"):
            coerce("v", bad, hint)
    with pytest.raises(ValueError, match="must be one of a, b"):
        coerce("l", "c", typing.Literal["a", "b"])


def test_true_and_false_strings() -> None:
    for text in TRUE_STRINGS:
        assert coerce("b", text.upper(), bool) is True and parse_flag(f" {text} ")
    for text in FALSE_STRINGS:
        assert coerce("b", text, bool) is False and not parse_flag(text)
    assert not parse_flag(None) and not parse_flag("maybe")
    assert coerce("b", 1, bool) is True and coerce("b", 0, bool) is False


def holder_blocks_example() -> HolderBlocks:
    labels = ["div#a", "p", "p", "li", "p"]
    return HolderBlocks(
        np.array([1, 2, 4]),
        np.array([3, 7, 12]),
        np.array([5, 10, 20]),
        np.array([0.5, -1.0, 2.25]),
        np.array([True, False, True]),
        labels,
    )


def test_holder_blocks_are_made_on_first_use_and_equal_the_blocks() -> None:
    blocks = holder_blocks_example()
    assert blocks._blocks is None and len(blocks) == 3  # the length needs no Block
    expected = [
        Block(3, 5, 0.5, True, 1, "p"),
        Block(7, 10, -1.0, False, 2, "p"),
        Block(12, 20, 2.25, True, 4, "p"),
    ]
    assert list(blocks) == expected and blocks == expected and blocks[1] == expected[1]
    assert blocks[1:] == expected[1:]
    assert pickle.loads(pickle.dumps(blocks)) == expected


def test_block_columns_read_holder_blocks_and_block_lists_alike() -> None:
    holders = holder_blocks_example()
    from_columns = block_columns(holders, 6)
    from_blocks = block_columns(list(holders), 6)
    for columns in (from_columns, from_blocks):
        score, selected = columns
        assert score.tolist() == [0.0, 0.5, -1.0, 0.0, 2.25, 0.0]
        assert selected.tolist() == [False, True, False, False, True, False]
    unplaced = block_columns([Block(0, 3, 9.0, True)], 2)  # a block of lines, not an element
    assert unplaced[0].tolist() == [0.0, 0.0] and not unplaced[1].any()
