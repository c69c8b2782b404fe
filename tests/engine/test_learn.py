"""The learned block scorer: blocks and features, labels, the numpy trees, folds, training, `learned`."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from readerproxy import extract
from readerproxy.cli import main
from readerproxy.engine.elements import (
    CAPTION_BIT,
    CLASS_WORDS,
    WIDE_ONLY_BIT,
    class_value_bits,
    wide_only,
    wide_only_searched,
)
from readerproxy.engine.extraction import get_extractor
from readerproxy.engine.extractors import learned as learned_module
from readerproxy.engine.extractors.auto import first_extractor
from readerproxy.engine.extractors.learned import table as learned_table
from readerproxy.engine.extractors.learned.params import LearnedParams
from readerproxy.engine.extractors.learned.rules import (
    GALLERY_LEVELS,
    choice_blocks,
    comment_section,
    credit_lines,
    data_tables,
    embedded_posts,
    filter_panels,
    gallery_section,
    link_runs,
    orphan_headings,
    other_articles,
    promo_lines,
    prose_lists,
    repeated_blocks,
    repeated_captions,
    says_product,
    teaser_blocks,
    template_labels,
    whole_lists,
    whole_tables,
    wide_only_section,
)
from readerproxy.engine.extractors.learned.table import PAGE_CONDITIONS, POST_RULES, PageKinds, post_rule
from readerproxy.engine.learn.blocks import (
    CONTEXT_FEATURES,
    FEATURES,
    context_features,
    page_blocks,
)
from readerproxy.engine.learn.blocks.columns import _containing
from readerproxy.engine.learn.model import (
    SHIPPED_MODEL,
    TreeModel,
    code_feature_hash,
    feature_list_hash,
    from_lightgbm_dump,
    load_model,
)
from readerproxy.engine.parse.document import parse, ranges_mask
from readerproxy.errors import RequestError
from readerproxy.research.datasets import Page, datasets_root
from readerproxy.research.oof import OutOfFold
from readerproxy.research.runner import AlgorithmSpec, ablation_rules, ablation_specs
from readerproxy.research.training.folds import fold_of_site, site_of_host, site_of_page
from readerproxy.research.training.labels import CONTENT_OVERLAP, block_texts, label_blocks
from readerproxy.research.training.train import average_trees
from readerproxy.web.reader import algorithm_params

FIXTURES = sorted((Path(__file__).parent.parent / "fixtures").glob("*.html"))
ARTICLE = " ".join(
    f"Sentence {i} of the article tells the reader something new about the river and its bridges."
    for i in range(30)
)
SYNTHETIC = f"""<html><body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li></ul></nav>
<article><h1>The river and its bridges</h1><p>{ARTICLE[:900]}</p><p>{ARTICLE[900:]}</p></article>
<div class="related"><p>Read also: ten facts about lakes that nobody knows about at all</p></div>
<footer><p>Copyright 2024 The Example Paper, all rights reserved worldwide</p></footer>
</body></html>"""


def _blocks(html: str):  # type: ignore[no-untyped-def]
    doc = parse(html)
    extractor, params = first_extractor()
    return doc, page_blocks(doc, extractor.run(doc, params))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_features_are_finite_and_one_row_per_text_holder(path: Path) -> None:
    doc, blocks = _blocks(path.read_text(encoding="utf-8"))
    assert blocks.features.shape == (len(blocks.elements), len(FEATURES))
    assert np.isfinite(blocks.features).all()
    assert (
        len(blocks.elements) > 0 or not extract(path.read_text(encoding="utf-8"), algorithm="baseline").text
    )
    # Every block owns text, and the blocks are in document order.
    assert all(doc.element_text(int(e)) for e in blocks.elements)
    assert (np.diff(doc.start[blocks.elements]) > 0).all()
    share = blocks.features[:, FEATURES.index("link_density")]
    assert ((share >= 0) & (share <= 1)).all()


def test_page_blocks_refuses_to_leave_a_feature_row_unwritten(monkeypatch: pytest.MonkeyPatch) -> None:
    """The matrix starts as np.empty: a column function that forgets a feature must fail loudly,
    not hand the trees whatever the memory held (and not only under asserts)."""
    import readerproxy.engine.learn.blocks.page as blocks
    from readerproxy.engine.learn.blocks import SECTION_FEATURES

    written = blocks.section_columns

    def one_short(*args, **kwargs):  # type: ignore[no-untyped-def]
        columns = dict(written(*args, **kwargs))
        columns.pop(SECTION_FEATURES[-1])
        return columns

    monkeypatch.setattr(blocks, "section_columns", one_short)
    with pytest.raises(RuntimeError, match=f"of {len(FEATURES)} feature rows"):
        _blocks(SYNTHETIC)


def test_features_describe_the_page() -> None:
    doc, blocks = _blocks(SYNTHETIC)
    texts = block_texts(doc, blocks)
    column = {name: blocks.features[:, i] for i, name in enumerate(FEATURES)}
    home = texts.index("Home")
    first_paragraph = next(i for i, text in enumerate(texts) if text.startswith("Sentence 0"))
    footer = next(i for i, text in enumerate(texts) if text.startswith("Copyright"))
    assert column["link_density"][home] == 1.0 and column["link_density"][first_paragraph] == 0.0
    assert column["in_nav"][home] == 1.0 and column["in_article"][first_paragraph] == 1.0
    assert column["in_footer"][footer] == 1.0 and column["in_article"][footer] == 0.0
    assert column["tag_p"][first_paragraph] == 1.0 and column["tag_li"][home] == 1.0
    assert column["heuristic_selected"][first_paragraph] == 1.0
    assert column["heuristic_selected"][footer] == 0.0
    assert column["position"][home] < column["position"][first_paragraph] < column["position"][footer]
    assert column["log_chars"][first_paragraph] > column["log_chars"][home]


THREAD = f"""<html><head><title>The river and its bridges - Forum</title></head><body>
<nav><a href="/">Home</a></nav>
<h1>The river and its bridges</h1>
<div class="posts">
{"".join(f'<div class="post"><time>May {i}</time><p>Post {i}: {ARTICLE[:200]}</p></div>' for i in range(5))}
</div>
<form><p>Write a reply to this thread here</p><textarea></textarea><button>Send</button></form>
</body></html>"""


def test_structure_features_see_repeated_items_forms_and_the_headline() -> None:
    doc, blocks = _blocks(THREAD)
    texts = block_texts(doc, blocks)
    column = {name: blocks.features[:, i] for i, name in enumerate(FEATURES)}
    posts = [i for i, text in enumerate(texts) if text.startswith("Post ")]
    headline = texts.index("The river and its bridges")
    reply = next(i for i, text in enumerate(texts) if text.startswith("Write a reply"))
    home = texts.index("Home")
    assert len(posts) == 5
    # The five posts are items of one group of five (the post div, one level above the paragraph).
    assert np.allclose(column["log_repeat"][posts], np.log(5))
    assert (column["repeat_level"][posts] == 1).all()
    assert np.allclose(np.expm1(column["repeat_item_index"][posts]), np.arange(5))
    assert (column["repeat_item_link_density"][posts] == 0).all()
    assert (column["log_time_grandparent"][posts] > 0).all()
    assert column["log_repeat"][headline] == 0.0
    # The reply box: form controls around it, none around the posts.
    assert (
        column["log_controls_grandparent"][reply] > 0
        and (column["log_controls_grandparent"][posts] == 0).all()
    )
    # The headline repeats the title; blocks after it come after it.
    assert column["title_overlap"][headline] == 1.0 and column["title_overlap"][posts[0]] == 0.0
    assert column["position_from_h1"][home] < 0 < column["position_from_h1"][posts[0]]
    assert column["position_from_h1"][headline] == 0.0


PRODUCT_BODY = " ".join(
    f"The kettle boils water in minute {i} and keeps it warm for hours." for i in range(8)
)
ARTICLE_PAGE = f"""<html><head><title>The river and its bridges</title>
<meta property="og:type" content="article">
<script type="application/ld+json">{
    json.dumps({"@context": "https://schema.org", "@type": ["NewsArticle"], "articleBody": ARTICLE[:600]})
}</script>
</head><body>
<article><h1>The river and its bridges</h1><p>{ARTICLE[:600]}</p>
<h2>3 Comments</h2>
{
    "".join(
        f'<div class="c"><time>May {i}</time><p>Comment {i}: nice piece about rivers and lakes</p><button>Reply</button></div>'
        for i in range(3)
    )
}
</article>
<ul>{
    "".join(
        f'<li><h3><a href="/t{i}">Teaser {i} about lakes</a></h3><img src="t{i}.jpg"><p>Short text {i} of a teaser</p></li>'
        for i in range(4)
    )
}</ul>
</body></html>"""
PRODUCT_PAGE = f"""<html><head><title>Kettle</title>
<script type="application/ld+json">{{"@context": "https://schema.org", "@type": "Product",
 "description": "{PRODUCT_BODY}", "offers": {{"@type": "Offer", "price": "20"}}}}</script>
</head><body><h1>Kettle</h1><p>{PRODUCT_BODY}</p><form><input name="q"><button>Buy</button></form></body></html>"""


def _named_columns(html: str) -> tuple[list[str], dict[str, np.ndarray]]:
    """The blocks' texts and their feature columns by name."""
    doc, blocks = _blocks(html)
    return block_texts(doc, blocks), {name: blocks.features[:, i] for i, name in enumerate(FEATURES)}


