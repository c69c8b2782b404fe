"""DOM heuristic scoring (Berg 2020): handcrafted pages whose right answer is known."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from readerproxy import extract
from readerproxy.engine.elements import (
    CAPTION_BIT,
    CLASS_WORDS,
    TEXT_HOLDERS,
    WEIGHTS,
    ElementLabels,
    ScoreMemo,
    _attribute_scores,
    attribute_weights,
    body_text_tokens,
    class_id_words,
    class_value_bits,
    class_word_bits,
    class_word_bits_split,
    element_features,
    is_unlikely_candidate,
    tag_ids,
)
from readerproxy.engine.extraction import get_extractor
from readerproxy.engine.extractors.heuristic import add_neighbours, evaluate
from readerproxy.engine.parse.document import TEXT, Document, parse
from readerproxy.research.datasets import datasets_root, load_dataset

FIXTURES = Path(__file__).parents[1] / "fixtures"


def page(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def heuristic_text(html: str, **params: object) -> str:
    return extract(html, algorithm="heuristic", **params).text


def test_semantic_article_beside_nav_aside_footer() -> None:
    text = heuristic_text(page("heuristic_semantic.html"))
    assert "River towns rebuild after the flood" in text
    assert "counting\nthe cost" not in text  # paragraphs are whitespace-normalised
    for sentence in ("counting the cost", "deferred maintenance", "borrowed ovens", "public inquiry"):
        assert sentence in text
    for noise in ("About us", "Local choir", "Bridge closed", "Copyright 2024", "since 1898"):
        assert noise not in text


def test_class_hints_and_text_decide_without_semantic_tags() -> None:
    text = heuristic_text(page("heuristic_hints.html"))
    for sentence in ("living culture of wild yeast", "sluggish starter", "called hooch"):
        assert sentence in text
    for noise in (
        "Subscribe to our newsletter",
        "Popular tags",
        "Share on Facebook",
        "Ten mistakes",
        "Powered by",
    ):
        assert noise not in text


def test_link_dense_navigation_beside_long_article() -> None:
    # accb's fixture has no semantic tags and no hints on the article: words and links decide.
    text = heuristic_text(page("accb_navigation.html"))
    assert "hundred and twelve steps" in text and "rowing boat" in text
    assert "Section one" not in text and "Privacy" not in text


def test_comment_section_longer_than_article_is_left_out() -> None:
    html = page("heuristic_comments.html")
    doc = parse(html)
    comment_words = sum(
        len(doc.element_text(i).split())
        for i, node in enumerate(doc.elements)
        if (node.attributes.get("class") or "") == "comment-body"
    )
    article_words = len(doc.element_text(doc.tag.index("div") + 1).split())
    assert comment_words > article_words  # the case where density fails (Moreno et al. 2009, §5.3)
    text = heuristic_text(html)
    assert "two decades of decline" in text and "wider beds" in text
    assert "railfan77" not in text and "booking" not in text and "142 comments" not in text


def test_every_element_is_scored_and_blocks_are_elements() -> None:
    doc = parse(page("heuristic_semantic.html"))
    extraction = get_extractor("heuristic").run(doc)
    scores = extraction.signals["element_score"]
    assert scores.shape == (len(doc.elements),)
    assert extraction.blocks and all(block.element is not None for block in extraction.blocks)
    nav_item = next(i for i, name in enumerate(doc.tag) if name == "li")
    paragraph = doc.tag.index("p", doc.tag.index("article"))
    assert scores[nav_item] < 0 < scores[paragraph]
    for block in extraction.blocks:
        assert scores[block.element] == pytest.approx(block.score)
    assert 0.0 <= extraction.score <= 1.0
    selected = [b for b in extraction.blocks if b.selected]
    assert {doc.tag[b.element] for b in selected} <= {"h1", "p"}


def test_threshold_override_selects_a_subset() -> None:
    html = page("heuristic_semantic.html")
    default = extract(html, algorithm="heuristic")
    strict = extract(html, algorithm="heuristic", threshold="350")  # strings coerce, as from the CLI
    assert strict.extraction.params["threshold"] == 350.0
    low = default.extraction.selection
    high = strict.extraction.selection
    assert high.sum() < low.sum()
    assert not (high & ~low).any()
    # <main> and <article> lift every paragraph by 200; the headline and the last, shorter
    # paragraph stay below 350, the long paragraphs stay above it.
    assert "River towns rebuild" not in strict.text and "public inquiry" not in strict.text
    assert "deferred maintenance" in strict.text and "River towns rebuild" in default.text


def test_unknown_and_invalid_parameters_raise() -> None:
    with pytest.raises(ValueError, match="unknown parameter"):
        extract("<p>x</p>", algorithm="heuristic", sigma=3)
    with pytest.raises(ValueError, match="coverage"):
        extract("<p>x</p>", algorithm="heuristic", coverage=0)


def test_deterministic() -> None:
    html = page("heuristic_hints.html")
    first = get_extractor("heuristic").run(parse(html))
    second = get_extractor("heuristic").run(parse(html))
    assert np.array_equal(first.selection, second.selection)
    assert np.array_equal(first.signals["element_score"], second.signals["element_score"])


def test_attribute_weights_follow_the_table() -> None:
    role, hint = attribute_weights({"role": "Navigation", "class": "sidebar"}, WEIGHTS)
    assert role == WEIGHTS.role["navigation"] and hint == WEIGHTS.negative_hint
    role, hint = attribute_weights({"id": "post-content"}, WEIGHTS)
    assert role == 0.0 and hint == WEIGHTS.positive_hint
    role, hint = attribute_weights({"role": "main", "class": "comment-content"}, WEIGHTS)
    assert role == WEIGHTS.role["main"] and hint == WEIGHTS.positive_hint + WEIGHTS.negative_hint


def test_context_is_inherited_and_text_goes_to_the_block_holder() -> None:
    doc = parse(
        "<body><nav><ul><li>Home <b>page</b></li></ul></nav><div><p>One <em>two</em> three</p></div></body>"
    )
    features = element_features(doc)
    li, b, p, em = (doc.tag.index(name) for name in ("li", "b", "p", "em"))
    assert features.holder[b] == li and features.holder[em] == p
    assert features.words[li] == 2 and features.words[p] == 3 and features.words[em] == 0
    assert features.context[li] == WEIGHTS.context_tag["nav"]
    assert features.context[p] == 0.0
    scores = evaluate(features)
    assert scores[li] < 0 < scores[p]


def test_neighbours_lift_a_short_line_between_strong_paragraphs() -> None:
    scores = np.array([200.0, 5.0, 200.0, -5000.0])
    holders = np.arange(4)
    lifted = add_neighbours(scores, holders, share=0.25, floor=-100.0)
    assert lifted[1] == pytest.approx(5.0 + 0.25 * 400.0)
    assert lifted[2] == pytest.approx(200.0 + 0.25 * (5.0 - 100.0))  # the -5000 menu lends only -100
    assert lifted[3] == pytest.approx(-5000.0 + 0.25 * 200.0)


@pytest.mark.parametrize(
    "html", ["", "   ", "<html></html>", "<p>", "plain text only", "<body><a href=x>only a link</a>"]
)
def test_degenerate_pages_do_not_raise(html: str) -> None:
    extraction = get_extractor("heuristic").run(parse(html))
    assert extraction.selection.shape == (len(parse(html).tokens),)
    assert 0.0 <= extraction.score <= 1.0


def test_unlikely_candidates_are_dropped_only_when_asked() -> None:
    """Readability.js's unlikely candidates: class/id says boilerplate and nothing says content."""
    article = "".join(
        f"<p>Article paragraph {i} with plenty of ordinary words to read.</p>" for i in range(8)
    )
    comments = (
        '<div class="supplemental">'
        + "<p>A reader comment that is long enough to score well here.</p>" * 6
        + "</div>"
    )
    kept = '<div class="extra-content"><p>Maybe content: this class also says content, so it stays in the article text.</p></div>'
    page = f"<html><body><div>{article}{comments}{kept}</div></body></html>"
    plain = extract(page, algorithm="heuristic").text
    cleaned = extract(page, algorithm="heuristic", unlikely_candidates=True).text
    assert "reader comment" in plain
    assert "reader comment" not in cleaned
    assert "Article paragraph 7" in cleaned
    assert "Maybe content" in cleaned