def _starting(texts: list[str], prefix: str) -> list[int]:
    return [i for i, text in enumerate(texts) if text.startswith(prefix)]


def test_page_type_features_read_json_ld_og_type_and_comment_sections() -> None:
    texts, column = _named_columns(ARTICLE_PAGE)
    body = _starting(texts, "Sentence 0")[0]
    comments = _starting(texts, "Comment ")
    teasers = _starting(texts, "Teaser ")
    assert (column["ld_article"] == 1).all() and (column["ld_product"] == 0).all()
    assert (column["og_article"] == 1).all() and (column["page_log_h1"] == np.log1p(1)).all()
    # The blocks after the "3 Comments" heading, and not the article before it.
    assert (column["after_comment_heading"][comments] == 1).all()
    assert column["after_comment_heading"][body] == 0
    assert 0 < column["comment_heading_position"][body] < 1
    # What the repeated items hold: a time and a reply button per comment, a heading link and an
    # image per teaser.
    assert (column["item_log_times"][comments] == np.log1p(1)).all()
    assert (column["item_log_controls"][comments] == np.log1p(1)).all()
    assert (column["item_log_headings"][teasers] == np.log1p(1)).all()
    assert (column["item_log_images"][teasers] == np.log1p(1)).all()
    # The article body is in the JSON-LD articleBody; the comments and teasers are not.
    assert column["ld_body_share"][body] == 1.0
    assert (column["ld_body_share"][comments] == 0).all() and column["ld_body_log_chars"][0] > 0

    _, blocks = _blocks(PRODUCT_PAGE)
    column = {name: blocks.features[:, i] for i, name in enumerate(FEATURES)}
    assert (column["ld_product"] == 1).all() and (column["ld_article"] == 0).all()
    assert (column["page_log_forms"] == np.log1p(1)).all() and (
        column["page_log_controls"] == np.log1p(2)
    ).all()
    assert (column["after_comment_heading"] == 0).all() and (column["comment_heading_position"] == -1).all()
    assert column["ld_body_share"].max() == 1.0
    # Without JSON-LD text every block says so.
    _, blocks = _blocks(SYNTHETIC)
    assert (blocks.features[:, FEATURES.index("ld_body_share")] == -1).all()


SECTIONS_PAGE = f"""<html><head><title>The river and its bridges</title>
<meta property="og:type" content="article"></head><body>
<div class="bar"><h4>Trending now</h4><p><a href="/x">A story about the weather in the mountains today</a></p></div>
<article><h1>The river and its bridges</h1><p>{ARTICLE[:900]}</p><p>{ARTICLE[900:]}</p></article>
<div class="more"><h2>Related articles</h2>{
    "".join(
        f'<div><h3><a href="/t{i}">Teaser {i} about lakes</a></h3><p>Short text {i} of a teaser</p></div>'
        for i in range(3)
    )
}</div>
<div id="talk"><h3>Leave a Reply</h3>{
    "".join(f"<div><p>Reader {i} says the piece about rivers and lakes was fine</p></div>" for i in range(3))
}</div>
</body></html>"""


def test_section_features_place_blocks_after_related_and_comment_headings() -> None:
    texts, column = _named_columns(SECTIONS_PAGE)
    bar = _starting(texts, "A story")[0]
    body = _starting(texts, "Sentence")
    teasers = _starting(texts, "Short text")
    readers = _starting(texts, "Reader")
    # "Trending now" comes before the headline: its box is after it, but the article is not.
    assert column["log_chars_since_related"][bar] > 0 and column["after_related_heading"][bar] == 0
    assert (column["after_related_heading"][body] == 0).all()
    # The teasers follow "Related articles" (after the h1), closer to it one by one.
    assert (column["after_related_heading"][teasers] == 1).all()
    since = column["log_chars_since_related"][teasers]
    assert (np.diff(since) > 0).all() and since[0] > 0
    assert (np.diff(column["log_headings_since_related"][teasers]) > 0).all()
    # The readers' comments follow "Leave a Reply"; nothing before it has a comment distance.
    assert (column["log_chars_since_comment"][readers] >= 0).all()
    assert (column["log_chars_since_comment"][[bar, *body, *teasers]] == -1).all()
    # A page without such headings: every block says so.
    _, blocks = _blocks(PRODUCT_PAGE)
    for name in ("log_chars_since_related", "log_chars_since_comment", "log_headings_since_related"):
        assert (blocks.features[:, FEATURES.index(name)] == -1).all()


def test_related_headings_in_other_languages() -> None:
    """`RELATED_HEADING` reads the "more from" and "most read" titles of German, Polish, French,
    Dutch and Italian news sites, and no title of the story's own sections."""
    from readerproxy.engine.learn.blocks import RELATED_HEADING

    for title in (
        "Schon gelesen?",
        "Auch interessant",
        "Das könnte Dich auch interessieren …",
        "Meistgelesen in der Rubrik",
        "Mehr aus der Sendung",
        "Weitere Beiträge zum Thema",
        "Ähnliche Beiträge",
        "Empfohlene Artikel",
        "Die Redaktion empfiehlt",
        "Beitrags-Navigation",
        "Czytaj też",
        "Zobacz także",
        "Voir aussi",
        "Lees ook",
        "Leggi anche",
    ):
        assert RELATED_HEADING.search(title), title
    for title in ("Weitere Informationen", "Die Brücke über den Rhein", "Mehrere Verletzte", "Kontakt"):
        assert not RELATED_HEADING.search(title), title


def test_comment_section_is_cut_on_article_pages_only() -> None:
    doc, blocks = _blocks(SECTIONS_PAGE)
    texts = block_texts(doc, blocks)
    outside = blocks.features[:, FEATURES.index("in_heuristic_root")] <= 0
    readers = np.array([text.startswith("Reader") for text in texts])
    assert outside[readers].all() and not outside.all()
    cut = comment_section(blocks.features, outside)
    assert cut[readers].all() and not cut[~readers].any()
    # The same page without an article type (a forum's replies are its content): nothing is cut.
    doc, blocks = _blocks(SECTIONS_PAGE.replace('<meta property="og:type" content="article">', ""))
    outside = blocks.features[:, FEATURES.index("in_heuristic_root")] <= 0
    assert not comment_section(blocks.features, outside).any()
    kept = extract(SECTIONS_PAGE, algorithm="learned").text
    assert "Sentence 29 of the article" in kept and "Reader 1 says" not in kept


def test_says_product_reads_json_ld_and_og_type() -> None:
    assert says_product(_blocks(PRODUCT_PAGE)[1].features)
    og = SYNTHETIC.replace("<html>", '<html><head><meta property="og:type" content="product.item"></head>')
    assert says_product(_blocks(og)[1].features)
    assert not says_product(_blocks(SYNTHETIC)[1].features)
    assert not says_product(_blocks(ARTICLE_PAGE)[1].features)
    assert not says_product(np.zeros((0, len(FEATURES))))


def test_a_page_shorter_than_short_page_chars_is_kept_whole() -> None:
    tiny = '<html><body><a href="javascript:"><p>abc</p><p>def</p> ghi</a></body></html>'
    # No block reaches p >= 1, yet the page is shorter than 200 characters: every block stays, the
    # trees' own selection (not a fallback) is the answer.
    article = extract(tiny, algorithm="learned", threshold="1", heuristic_threshold="1")
    assert article.text.split() == ["abc", "def", "ghi"] and article.algorithm == "learned"
    # With the rule off nothing is kept, and the fallback chain answers.
    article = extract(tiny, algorithm="learned", threshold="1", heuristic_threshold="1", short_page_chars="0")
    assert article.algorithm != "learned"


def test_labels_follow_the_reference_text() -> None:
    doc, blocks = _blocks(SYNTHETIC)
    reference = f"The river and its bridges\n\n{ARTICLE}"
    labels = label_blocks(doc, blocks, reference)
    texts = block_texts(doc, blocks)
    by_text = dict(zip(texts, labels.content.tolist(), strict=True))
    assert by_text["The river and its bridges"] is True
    assert all(by_text[t] for t in texts if t.startswith("Sentence"))
    assert by_text["Home"] is False and by_text["News"] is False  # single words absent from the reference
    assert not any(by_text[t] for t in texts if t.startswith(("Read also", "Copyright")))
    assert labels.overlap.max() == 1.0 and labels.tokens[texts.index("Home")] == 1
    # Half the words of a block in the reference: content at the threshold, by shingles not words.
    half = label_blocks(doc, blocks, ARTICLE[:900])
    assert half.content[texts.index(next(t for t in texts if t.startswith("Sentence 0")))]
    assert CONTENT_OVERLAP == 0.5


def test_sites_and_folds_keep_a_site_on_one_side() -> None:
    assert site_of_host("www.nytimes.com") == site_of_host("nytimes.co.uk") == "nytimes"
    assert site_of_host("edition.cnn.com") == "cnn" and site_of_host("blog.example.org") == "example"
    assert site_of_page("readability", "nytimes-3", None) == "nytimes"
    assert site_of_page("scrapinghub", "001", "https://www.wsj.com/articles/x") == "wsj"
    assert site_of_page("wcxb", "0001", "https://store.steampowered.com/app/1") == "steampowered"
    # The same site from two datasets lands in the same fold, whatever the number of folds.
    for folds in (2, 5, 7):
        a = fold_of_site(site_of_page("readability", "nytimes-1", None), folds)
        b = fold_of_site(site_of_page("scrapinghub", "9", "https://www.nytimes.com/2019/a.html"), folds)
        assert a == b and 0 <= a < folds
    assert len({fold_of_site(f"site{i}", 5) for i in range(200)}) == 5


def test_out_of_fold_scoring_uses_the_fold_model_of_the_page_site(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(json.dumps({"folds": 3}), encoding="utf-8")
    with pytest.raises(ValueError, match="fold model"):
        OutOfFold.load(tmp_path, "scrapinghub")
    for k in range(3):
        load_model().save(tmp_path / f"fold-{k}.npz")
    oof = OutOfFold.load(tmp_path, "scrapinghub")
    page = Page("1", tmp_path / "x.html", "", url="https://www.example.com/a")
    assert oof.fold(page) == fold_of_site("example", 3)
    with pytest.raises(ValueError, match="manifest"):
        OutOfFold.load(tmp_path / "absent", "scrapinghub")


def _random_model(seed: int = 0) -> tuple[TreeModel, object, np.ndarray]:
    lightgbm = pytest.importorskip("lightgbm", reason="the train extra (lightgbm) is not installed")
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(600, len(FEATURES)))
    x[:, 3] = np.round(x[:, 3])  # ties on thresholds
    y = (x[:, 0] + 0.5 * x[:, 3] - x[:, 7] * x[:, 1] > 0).astype(float)
    booster = lightgbm.train(
        {"objective": "binary", "num_leaves": 15, "verbose": -1, "num_threads": 1, "seed": seed},
        lightgbm.Dataset(x, label=y, feature_name=list(FEATURES)),
        num_boost_round=25,
    )
    return from_lightgbm_dump(booster.dump_model()), booster, x


def test_numpy_trees_match_lightgbm_predictions() -> None:
    model, booster, x = _random_model()
    raw = booster.predict(x, raw_score=True)  # type: ignore[attr-defined]
    assert np.allclose(model.log_odds(x), raw, atol=1e-9)
    assert np.allclose(model.probability(x), booster.predict(x), atol=1e-9)  # type: ignore[attr-defined]
    # On real block features too, after a round trip through the file format.
    _, blocks = _blocks(FIXTURES[0].read_text(encoding="utf-8"))
    assert np.allclose(model.log_odds(blocks.features), booster.predict(blocks.features, raw_score=True))  # type: ignore[attr-defined]


def test_averaged_trees_give_the_mean_log_odds_of_their_models() -> None:
    first, _, x = _random_model(0)
    second, _, _ = _random_model(1)
    averaged = average_trees([first, second])
    assert len(averaged.roots) == len(first.roots) + len(second.roots)
    assert np.allclose(averaged.log_odds(x), (first.log_odds(x) + second.log_odds(x)) / 2, atol=1e-9)
    assert average_trees([first]).log_odds(x) == pytest.approx(first.log_odds(x))


def test_model_file_round_trip_and_errors(tmp_path: Path) -> None:
    model = load_model()
    path = tmp_path / "copy.npz"
    model.save(path)
    again = load_model(str(path))
    _, blocks = _blocks(SYNTHETIC)
    args = (blocks.features, blocks.parent, blocks.grandparent)
    assert np.array_equal(again.probability(*args), model.probability(*args))
    with pytest.raises(ValueError, match=r"^model .*cannot load"):
        load_model(str(tmp_path / "missing.npz"))
    broken = tmp_path / "other.npz"
    arrays = {k: v for k, v in np.load(path).items() if k != "first_features"}
    np.savez(broken, **arrays, first_features=np.array(["x"]))
    with pytest.raises(ValueError, match="other features"):
        load_model(str(broken))


def test_context_features_look_around_each_block() -> None:
    p = np.array([0.1, 0.9, 0.2, 0.8, 0.7])
    parent = np.array([1, 2, 2, 2, 3])
    context = context_features(p, np.array([10.0, 100, 10, 100, 10]), parent, np.zeros(5, dtype=np.int64))
    assert context.shape == (5, len(CONTEXT_FEATURES))
    column = {name: context[:, i] for i, name in enumerate(CONTEXT_FEATURES)}
    assert np.array_equal(column["p"], p)
    assert column["prev_p"][1] == 0.1 and column["prev_p"][0] == 0.0 and column["next_p"][3] == 0.7
    assert np.isclose(column["parent_mean_p"][2], (0.9 + 0.2 + 0.8) / 3)
    assert np.allclose(column["grandparent_mean_p"], p.mean())
    assert column["window_max_p"][0] == 0.9 and column["window_min_p"][4] == 0.2
    assert np.allclose(column["page_max_p"], 0.9)
    assert context_features(np.zeros(0), np.zeros(0), parent[:0], parent[:0]).shape == (
        0,
        len(CONTEXT_FEATURES),
    )


def test_shipped_model_loads_and_learned_reads_every_fixture() -> None:
    assert SHIPPED_MODEL.is_file()
    model = load_model()
    assert model.first.features == FEATURES and len(model.first.roots) > 0
    assert model.second.features == FEATURES + CONTEXT_FEATURES
    for path in FIXTURES:
        html = path.read_text(encoding="utf-8")
        if not extract(html, algorithm="baseline").text:  # a page whose text only its script writes
            continue
        for algorithm in ("learned", "auto"):
            article = extract(html, algorithm=algorithm)
            assert article.text.strip(), (path.name, algorithm)


def test_learned_keeps_the_article_and_drops_the_chrome() -> None:
    article = extract(SYNTHETIC, algorithm="learned")
    assert "Sentence 29 of the article" in article.text
    assert "Home" not in article.text.split() and "Copyright" not in article.text
    assert article.algorithm == "learned"
    probability = article.extraction.signals["learned_probability"]
    assert ((probability >= 0) & (probability <= 1)).all()


def test_learned_never_returns_an_empty_page_and_checks_its_parameters() -> None:
    tiny = "<html><body><span>Just a few words here &amp; there.</span></body></html>"
    assert extract(tiny, algorithm="learned").text == "Just a few words here & there."
    assert extract("<html><body></body></html>", algorithm="learned").text == ""
    with pytest.raises(ValueError, match="threshold"):
        extract(SYNTHETIC, algorithm="learned", threshold="2")
    with pytest.raises(ValueError, match="cannot load block model"):
        extract(SYNTHETIC, algorithm="learned", model="/nonexistent/model.npz")


@pytest.mark.skipif(datasets_root() is None, reason="../shared/datasets is not present")
def test_train_runs_end_to_end_on_a_few_pages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("lightgbm", reason="the train extra (lightgbm) is not installed")
    out = tmp_path / "model.npz"
    args = [
        "train",
        "--limit",
        "4",
        "--folds",
        "2",
        "--rounds",
        "5",
        "--oof-dir",
        str(tmp_path),
        "--out",
        str(out),
    ]
    assert main(args) == 0
    assert "out-of-fold block selection" in capsys.readouterr().out
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["folds"] == 2 and len(manifest["pages"]) == 12
    # No site in two folds.
    folds_of_site: dict[str, set[int]] = {}
    for entry in manifest["pages"].values():
        folds_of_site.setdefault(entry["site"], set()).add(entry["fold"])
    assert all(len(f) == 1 for f in folds_of_site.values())
    first = out.read_bytes()
    assert main([*args]) == 0  # from the cache: the same weights (fixed seed, deterministic)
    assert out.read_bytes() == first
    assert load_model(str(out)).first.features == FEATURES
    provenance = load_model(str(out)).provenance
    assert provenance is not None and provenance.made_by == "readerproxy train"
    assert provenance.features == code_feature_hash() and provenance.parameters["rounds"] == 5
    assert {name: record["pages"] for name, record in provenance.datasets.items()} == {
        "scrapinghub": 4,
        "readability": 4,
        "wcxb-dev": 4,
    }
    fold = load_model(str(tmp_path / "fold-1.npz")).provenance
    assert fold is not None and (fold.parameters["fold"], fold.parameters["folds"]) == (1, 2)
    assert provenance.parameters["fold"] is None
    capsys.readouterr()
    assert (
        main(
            [
                "eval",
                "--dataset",
                "scrapinghub",
                "--limit",
                "4",
                "--algo",
                "learned",
                "--oof",
                str(tmp_path),
                "--no-progress",
            ]
        )
        == 0
    )
    assert "learned" in capsys.readouterr().out


def test_train_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "--folds", "1"]) == 2
    assert "--folds" in capsys.readouterr().err


def test_a_request_cannot_name_a_model_file() -> None:
    query = {"url": "http://127.0.0.1/", "model": "/etc/passwd", "threshold": "0.6"}
    with pytest.raises(RequestError, match="parameter model names a file on the server"):
        algorithm_params(query, "learned")
    del query["model"]
    assert algorithm_params(query, "learned") == {"threshold": "0.6"}


def test_containing_counts_what_a_token_mask_per_kind_says() -> None:
    doc = parse(SYNTHETIC + "<div><br><section><p>x<img></p></section></div>")
    kind = np.array([len(name) % 3 for name in doc.tag], dtype=np.int64)
    positions = np.arange(len(doc.tokens))
    for first in (doc.start, doc.start + 1):  # with the start tag, and strictly inside (voids: empty)
        counts = _containing(kind, first, doc.end, 3, positions)
        for k in range(3):
            mine = np.flatnonzero(kind == k)
            assert np.array_equal(counts[k] > 0, ranges_mask(len(doc.tokens), first[mine], doc.end[mine]))
    assert _containing(np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0), 2, positions).shape == (
        2,
        len(positions),
    )