def test_top_candidate_root_leaves_teaser_cards_out() -> None:
    """Paragraphs that share a parent outscore teaser cards that sit one per card (Readability.js)."""
    body = "".join(
        f"<p>Story paragraph {i} tells the reader what happened in plain words.</p>" for i in range(30)
    )
    cards = "".join(
        f'<div class="card"><h3>Other story {i}</h3><p>A teaser sentence for another story, long enough to score {i}.</p></div>'
        for i in range(8)
    )
    page = (
        f"<html><body><div><div class='story'>{body}</div><div class='more'>{cards}</div></div></body></html>"
    )
    coverage = extract(page, algorithm="heuristic").text
    candidate = extract(page, algorithm="heuristic", article_root="top-candidate").text
    assert "A teaser sentence" in coverage  # the teasers are a large share of the selected words
    assert "A teaser sentence" not in candidate
    assert "Story paragraph 0" in candidate and "Story paragraph 29" in candidate
    with pytest.raises(ValueError, match="article_root"):
        extract(page, algorithm="heuristic", article_root="nope")


def test_inner_threshold_keeps_short_paragraphs_of_the_article() -> None:
    paragraphs = "".join(
        f"<p>Paragraph {i} of the story has a good number of words in it for scoring well.</p><div>So short {i}.</div>"
        for i in range(10)
    )
    page = f"<html><body><nav><a href='/'>Home</a></nav><div>{paragraphs}</div></body></html>"
    default = extract(page, algorithm="heuristic").text
    inner = extract(page, algorithm="heuristic", inner_threshold=0).text
    assert "So short 3." not in default  # a two-word paragraph is below the threshold on its own
    assert "So short 3." in inner and "Paragraph 9 of the story" in inner
    assert "Home" not in inner