def test_block_depth_counts_ancestors() -> None:
    doc, blocks = _blocks(SYNTHETIC + "<div><br><section><p>deep <b>text</b> here<img></p></section></div>")
    chain = []
    for element in blocks.elements.tolist():
        depth, up = 0, int(doc.parent[element])
        while up >= 0:
            depth, up = depth + 1, int(doc.parent[up])
        chain.append(depth)
    assert blocks.features[:, FEATURES.index("depth")].tolist() == chain and max(chain) >= 4


GALLERY_PAGE = f"""<html><head><meta property="og:type" content="article"></head><body>
<article class="post"><h1>The river and its bridges</h1><p>{ARTICLE[:900]}</p>
<div class="photo-gallery"><ul><li><figure><img src="1.jpg"><figcaption>The old bridge at dawn, seen
from the east bank of the river</figcaption></figure></li><li><figure><img src="2.jpg"><figcaption>The new
bridge at night, lit from below by the city</figcaption></figure></li></ul>
<button>Caption</button><button>Close</button></div>
<p>{ARTICLE[900:]}</p>
<div class="slideshow-far"><div><div><div><div><div><div><div><div>
<p>Nine levels below a slideshow: too far to be its caption, far enough to be the article</p>
</div></div></div></div></div></div></div></div></div>
</article></body></html>"""


def test_gallery_section_finds_blocks_within_eight_levels_of_a_gallery() -> None:
    doc, blocks = _blocks(GALLERY_PAGE)
    texts = [" ".join(text.split()) for text in block_texts(doc, blocks)]
    inside = gallery_section(doc, blocks.elements)
    captions = np.array(
        [text.startswith(("The old bridge", "The new bridge", "Caption", "Close")) for text in texts]
    )
    assert captions.sum() == 4 and inside[captions].all()
    assert not inside[~captions].any()  # the article's paragraphs, and the block nine levels down
    assert GALLERY_LEVELS == 8 and any(text.startswith("Nine levels") for text in texts)
    # One wrapper fewer: the slideshow is eight levels up, and its block counts.
    nearer = GALLERY_PAGE.replace("<div><div>\n<p>Nine", "<div>\n<p>Nine").replace(
        "</p>\n</div></div>", "</p>\n</div>"
    )
    doc, blocks = _blocks(nearer)
    nine = np.array([text.startswith("Nine") for text in block_texts(doc, blocks)])
    assert nearer != GALLERY_PAGE and nine.sum() == 1 and gallery_section(doc, blocks.elements)[nine].all()
    plain = GALLERY_PAGE.replace("photo-gallery", "photos-box").replace("slideshow-far", "far")
    doc, blocks = _blocks(plain)
    assert not gallery_section(doc, blocks.elements).any()


def test_gallery_threshold_holds_on_article_pages_only() -> None:
    strict = extract(GALLERY_PAGE, algorithm="learned", gallery_threshold="1").text
    assert "Sentence 29 of the article" in strict and "The old bridge at dawn" not in strict
    assert "Nine levels below" in extract(GALLERY_PAGE, algorithm="learned", gallery_threshold="1").text
    # Without an article type the rule does not hold: the same as with the rule off.
    other = GALLERY_PAGE.replace('<meta property="og:type" content="article">', "")
    assert (
        extract(other, algorithm="learned", gallery_threshold="1").text
        == extract(other, algorithm="learned", gallery_threshold="none").text
    )
    with pytest.raises(ValueError, match="gallery_threshold"):
        extract(GALLERY_PAGE, algorithm="learned", gallery_threshold="1.5")


@pytest.mark.parametrize(
    ("classes", "wide"),
    [
        ("well well-sm visible-lg visible-md", True),  # Bootstrap 3: shown on md and lg only
        ("sidebar hidden-xs", True),
        ("visible-md visible-sm", False),  # shown on a tablet too
        ("visible-xs", False),
        ("d-none d-lg-block", True),  # Bootstrap 4-5
        ("d-none", False),  # hidden everywhere: the Document has dropped it, or a script shows it
        ("d-block d-md-none", False),  # shown on phones only
        ("hidden md:flex", True),  # Tailwind
        ("hidden", False),
        ("md:hidden", False),
        ("show-for-large", True),  # Foundation
        ("desktop-only ad", True),
        ("col-md-3", False),
        ("x-hidden-xs", False),  # a word that only contains one
    ],
)
def test_wide_only_reads_responsive_classes(classes: str, wide: bool) -> None:
    assert wide_only(classes) is wide
    assert bool(class_value_bits(classes, True) & WIDE_ONLY_BIT) is wide
    assert not class_value_bits(classes, False) & WIDE_ONLY_BIT  # an id says nothing of screens


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "hidden",
                "hidden-xs",
                "visible-md",
                "visible-lg-block",
                "visible-sm",
                "show-for-large",
                "hide-for-small",
                "desktop-only",
                "only-desktop",
                "hide-mobile",
                "no-mobile",
                "hidden-phone",
                "d-none",
                "d-md-block",
                "md:flex",
                "lg:block",
                "col-md-3",
                "x",
                "hid",
                "-",
                "\n",
                "\t",
                " ",
            ]
        ),
        max_size=6,
    ).map(" ".join)
    | st.text(alphabet="hidenvsbl-:xo \n", max_size=14)
)
def test_wide_only_answers_at_once_only_where_no_pattern_can_match(classes: str) -> None:
    """A class list holding none of `_WIDE_ONLY_PARTS` is answered without a search: the same
    answer as searching every pattern, for any list."""
    assert wide_only(classes) is wide_only_searched(classes)


def test_class_value_bits_sit_above_the_class_word_categories() -> None:
    assert (1 << len(CLASS_WORDS)) <= WIDE_ONLY_BIT < CAPTION_BIT <= 1 << 15  # uint16 in the memo
    assert class_value_bits("wp-caption-text", True) == CAPTION_BIT
    assert class_value_bits("imageCaption", False) == CAPTION_BIT
    assert class_value_bits("hidden-xs wp-caption", True) == CAPTION_BIT | WIDE_ONLY_BIT


#: Thresholds at which every block passes the trees, so that a rule alone decides.
EVERY_BLOCK = {"threshold": "0", "outside_threshold": "0"}

WIDE_ONLY_PAGE = f"""<html><body><div class="row">
<div class="col-md-3"><div class="well visible-lg visible-md"><h4>Categories</h4><ul>
{"".join(f'<li><a href="/c/{i}">Category number {i}</a></li>' for i in range(12))}</ul></div>
<select class="visible-xs"><option>Choose a category</option><option>Health and safety</option>
<option>Roads and bridges</option></select></div>
<div class="col-md-9"><h1>The river and its bridges</h1><p>{ARTICLE[:900]}</p><p>{ARTICLE[900:]}</p></div>
</div></body></html>"""


def test_wide_only_section_and_choice_blocks_find_their_blocks() -> None:
    doc, blocks = _blocks(WIDE_ONLY_PAGE)
    texts = [" ".join(text.split()) for text in block_texts(doc, blocks)]
    wide = wide_only_section(doc, blocks.elements)
    assert [t for t, w in zip(texts, wide, strict=True) if w] == ["Categories"] + [
        f"Category number {i}" for i in range(12)
    ]
    choices = choice_blocks(doc, blocks.elements)
    assert [t for t, c in zip(texts, choices, strict=True) if c] == [
        "Choose a category",
        "Health and safety",
        "Roads and bridges",
    ]


def test_choice_blocks_take_a_drop_downs_label_and_run_after_the_cards_are_added() -> None:
    form = (
        '<html><body><main><p>Pick a size for the bag you want.</p><label for="size">Size</label>'
        '<select id="size"><option>1 bag</option><option>2 bags</option></select>'
        '<label for="note">Your note</label><input id="note"></main></body></html>'
    )
    doc, blocks = _blocks(form)
    texts = [" ".join(text.split()) for text in block_texts(doc, blocks)]
    choices = choice_blocks(doc, blocks.elements)
    assert [t for t, c in zip(texts, choices, strict=True) if c] == ["Size", "1 bag", "2 bags"]
    # A shop's cards, each with a quick-buy drop-down: `listing_items` adds the cards, and the
    # options that come with them go after.
    names = ["Dark Roast", "Light Roast", "Blueberry", "Vanilla", "Mocha Latte", "Cold Brew", "Espresso"]
    cards = "".join(
        f'<li class="card"><h3><a href="/p/{i}">{name} Coffee</a></h3><div>${15 + i}.99</div>'
        f'<select id="o{i}"><option>{i + 1} bags of coffee</option><option>a box</option></select></li>'
        for i, name in enumerate(names)
    )
    shop = f'<html><body><main><h1>Coffee</h1><ul class="grid">{cards}</ul></main></body></html>'
    text = extract(shop, url="https://shop.example/coffee", algorithm="learned", threshold="1").text
    assert all(f"{name} Coffee" in text for name in names) and "$21.99" in text
    assert "bags of coffee" not in text
    off = extract(
        shop, url="https://shop.example/coffee", algorithm="learned", threshold="1", cut_choices="false"
    )
    assert "bags of coffee" in off.text  # they came with the cards
    names_order = [rule.name for rule in POST_RULES]
    assert names_order.index("listing_items") < names_order.index("choices")


def test_wide_only_threshold_and_cut_choices_drop_a_sidebar_inside_the_article_row() -> None:
    kept = extract(
        WIDE_ONLY_PAGE, algorithm="learned", wide_only_threshold="none", cut_choices="false", **EVERY_BLOCK
    ).text
    assert "Category number 3" in kept and "Health and safety" in kept and "Sentence 29" in kept
    text = extract(WIDE_ONLY_PAGE, algorithm="learned", wide_only_threshold="1", **EVERY_BLOCK).text
    assert "Sentence 29 of the article" in text
    assert "Category number" not in text and "Health and safety" not in text
    with pytest.raises(ValueError, match="wide_only_threshold"):
        extract(WIDE_ONLY_PAGE, algorithm="learned", wide_only_threshold="2")


BRANDS = ("Acme", "Bolt", "Crest", "Dune", "Ember", "Fjord")
FILTERS_PAGE = f"""<html><body><main><h1>Bike helmets</h1>
<aside class="refine"><h3>Brand</h3><ul>
{"".join(f'<li><label><input type="checkbox" name="b" value="{b}"> {b} (12)</label></li>' for b in BRANDS)}
</ul><h3>Colour</h3><div>
{"".join(f'<span role="checkbox" aria-checked="false">{c}</span>' for c in ("Red", "Blue", "Black"))}
</div><a href="?all">Show more</a></aside>
<section class="grid">{
    "".join(
        f'<div class="card"><a href="/p/{i}"><h2>{b} helmet {i}</h2></a><p>A light helmet with vents and a visor, '
        f"rated for road and trail riding, number {i}.</p><p>$89.95</p></div>"
        for i, b in enumerate(BRANDS * 2)
    )
}</section></main></body></html>"""
CHECKLIST_PAGE = f"""<html><body><article><h1>Wedding budget checklist</h1><p>{ARTICLE[:600]}</p><ul>
{"".join(f'<li><input type="checkbox"> Venue rental fee for the ceremony and the reception, item {i}</li>' for i in range(8))}
</ul><p>{ARTICLE[600:1200]}</p></article></body></html>"""


def test_filter_panels_find_the_facets_beside_a_product_grid() -> None:
    doc, blocks = _blocks(FILTERS_PAGE)
    texts = [" ".join(text.split()) for text in block_texts(doc, blocks)]
    panel = filter_panels(doc, blocks.elements)
    found = [t for t, p in zip(texts, panel, strict=True) if p]
    assert "Brand" in found and "Colour" in found and "Acme (12)" in found and "Red Blue Black" in found
    assert "Show more" in found
    assert not any("helmet" in t or "$89.95" in t for t in found)


def test_filter_panels_leave_a_checklist_whose_items_are_sentences() -> None:
    doc, blocks = _blocks(CHECKLIST_PAGE)
    assert not filter_panels(doc, blocks.elements).any()
    # a table of check boxes is a form or the page's data (csrankings.org's areas), not facets
    table = FILTERS_PAGE.replace('<aside class="refine">', "<table><tbody><tr><td>").replace(
        "</aside>", "</td></tr></tbody></table>"
    )
    table = table.replace("<li><label>", "<tr><td><label>").replace("</label></li>", "</label></td></tr>")
    doc, blocks = _blocks(table)
    assert not filter_panels(doc, blocks.elements).any()


def test_cut_filters_drops_the_facets_and_keeps_the_grid() -> None:
    kept = extract(FILTERS_PAGE, algorithm="learned", cut_filters="false", **EVERY_BLOCK).text
    assert "Acme (12)" in kept and "Bolt helmet 1" in kept
    text = extract(FILTERS_PAGE, algorithm="learned", **EVERY_BLOCK).text
    assert "Bolt helmet 1" in text and "$89.95" in text
    assert "Acme (12)" not in text and "Show more" not in text
    checklist = extract(CHECKLIST_PAGE, algorithm="learned", **EVERY_BLOCK).text
    assert "Venue rental fee for the ceremony and the reception, item 7" in checklist


CAPTION = "The festival's opening night on the main stage in the park"
CAPTIONS_PAGE = f"""<html><body><article><h1>The festival</h1><p>{ARTICLE[:900]}</p>
{"".join(f'<div class="wp-caption"><img src="{i}.jpg"><p class="wp-caption-text">{CAPTION}</p></div>' for i in range(4))}
<figure><img src="x.jpg"><figcaption>{CAPTION}</figcaption></figure>
<figure><img src="y.jpg"><figcaption>A different caption of the last photo of the night</figcaption></figure>
<p>{ARTICLE[900:]}</p><p>{CAPTION}</p><p>{CAPTION}</p></article></body></html>"""


def test_repeated_captions_keeps_the_first_of_each_caption_and_every_paragraph() -> None:
    doc, blocks = _blocks(CAPTIONS_PAGE)
    texts = [" ".join(text.split()) for text in block_texts(doc, blocks)]
    keep = np.ones(len(texts), dtype=bool)
    repeated = repeated_captions(doc, blocks, keep)
    tags = [doc.tag[int(e)] for e in blocks.elements]
    assert [(t, tag) for t, tag, r in zip(texts, tags, repeated, strict=True) if r] == [
        (CAPTION, "p")
    ] * 3 + [(CAPTION, "figcaption")]
    assert sum(t == CAPTION for t in texts) == 7  # the first caption and both paragraphs stay
    # Only kept captions count: with the first one dropped, the second is the first kept.
    first = texts.index(CAPTION)
    keep[first] = False
    assert repeated_captions(doc, blocks, keep).sum() == 3
    text = extract(CAPTIONS_PAGE, algorithm="learned").text
    assert text.count(CAPTION) == 3 and "A different caption" in text
    assert extract(CAPTIONS_PAGE, algorithm="learned", cut_caption_repeats="false").text.count(CAPTION) == 7


def _teasers_page(items: int) -> str:
    teasers = "".join(
        f'<li><a href="/story-{i}">Story number {i} about the city council</a> <span>The council met on '
        f"Monday to discuss the budget of the coming year and the roads that need...</span></li>"
        for i in range(items)
    )
    return f"""<html><head><meta property="og:type" content="article"></head><body>
<div class="ticker"><b>Breaking News</b><ul>{teasers}</ul></div>
<article><h1>The river and its bridges</h1><p>{ARTICLE[:900]}</p><p>{ARTICLE[900:]} And then...</p></article>
</body></html>"""


TEASERS_PAGE = _teasers_page(4)


def test_teaser_blocks_are_linked_excerpts_cut_short_three_or_more() -> None:
    doc, blocks = _blocks(TEASERS_PAGE)
    texts = [" ".join(text.split()) for text in block_texts(doc, blocks)]
    teasers = teaser_blocks(doc, blocks)
    assert [t[:14] for t, cut in zip(texts, teasers, strict=True) if cut] == [
        f"Story number {i}" for i in range(4)
    ]
    # The article's paragraph ends with "..." too, but holds no link.
    assert not any(cut for t, cut in zip(texts, teasers, strict=True) if t.startswith("Sentence"))
    # Two teasers are not a list; nor are three when one holds no link.
    doc, blocks = _blocks(_teasers_page(2))
    assert not teaser_blocks(doc, blocks).any()
    linked = '<a href="/story-2">Story number 2 about the city council</a>'
    doc, blocks = _blocks(_teasers_page(3).replace(linked, "<b>Story number 2 about the city council</b>"))
    assert not teaser_blocks(doc, blocks).any()
    assert "Story number 1" not in extract(TEASERS_PAGE, algorithm="learned", **EVERY_BLOCK).text
    assert (
        "Story number 1"
        in extract(TEASERS_PAGE, algorithm="learned", cut_teasers="false", **EVERY_BLOCK).text
    )
    # Not on a page that does not say it is an article: a listing's excerpts are its content.
    listing = TEASERS_PAGE.replace('<meta property="og:type" content="article">', "")
    assert "Story number 1" in extract(listing, algorithm="learned", **EVERY_BLOCK).text


def _link_list_page(items: int, paragraphs: int = 2) -> str:
    """An article with a list of other stories' linked headlines between its paragraphs."""
    others = "".join(
        f'<li><a href="/other-{i}">Other story number {i} about the harbour</a></li>' for i in range(items)
    )
    body = "".join(f"<p>{ARTICLE}</p>" for _ in range(paragraphs))
    return f"""<html><head><meta property="og:type" content="article"></head><body>
<article><h1>The river and its bridges</h1><p>{ARTICLE}</p><div class="x"><h4>Don't miss</h4><ul>{others}</ul></div>
{body}</article></body></html>"""


def test_link_runs_are_three_or_more_short_links_in_a_row_on_an_article() -> None:
    doc, blocks = _blocks(_link_list_page(4))
    texts = [" ".join(text.split()) for text in block_texts(doc, blocks)]
    every = np.ones(len(texts), dtype=bool)
    found = link_runs(blocks, every, 3)
    assert [t for t, cut in zip(texts, found, strict=True) if cut] == [
        f"Other story number {i} about the harbour" for i in range(4)
    ]
    # Two links are not a list; a run longer than `least` needs more blocks.
    doc, blocks = _blocks(_link_list_page(2))
    assert not link_runs(blocks, np.ones(len(blocks.elements), dtype=bool), 3).any()
    doc, blocks = _blocks(_link_list_page(4))
    assert not link_runs(blocks, np.ones(len(blocks.elements), dtype=bool), 5).any()
    # Only kept blocks are reported.
    assert not link_runs(blocks, np.zeros(len(blocks.elements), dtype=bool), 3).any()
    # A page that is mostly such lists (Wikipedia's "List of ...") keeps them: they are its content.
    doc, blocks = _blocks(_link_list_page(60, paragraphs=0))
    assert not link_runs(blocks, np.ones(len(blocks.elements), dtype=bool), 3).any()
    # Through auto: dropped on an article, kept with the rule off and on a page not saying article.
    page = _link_list_page(4)
    assert "Other story number 1" not in extract(page, algorithm="learned", **EVERY_BLOCK).text
    assert (
        "Other story number 1" in extract(page, algorithm="learned", link_run_blocks="0", **EVERY_BLOCK).text
    )
    plain = page.replace('<meta property="og:type" content="article">', "")
    assert "Other story number 1" in extract(plain, algorithm="learned", **EVERY_BLOCK).text