def test_factored_hint_patterns_match_exactly_where_the_flat_word_lists_do() -> None:
    import random
    import re

    from readerproxy.engine.elements import (
        NEGATIVE_HINTS,
        NEGATIVE_WORDS,
        POSITIVE_HINTS,
        POSITIVE_WORDS,
        literal_trie,
        negative_hint,
    )

    flat_positive = re.compile("|".join(map(re.escape, POSITIVE_WORDS)))
    flat_negative = re.compile(
        "|".join(map(re.escape, NEGATIVE_WORDS)) + r"|(?:^|[\s_-])(?:ads?|tags?)(?:$|[\s_-])|(?:^|[\s_-])nav"
    )
    values = [
        *POSITIVE_WORDS,
        *NEGATIVE_WORDS,
        *(word[:-1] for word in NEGATIVE_WORDS),  # every word cut short
        *(f"x{word}y z" for word in POSITIVE_WORDS + NEGATIVE_WORDS),
        "ad",
        "ads",
        "add",
        "main-ad",
        "ad_slot",
        "navbar",
        "snav",
        "x nav",
        "tag",
        "tags",
        "tagline",
        "hashtag x",
        "pag",
        "page",
        "pager",
        "pagination",
        "sharin",
        "shares",
        "com",
        "com-x",
        "co",
        "",
        "btn btn-primary col-md-6",
        "entry-content\nsidebar",
        "ads\n",
        "x-tag\n",
        "nav-x",
        "_ad",
        "ad-",
        "tags_",
        "\tad",
        "a\u3000nav",
        "ad\u00a0x",
    ]
    rng = random.Random(5)
    values += [
        "".join(rng.choice(["ad", "s", "tag", "nav", " ", "_", "-", "x", "\n"]) for _ in range(6))
        for _ in range(3000)
    ]
    for value in values:
        assert bool(POSITIVE_HINTS.search(value)) == bool(flat_positive.search(value)), value
        assert bool(NEGATIVE_HINTS.search(value)) == bool(flat_negative.search(value)), value
        assert negative_hint(value) == bool(flat_negative.search(value)), value
    assert literal_trie(("page", "post", "pager")) == "p(?:age(?:r)?|ost)"
    assert re.fullmatch(literal_trie(("a.b", "a+")), "a.b") and not re.fullmatch(
        literal_trie(("a.b",)), "axb"
    )


def test_labels_are_tag_and_id_made_when_read() -> None:
    doc = parse('<body><div id="main"><p>One</p><p id="">Two</p></div></body>')
    labels = element_features(doc).label
    assert isinstance(labels, ElementLabels) and len(labels) == len(doc.tag)
    expected = [f"{name}#{ident}" if ident else name for name, ident in zip(doc.tag, doc.ident, strict=True)]
    assert list(labels) == expected and "div#main" in expected
    assert labels[doc.tag.index("div")] == "div#main" and labels[-1] == "p"
    assert labels[1:3] == expected[1:3]


def test_tag_ids_number_the_names_in_order_of_appearance() -> None:
    names, ids = tag_ids(["html", "body", "p", "a", "p", "body"])
    assert names == ["html", "body", "p", "a"]
    assert ids.dtype == np.int64 and ids.tolist() == [0, 1, 2, 3, 2, 1]
    names, ids = tag_ids([])
    assert names == [] and len(ids) == 0


def _dataset_documents() -> list[Document]:
    if datasets_root() is None:
        pytest.skip("datasets not available")
    return [parse(page.read_html()) for name in ("scrapinghub", "readability") for page in load_dataset(name)]


@pytest.mark.slow
def test_per_page_shortcuts_equal_the_direct_way_on_every_dataset_page() -> None:
    """Document.sum_descendants has the bits of prefix sums over the tokens (holder scores, word
    masses, random values), body_text_tokens is the direct filter of <body>'s tokens, and the tag codes, holders
    and labels the element features keep are what the tags say."""
    rng = np.random.default_rng(5)
    for doc in _dataset_documents():
        features = element_features(doc)
        scores = evaluate(features)
        for values in (
            scores,
            np.where(features.chars > 0, features.words, 0.0),
            rng.normal(size=len(scores)),
        ):
            at_start = np.zeros(len(doc.tokens))
            at_start[doc.start] = values
            assert doc.sum_descendants(values).tobytes() == doc.sum_within(at_start).tobytes()
        t = doc.tokens
        first, last = doc.body
        span = np.arange(first, last + 1)
        direct = span[(t.kind[span] == TEXT) & (t.chars[span] > 0) & (t.element[span] >= 0)]
        assert np.array_equal(body_text_tokens(doc), direct)
        assert np.array_equal(features.text_owner, features.holder[t.element[direct]])
        assert [features.tag_names[i] for i in features.tag_id.tolist()] == doc.tag
        holds = [name in TEXT_HOLDERS for name in doc.tag]
        assert all(features.holder[i] == i for i in range(len(holds)) if holds[i])


def test_score_memo_gives_the_attribute_scores_and_stays_bounded() -> None:
    memo = ScoreMemo(WEIGHTS, size=8)
    tags = ["div", "nav", "p", "div", "article", "div"]
    roles = [None, None, "navigation", None, None, "main"]
    classes = ["sidebar", None, None, "sidebar", "post", "comment-body"]
    idents = [None, "menu", None, None, None, "content"]
    expected = []
    for name, role, cls, ident in zip(tags, roles, classes, idents, strict=True):
        attrs = {"role": role, "class": cls, "id": ident}
        expected.append((*attribute_weights(attrs, WEIGHTS), is_unlikely_candidate(name, attrs)))

    def as_tuples(scores: tuple[np.ndarray, np.ndarray, np.ndarray]) -> list[tuple[float, float, bool]]:
        role, hint, unlikely = scores
        assert role.dtype == hint.dtype == np.float64 and unlikely.dtype == np.bool_
        return list(zip(role.tolist(), hint.tolist(), unlikely.tolist(), strict=True))

    assert as_tuples(memo.scores(tags, roles, classes, idents)) == expected
    assert expected[0] == (0.0, WEIGHTS.negative_hint, True) and expected[2][0] == WEIGHTS.role["navigation"]
    assert len(memo._row) == 5  # the two "div.sidebar" share a row
    # A page that would take it past its size empties it first; the answers stay the same.
    assert as_tuples(memo.scores(tags, roles, classes, idents)) == expected
    assert len(memo._row) == 5
    many = [f"c{i}" for i in range(300)]  # more rows than the first tables hold
    big = ScoreMemo(WEIGHTS, size=1000)
    role, hint, _ = big.scores(["div"] * 300, [None] * 300, many, [None] * 300)
    assert len(big._row) == 300 and not role.any() and not hint.any()
    memo.cache_clear()
    assert not memo._row
    other = ScoreMemo(dataclasses.replace(WEIGHTS, negative_hint=-7.0))
    assert as_tuples(other.scores(["div"], [None], ["sidebar"], [None])) == [(0.0, -7.0, True)]
    assert as_tuples(other.scores([], [], [], [])) == []