def _schedule_page(rows: int, header: str = "<tr><th>Date</th><th>Topic</th><th>Readings</th></tr>") -> str:
    """An article with a data table of lectures (a header row, then one row per lecture)."""
    body = "".join(
        f"<tr><td>Sep {i + 1}</td><td>Lecture {i} on tensors</td><td>Paper number {i} by its authors</td></tr>"
        for i in range(rows)
    )
    return f"""<html><body><article><h1>The course</h1><p>{ARTICLE}</p>
<table>{header}{body}</table></article></body></html>"""


def test_whole_tables_keep_a_data_table_kept_in_part_whole() -> None:
    doc, blocks = _blocks(_schedule_page(10))
    texts = [" ".join(text.split()) for text in block_texts(doc, blocks)]
    in_table = np.array(
        [t.startswith(("Sep", "Lecture", "Paper", "Date", "Topic", "Readings")) for t in texts]
    )
    # The first three rows kept (9 of the 33 cells' words): the whole table is added.
    some = ~in_table.copy()
    some[np.flatnonzero(in_table)[3:12]] = True
    found = whole_tables(doc, blocks, some, 0.2)
    assert (found == in_table).all()
    # Under the share, or with the rule off, nothing is added.
    one_row = ~in_table.copy()
    one_row[np.flatnonzero(in_table)[3:6]] = True
    assert not whole_tables(doc, blocks, one_row, 0.2).any()
    assert not whole_tables(doc, blocks, some, 0.0).any()
    # Not a data table: no header cell, too few rows, or a table holding another (a layout table).
    nested = _schedule_page(10).replace("<td>Sep 1</td>", "<td><table><tr><td>Sep 1</td></tr></table></td>")
    for page in (_schedule_page(10, header=""), _schedule_page(1), nested):
        doc, blocks = _blocks(page)
        assert not data_tables(doc)
        assert not whole_tables(doc, blocks, np.ones(len(blocks.elements), dtype=bool), 0.2).any()


def _steps_page(items: int, linked: bool = False) -> str:
    """An article with a list of steps, each a sentence (or, `linked`, a link to another page)."""
    step = (
        '<a href="/step-{i}">Step {i} of the recipe, as another page</a>'
        if linked
        else "Step {i}: stir the pot slowly for two minutes."
    )
    steps = "".join(f"<li>{step.format(i=i)}</li>" for i in range(items))
    return (
        f"""<html><body><article><h1>The soup</h1><p>{ARTICLE}</p><ol>{steps}</ol></article></body></html>"""
    )


def test_whole_lists_keep_a_list_of_prose_kept_in_part_whole() -> None:
    doc, blocks = _blocks(_steps_page(6))
    texts = [" ".join(text.split()) for text in block_texts(doc, blocks)]
    steps = np.array([t.startswith("Step") for t in texts])
    assert steps.sum() == 6
    some = ~steps.copy()
    some[np.flatnonzero(steps)[:2]] = True  # two of six steps kept: a third of the list's words
    assert (whole_lists(doc, blocks, some, 0.3) == steps).all()
    one = ~steps.copy()
    one[np.flatnonzero(steps)[:1]] = True
    assert not whole_lists(doc, blocks, one, 0.3).any()
    assert not whole_lists(doc, blocks, some, 0.0).any()
    # Not a list of prose: two items, a list of links, a list holding a <nav>.
    for page in (
        _steps_page(2),
        _steps_page(6, linked=True),
        _steps_page(6).replace("<li>Step 0", "<li><nav>Menu</nav>Step 0"),
        _steps_page(6).replace("<li>Step 0", '<li><div class="signature">Posted by ana</div>Step 0'),
    ):
        doc, blocks = _blocks(page)
        assert not prose_lists(doc)
        assert not whole_lists(doc, blocks, np.ones(len(blocks.elements), dtype=bool), 0.3).any()
    # It runs before the rules that drop blocks (they still take out what does not belong).
    names = [rule.name for rule in POST_RULES]
    assert names.index("whole_lists") < min(
        names.index(rule.name) for rule in POST_RULES if rule.effect == "drop"
    )