def test_score_memo_shared_by_threads_gives_each_page_its_own_scores() -> None:
    memo = ScoreMemo(WEIGHTS, size=64)  # small: pages empty it while others read it
    pages = [[f"c{page}-{i}" if i % 3 else "sidebar" for i in range(40)] for page in range(12)]
    expected = [
        ScoreMemo(WEIGHTS).scores(["div"] * 40, [None] * 40, classes, [None] * 40) for classes in pages
    ]
    failures: list[int] = []

    def read(page: int) -> None:
        for _ in range(30):
            got = memo.scores(["div"] * 40, [None] * 40, pages[page], [None] * 40)
            if not all(np.array_equal(a, b) for a, b in zip(got, expected[page], strict=True)):
                failures.append(page)

    threads = [threading.Thread(target=read, args=(page,)) for page in range(len(pages))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not failures and not any(thread.is_alive() for thread in threads)


def _categories(value: str) -> set[str]:
    bits = class_word_bits(value)
    return {name for k, name in enumerate(CLASS_WORDS) if bits >> k & 1}


def test_class_word_bits_match_whole_words_plurals_and_long_prefixes() -> None:
    assert class_id_words("postBody related-posts_2 HTMLContent") == [
        "post", "body", "related", "posts", "html", "content",
    ]  # fmt: skip
    assert _categories("heroCarousel") == _categories("gallery-item__caption") == {"gallery"}
    assert _categories("sliders") == _categories("slides") == {"gallery"}  # plurals
    assert _categories("galleryitem") == _categories("slideshowwrap") == {"gallery"}  # 6+ letters: prefixes
    assert _categories("slick") == {"gallery"} and _categories("slickness") == set()  # 5 letters: whole only
    assert _categories("slidebar") == _categories("postBody related-posts_2") == set()
    assert _categories("") == set() and len(CLASS_WORDS) <= 16  # the bits fit a uint16


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["slide", "Show", "SLICK", "gallery", "carousel", "Lightbox", "swiper", "s", "item", "Wrap"]
        )
        | st.text(alphabet="abcslideSLIDE-_ 2\u212a\u0130\u017f\u00e9", max_size=8),
        max_size=5,
    ).map("".join)
)
def test_class_word_bits_skip_only_values_that_name_no_category(value: str) -> None:
    """A value whose lower case holds no category word is answered without splitting it: the
    same bits as splitting, for any value (camelCase, acronyms, plurals, the Kelvin sign, a dotted
    capital I, the long s)."""
    assert class_word_bits.__wrapped__(value) == class_word_bits_split(value)


def test_score_memo_grows_for_a_page_of_many_new_combinations() -> None:
    """A page with more new (tag, role, class, id) combinations than the memo has rows, then
    another page with more still: each element gets its own combination's scores and class bits,
    as computed one at a time, and known combinations keep their rows."""
    memo = ScoreMemo(WEIGHTS)
    for count in (1000, 2500):
        tags = ["div", "p", "aside", "a"] * (count // 4)
        roles = [None, "navigation", None, None] * (count // 4)
        classes = [f"c{n} {'sidebar' if n % 3 else 'gallery-item'}" for n in range(count)]
        idents = [None if n % 2 else f"post-{n} comments" for n in range(count)]
        role, hint, unlikely, words = memo.scores_and_words(tags, roles, classes, idents)
        expected = [
            _attribute_scores(*key, WEIGHTS) for key in zip(tags, roles, classes, idents, strict=True)
        ]
        assert role.tolist() == [score[0] for score in expected]
        assert hint.tolist() == [score[1] for score in expected]
        assert unlikely.tolist() == [score[2] for score in expected]
        assert words.tolist() == [
            class_word_bits_split(c)
            | class_value_bits(c, True)
            | (class_word_bits_split(i) | class_value_bits(i, False) if i else 0)
            for c, i in zip(classes, idents, strict=True)
        ]


def test_score_memo_gives_each_element_the_categories_of_its_class_and_id() -> None:
    memo = ScoreMemo(WEIGHTS, size=4)
    tags = ["div", "div", "p", "div", "span"]
    classes = ["carousel", "gallery", None, "gallery", "x"]
    idents = [None, "image-caption", "slides", None, None]
    *scores, words = memo.scores_and_words(tags, [None] * 5, classes, idents)
    assert words.dtype == np.uint16
    gallery = 1 << list(CLASS_WORDS).index("gallery")
    # The class's and the id's words, and a caption named in the id (`class_value_bits`).
    expected = [gallery, gallery | CAPTION_BIT, gallery, gallery, 0]
    assert words.tolist() == expected
    # The same rows as `scores`, across the reset that a page past `size` causes.
    again = memo.scores_and_words(tags, [None] * 5, classes, idents)
    assert all(np.array_equal(a, b) for a, b in zip(again, (*scores, words), strict=True))
    assert all(
        np.array_equal(a, b)
        for a, b in zip(memo.scores(tags, [None] * 5, classes, idents), scores, strict=True)
    )