def _feed_page(cards: int, words: int) -> str:
    card = " ".join(["The other story goes on about something else entirely."] * (words // 9))
    return f"""<html><head><meta property="og:type" content="article"></head><body>
<article class="single-story"><h2>The river and its bridges</h2><p>{ARTICLE[:900]}</p><p>{ARTICLE[900:]}</p></article>
<h3>Want more stories like this?</h3>
{"".join(f'<article class="card"><h2><a href="/s/{i}">Card {i}</a></h2><p>{card}</p></article>' for i in range(cards))}
</body></html>"""


def test_other_articles_are_the_small_articles_beside_the_main_one() -> None:
    doc, blocks = _blocks(_feed_page(3, 90))
    texts = [" ".join(text.split()) for text in block_texts(doc, blocks)]
    keep = np.ones(len(texts), dtype=bool)
    other = other_articles(doc, blocks, keep)
    assert other.any() and all(t.startswith(("Card", "The other story")) for t in np.array(texts)[other])
    assert not any(o for t, o in zip(texts, other, strict=True) if t.startswith(("Sentence", "Want more")))
    # Cards as long as the story (over OTHER_ARTICLE_MAX_SHARE of it) are posts of a thread, not a feed.
    doc, blocks = _blocks(_feed_page(3, 400))
    assert not other_articles(doc, blocks, np.ones(len(blocks.elements), dtype=bool)).any()
    # So many cards that the story keeps under MAIN_ARTICLE_MIN_SHARE of the words: no main article.
    doc, blocks = _blocks(_feed_page(12, 90))
    assert not other_articles(doc, blocks, np.ones(len(blocks.elements), dtype=bool)).any()
    page = _feed_page(3, 90)
    assert "Card 1" not in extract(page, algorithm="learned", **EVERY_BLOCK).text
    assert "Card 1" in extract(page, algorithm="learned", cut_other_articles="false", **EVERY_BLOCK).text
    forum = page.replace(
        "</head>", '<script type="application/ld+json">{"@type": "DiscussionForumPosting"}</script></head>'
    )
    assert "Card 1" in extract(forum, algorithm="learned", **EVERY_BLOCK).text


EMBED_PAGE = f"""<html><body><article><h1>The slogan</h1><p>{ARTICLE[:900]}</p>
<p>A whole lot of people noticed the new slogan of the state:</p>
<blockquote class="twitter-tweet"><p lang="en">Yes this is real and yes the state spent nearly half a million dollars
on it <a href="https://t.co/x">https://t.co/x</a></p>— Somebody (@somebody) <a href="https://x.com/s/1">November 18,
2019</a></blockquote><p>{ARTICLE[900:]}</p></article>
<div class="sidebar"><blockquote class="twitter-tweet"><p>Follow us for more news from the state and the city</p>
</blockquote></div></body></html>"""


def test_embedded_posts_inside_the_root_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    doc, blocks = _blocks(EMBED_PAGE)
    texts = [" ".join(text.split()) for text in block_texts(doc, blocks)]
    embedded = embedded_posts(doc, blocks.elements)
    # The blockquote's own text (the author line) and its paragraph, in the article and in the sidebar.
    assert sorted(t[:12] for t, e in zip(texts, embedded, strict=True) if e) == [
        "Follow us fo",
        "Yes this is ",
        "— Somebody (",
    ]
    # Trees that call the quoted posts boilerplate (p 0.1) and the rest content (p 0.9).
    scores = np.where(embedded, 0.1, 0.9)

    class Trees:
        def probability(self, *_: object) -> np.ndarray:
            return scores

    monkeypatch.setattr(learned_module.learn_model, "load_model", lambda path="": Trees())
    text = extract(EMBED_PAGE, algorithm="learned").text
    assert "half a million dollars" in text and "@somebody" in text
    assert "Follow us" not in text  # the sidebar's post is outside the heuristic's root
    text = extract(EMBED_PAGE, algorithm="learned", keep_embeds="false").text
    assert "half a million dollars" not in text and "Sentence 29 of the article" in text


GUIDE = [
    f"Part {i} of the buying guide explains how to choose a suitcase for a short trip by plane."
    for i in range(6)
]
STEP = [
    "Then edit the repository configuration:",
    "$ hg config --edit --local here",
    "and add the same text.",
]
COPIES_PAGE = f"""<html><body><main><h1>Carry-on luggage</h1>
<section class="grid">{"".join(f'<div class="card"><a href="/s/{i}">Suitcase {i}</a><p>$1{i}9</p></div>' for i in range(8))}</section>
<div class="guide mobile">{"".join(f"<p>{p}</p>" for p in GUIDE)}</div>
<div class="guide desktop">{"".join(f"<p>{p}</p>" for p in GUIDE)}</div>
<div class="steps">{"".join(f"<p>{p}</p>" for p in STEP)}<p>{ARTICLE[:400]}</p>{"".join(f"<p>{p}</p>" for p in STEP)}</div>
<div class="filler">{"".join(f"<p>{ARTICLE[:300]}</p>" for _ in range(4))}</div>
</main></body></html>"""


def test_repeated_blocks_drop_a_copied_section_and_keep_a_step_or_a_paragraph_written_again() -> None:
    doc, blocks = _blocks(COPIES_PAGE)
    texts = [" ".join(text.split()) for text in block_texts(doc, blocks)]
    repeated = repeated_blocks(doc, blocks, np.ones(len(texts), dtype=bool))
    dropped = [t for t, r in zip(texts, repeated, strict=True) if r]
    assert dropped == GUIDE  # the second copy of the guide, once
    # a short run of steps written twice, and one paragraph repeated on its own, stay
    assert sum(t in STEP for t in texts) == 6 and not any(t in STEP for t in dropped)
    assert not any(t.startswith(ARTICLE[:30]) for t in dropped)
    text = extract(COPIES_PAGE, algorithm="learned", **EVERY_BLOCK).text
    assert all(text.count(p) == 1 for p in GUIDE) and text.count(STEP[1]) == 2
    off = extract(COPIES_PAGE, algorithm="learned", cut_repeats="false", **EVERY_BLOCK).text
    assert all(off.count(p) == 2 for p in GUIDE)


SHOES = [
    "Trail Runner",
    "Road Racer",
    "Easy Jogger",
    "Hill Climber",
    "Track Spike",
    "Park Walker",
    "City Sprinter",
]
LABELS_PAGE = f"""<html><body><main><h1>Running shoes</h1>
<ul class="grid">{
    "".join(
        f'<li class="card"><div><a href="/p/{i}">{name}</a></div><div class="sr">Price</div><div>${90 + i}.00</div>'
        f"<div>Cushioning:</div><div>{'Firm' if i % 3 else 'Soft'}</div><button>Compare</button></li>"
        for i, name in enumerate(SHOES)
    )
}</ul>
<ul class="links">{"".join('<li><a href="/more">link</a></li>' for _ in range(6))}</ul>
</main></body></html>"""


def test_template_labels_are_the_texts_every_card_repeats() -> None:
    doc, blocks = _blocks(LABELS_PAGE)
    texts = [" ".join(text.split()) for text in block_texts(doc, blocks)]
    labels = template_labels(doc, blocks, np.ones(len(texts), dtype=bool))
    dropped = {t for t, label in zip(texts, labels, strict=True) if label}
    # "Price" and "Compare" in every card; not a price, a "Label:", a value only some cards have
    # (Soft: 3 of 7), nor six copies side by side (a list of the same link)
    assert dropped == {"Price", "Compare"}
    # four cards are too few to tell a template
    four = np.array([not t.startswith(("Price", "Compare")) for t in texts])
    four[[i for i, t in enumerate(texts) if t == "Compare"][:4]] = True
    assert not template_labels(doc, blocks, four).any()
    text = extract(LABELS_PAGE, algorithm="learned", **EVERY_BLOCK).text
    assert "Compare" not in text and "Price" not in text and "$96.00" in text and "Cushioning:" in text
    assert text.count("link") == 6 and "Soft" in text and "Trail Runner" in text
    off = extract(LABELS_PAGE, algorithm="learned", cut_labels="false", **EVERY_BLOCK).text
    assert off.count("Compare") == len(SHOES)
    # not on an article: a story's recurring words are the story's
    article = LABELS_PAGE.replace("<html>", '<html><head><meta property="og:type" content="article"></head>')
    assert extract(article, algorithm="learned", **EVERY_BLOCK).text.count("Compare") == len(SHOES)


FORMATS = ["Hardcover"] * 5 + ["Paperback"] * 4 + ["Board book"] * 3


def _grid(card: str, cards: int) -> str:
    return f'<html><body><main><h1>Best sellers</h1><ul class="grid">{"".join(card.format(i=i) for i in range(cards))}</ul></main></body></html>'


def test_template_labels_keep_a_value_that_shares_its_slot_and_drop_a_labels_own_slot() -> None:
    # A book's format, the most frequent short text but one of three in the same slot of the cards:
    # the cards' data.
    books = _grid(
        '<li class="card"><a href="/b/{i}">Book number {i}</a><div class="format">{{format}}</div><div>${i}.99</div></li>',
        len(FORMATS),
    )
    books = books.replace("{format}", "{}").format(*FORMATS)
    doc, blocks = _blocks(books)
    assert not template_labels(doc, blocks, np.ones(len(blocks.elements), dtype=bool)).any()
    assert extract(books, algorithm="learned", **EVERY_BLOCK).text.count("Hardcover") == 5
    # Three labels in turn in one tag, each in its own place in every card's <dl>: the template's.
    terms = _grid(
        '<li class="card"><a href="/s/{i}"><dl><dt>Brand</dt><dd>Maker {i}</dd><dt>Name</dt><dd>Shoe {i}</dd>'
        "<dt>Color</dt><dd>Grey {i}</dd></dl></a></li>",
        6,
    )
    doc, blocks = _blocks(terms)
    texts = [" ".join(text.split()) for text in block_texts(doc, blocks)]
    labels = template_labels(doc, blocks, np.ones(len(texts), dtype=bool))
    assert {t for t, label in zip(texts, labels, strict=True) if label} == {"Brand", "Name", "Color"}


# --- The post-rules as a table, and --ablate ---------------------------------------------------------


#: (rule, page, parameters) where the rule fires: switching it off changes the extracted text.
FIRING = [
    ("teasers", TEASERS_PAGE, EVERY_BLOCK),
    ("other_articles", _feed_page(3, 90), EVERY_BLOCK),
    ("wide_only", WIDE_ONLY_PAGE, {**EVERY_BLOCK, "wide_only_threshold": "1"}),
    ("choices", WIDE_ONLY_PAGE, EVERY_BLOCK),
    ("filters", FILTERS_PAGE, EVERY_BLOCK),
    ("caption_repeats", CAPTIONS_PAGE, {}),
    ("gallery", GALLERY_PAGE, {"gallery_threshold": "1"}),
    ("repeats", COPIES_PAGE, EVERY_BLOCK),
    ("labels", LABELS_PAGE, EVERY_BLOCK),
]


@pytest.mark.parametrize(("name", "page", "params"), FIRING, ids=[case[0] for case in FIRING])
def test_the_rule_table_is_what_runs(
    monkeypatch: pytest.MonkeyPatch, name: str, page: str, params: dict[str, str]
) -> None:
    rule = post_rule(name)
    on = extract(page, algorithm="learned", **params).text
    off = extract(page, algorithm="learned", **{**params, rule.parameter: rule.off_text}).text
    assert on != off  # the rule fires on this page
    # The same page with the rule taken out of the table: what --ablate's parameter gives.
    monkeypatch.setattr(learned_table, "POST_RULES", tuple(r for r in POST_RULES if r.name != name))
    assert extract(page, algorithm="learned", **params).text == off


def test_every_rule_has_a_parameter_an_off_value_and_known_conditions() -> None:
    fields = {f.name: f for f in dataclasses.fields(LearnedParams)}
    assert len({rule.name for rule in POST_RULES}) == len(POST_RULES) == 26
    assert len({rule.parameter for rule in POST_RULES}) == len(POST_RULES)
    for rule in POST_RULES:
        assert rule.parameter in fields and rule.active(LearnedParams()), rule.name
        off = get_extractor("auto").make_params({rule.parameter: rule.off_text})
        assert not rule.active(off), rule.name
        for condition in rule.when:
            assert condition.removeprefix("not ") in PAGE_CONDITIONS, (rule.name, condition)
    with pytest.raises(ValueError, match="valid: heuristic_prior, whole_lists, related_heading"):
        post_rule("gallerie")


def test_page_kinds_hold_their_conditions() -> None:
    kinds = PageKinds(article=True, product=False, discussion=False, root=True)
    assert kinds.holds(()) and kinds.holds(("article", "root")) and kinds.holds(("not product",))
    assert not kinds.holds(("product",)) and not kinds.holds(("article", "not root"))


@pytest.mark.skipif(datasets_root() is None, reason="../shared/datasets is not present")
def test_eval_ablate_reports_each_rule_off(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["eval", "--dataset", "scrapinghub", "--limit", "3", "--no-progress"]
    assert main([*base, "--algo", "auto", "--ablate", "gallery,choices", "--ablate", "short_page"]) == 0
    out = capsys.readouterr().out
    for label in ("auto:gallery_threshold=none", "auto:cut_choices=false", "auto:short_page_chars=0"):
        assert label in out
    rows = [line for line in out.splitlines() if line.startswith("auto - ")]
    assert [row.split("|")[0].strip() for row in rows] == [
        "auto - gallery",
        "auto - choices",
        "auto - short_page",
    ]
    counts = [[int(n) for n in row.split("|")[1].split()] for row in rows]  # pages, pages changed
    assert all(pages == 3 and 0 <= changed <= 3 for pages, changed in counts)
    assert main([*base, "--algo", "auto", "--ablate", "nope"]) == 2
    assert "unknown post-rule 'nope'" in capsys.readouterr().err
    assert main([*base, "--algo", "density", "--ablate", "gallery"]) == 2
    assert "--ablate needs" in capsys.readouterr().err


def test_ablation_specs_replace_a_rule_parameter_the_spec_sets() -> None:
    specs = [
        AlgorithmSpec("auto", (("gallery_threshold", "0.7"), ("threshold", "0.6"))),
        AlgorithmSpec("density"),
    ]
    (ablation,) = ablation_specs(specs, ablation_rules(["gallery"]))
    assert ablation.ablated == AlgorithmSpec("auto", (("threshold", "0.6"), ("gallery_threshold", "none")))
    assert ablation_rules(["all"]) == [rule.name for rule in POST_RULES]


# --- Provenance ------------------------------------------------------------------------------------


def test_the_shipped_model_carries_its_provenance() -> None:
    provenance = load_model().provenance
    assert provenance is not None
    assert (
        provenance.features == code_feature_hash() == feature_list_hash(FEATURES, FEATURES + CONTEXT_FEATURES)
    )
    assert len(provenance.commit) == 40 and provenance.lightgbm and provenance.numpy
    assert set(provenance.datasets) == {"scrapinghub", "readability", "wcxb-dev"}
    assert all(
        len(record["sha256"]) == 64 and record["pages"] > 100 for record in provenance.datasets.values()
    )
    assert provenance.parameters["rounds"] == 100 and provenance.parameters["bags"] == 2
    assert provenance.parameters["boosting"]["deterministic"] is True


def test_a_model_made_for_other_features_is_refused_at_load(tmp_path: Path) -> None:
    model = load_model()
    assert model.provenance is not None
    copy = tmp_path / "copy.npz"
    model.save(copy)
    assert load_model(str(copy)).provenance == model.provenance
    other = tmp_path / "other.npz"
    dataclasses.replace(model, provenance=dataclasses.replace(model.provenance, features="0" * 16)).save(
        other
    )
    with pytest.raises(
        ValueError, match=r"made for feature list 0{16}, this code computes [0-9a-f]{16}; retrain"
    ):
        load_model(str(other))
    with pytest.raises(ValueError, match="made for feature list"):
        extract(SYNTHETIC, algorithm="learned", model=str(other))
    # A file written before provenance existed still loads (its feature names are checked).
    bare = tmp_path / "bare.npz"
    dataclasses.replace(model, provenance=None).save(bare)
    assert load_model(str(bare)).provenance is None


@pytest.mark.skipif(datasets_root() is None, reason="../shared/datasets is not present")
def test_train_stamp_adds_provenance_and_leaves_the_trees(tmp_path: Path) -> None:
    pytest.importorskip("lightgbm", reason="the train extra (lightgbm) is not installed")
    bare = tmp_path / "bare.npz"
    dataclasses.replace(load_model(), provenance=None).save(bare)
    args = ["train", "--stamp", "--out", str(bare), "--datasets", "scrapinghub", "--limit", "5"]
    assert main(args) == 0
    stamped = load_model(str(bare))
    assert stamped.provenance is not None and stamped.provenance.made_by == "readerproxy train --stamp"
    assert stamped.provenance.datasets["scrapinghub"]["pages"] == 5
    shipped = load_model()
    for stage in ("first", "second"):
        for name in ("feature", "threshold", "left", "right", "value", "roots"):
            assert np.array_equal(
                getattr(getattr(stamped, stage), name), getattr(getattr(shipped, stage), name)
            )
    assert main(["train", "--stamp", "--out", str(tmp_path / "none.npz")]) == 2


def _tail_page(cards: int = 0) -> str:
    """An article whose end holds a share box and a related-posts box, each only a heading once its
    buttons and links are dropped; with `cards`, a list of teaser cards with the same class before."""
    teasers = "".join(
        f'<div class="card"><h3 class="card-title">Story {i} of the week</h3><p>Teaser {i}</p></div>'
        for i in range(cards)
    )
    return f"""<html><body><article><h1>The river and its bridges</h1>
<h2>Where it begins</h2><p>{ARTICLE[:700]}</p><div class="head"><h2>Where it ends</h2></div>
<p>{ARTICLE[700:]}</p>
<div class="share"><h3 class="title">Teilen Sie dies mit:</h3><a href="/x">X</a><a href="/f">F</a></div>
<div class="related"><h3 class="title">Ähnliche Beiträge</h3></div></article>{teasers}</body></html>"""


def _texts_found(html: str) -> list[str]:
    doc, blocks = _blocks(html)
    texts = [" ".join(text.split()) for text in block_texts(doc, blocks)]
    keep = np.array([bool(t) and "Teaser" not in t and len(t) > 1 for t in texts])
    found = orphan_headings(doc, blocks, keep)
    return [t for t, cut in zip(texts, found, strict=True) if cut]


def test_orphan_headings_are_headings_at_the_end_that_head_nothing_kept() -> None:
    # The share box's and the related box's headings head nothing kept; "Where it begins" and
    # "Where it ends" (its wrapper climbed over) head the paragraphs after them.
    assert _texts_found(_tail_page()) == ["Teilen Sie dies mit:", "Ähnliche Beiträge"]
    # Card titles (three kept headings of one tag and class) stay, though their teasers are dropped;
    # the two boxes' headings share a class too, two of a kind are no cards.
    assert _texts_found(_tail_page(cards=3)) == ["Teilen Sie dies mit:", "Ähnliche Beiträge"]
    found = _texts_found(_tail_page(cards=3).replace('class="title"', 'class="card-title"'))
    assert found == []
    # A heading followed anywhere by a kept block of ten words or more is not at the article's end.
    page = _tail_page().replace("</article>", f"<p>{ARTICLE[:200]}</p></article>")
    assert _texts_found(page) == []
    # Nothing kept, nothing found.
    doc, blocks = _blocks(_tail_page())
    assert not orphan_headings(doc, blocks, np.zeros(len(blocks.elements), dtype=bool)).any()


CREDITS_PAGE = f"""<html><body><article><h1>The river and its bridges</h1>
<figure><img src="/a.jpg" alt=""><figcaption>The old bridge at dawn, seen from the east bank</figcaption>
<p class="image-copyright">Foto: Getty Images</p></figure>
<p>{ARTICLE[:900]}</p><div class="credit"><p>Bild: Jahr Media</p></div>
<p class="photo-Credits">{ARTICLE[900:]}</p><p id="copyright">© 2020 The River Trust</p></article></body></html>"""


def _texts_cut(page: str, rule: Callable[..., np.ndarray]) -> list[str]:
    """The texts of the blocks a post-rule finds on `page` when every block with text is kept."""
    doc, blocks = _blocks(page)
    texts = [" ".join(text.split()) for text in block_texts(doc, blocks)]
    keep = np.array([bool(text) for text in texts])
    return [text for text, cut in zip(texts, rule(doc, blocks, keep), strict=True) if cut]


def test_credit_lines_are_short_blocks_a_credit_class_names() -> None:
    found = _texts_cut(CREDITS_PAGE, credit_lines)
    # The credit by its own class, by its parent's, by an id; the caption stays, and so does a
    # paragraph of prose whatever its class says (more than eight words).
    assert found == ["Foto: Getty Images", "Bild: Jahr Media", "© 2020 The River Trust"]
    doc, blocks = _blocks(CREDITS_PAGE)
    assert not credit_lines(doc, blocks, np.zeros(len(blocks.elements), dtype=bool)).any()
    # Named only on the long paragraph: no short block is a credit (the one search over the short
    # blocks' names finds nothing).
    unnamed = CREDITS_PAGE.replace(' class="image-copyright"', "").replace(' class="credit"', "")
    doc, blocks = _blocks(unnamed.replace(' id="copyright"', ""))
    assert not credit_lines(doc, blocks, np.ones(len(blocks.elements), dtype=bool)).any()


def test_credit_lines_through_auto_and_off() -> None:
    text = extract(CREDITS_PAGE, algorithm="learned", **EVERY_BLOCK).text
    assert "Getty Images" not in text and "Jahr Media" not in text and "seen from the east bank" in text
    off = extract(CREDITS_PAGE, algorithm="learned", cut_credits="false", **EVERY_BLOCK).text
    assert "Getty Images" in off and "Jahr Media" in off


PROMOS_PAGE = f"""<html><body><article><h1>The river and its bridges</h1><p>{ARTICLE[:900]}</p>
<div class="related-posts"><p><a href="/a">The lake and its islands</a></p>
<p><a href="/b">Ten walks along the old canal</a></p></div><div id="promo"><p>Subscribe for two euros</p></div>
<div class="teaser-wrap"><p>{ARTICLE[900:]}</p></div></article></body></html>"""


def test_promo_lines_are_short_blocks_a_box_of_other_pages_names() -> None:
    found = _texts_cut(PROMOS_PAGE, promo_lines)
    # The headlines in a related box (its class on their parent), the promotion by its id; the
    # story's paragraph in a "teaser" wrapper stays (more than eight words).
    assert found == ["The lake and its islands", "Ten walks along the old canal", "Subscribe for two euros"]


def test_promo_lines_through_auto_and_off() -> None:
    text = extract(PROMOS_PAGE, algorithm="learned", **EVERY_BLOCK).text
    assert "islands" not in text and "Subscribe" not in text and "Sentence 10" in text
    off = extract(PROMOS_PAGE, algorithm="learned", cut_promos="false", **EVERY_BLOCK).text
    assert "islands" in off and "Subscribe" in off


def test_orphan_headings_through_auto_and_off() -> None:
    page = _tail_page()
    assert "Ähnliche Beiträge" not in extract(page, algorithm="learned", **EVERY_BLOCK).text
    # The related box's class names it too (`promos`): that rule off as well, to see this one's.
    off = extract(
        page, algorithm="learned", cut_orphan_headings="false", cut_promos="false", **EVERY_BLOCK
    ).text
    assert "Ähnliche Beiträge" in off and "Where it ends" in off
