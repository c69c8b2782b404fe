"""auto and learned: the heuristic's blocks re-scored by gradient-boosted trees trained on labelled pages.

Steps: run `auto`'s first extractor (the DOM heuristic after Readability.js's unlikely-candidate
removal, Berg 2020 §5–6); describe every text holder that owns text by the features of
`learn.blocks` (the heuristic's own answer among them); score them with the shipped tree ensemble
(`learn.model`, trained by `readerproxy train`); keep the blocks whose probability of being content
reaches `threshold`; then run the post-rules of `POST_RULES`, in order, each on the pages its
conditions name (what the page says it is, from its JSON-LD and `og:type`, whether the
heuristic's article root holds a block, and whether the trees score enough of the heuristic's
answer at the prior's threshold) and only while its parameter is not its "off" value.

The rules are data: `POST_RULES` is one table of `PostRule`s (name, page conditions, parameter and
its off value, the blocks it finds and whether it drops or adds them), and `extract_learned` runs
exactly that table. `readerproxy eval --ablate RULE` runs `auto` with a rule off (its parameter
at its off value) beside `auto` and reports the difference. How each rule and its parameter were chosen, with the scores before and after, is in
docs/rules.md.

Where the rules keep too little text, the answer is `auto-heuristic`'s chain (heuristic, then accb,
then all text), so a reader never gets an empty page.

`auto` is this extractor with its defaults (registered twice: `learned` names it when it is asked
for by name, and is what `auto` reports when the scorer's selection is the answer, so the badge
reads "auto via learned" or "auto via heuristic" after a fallback).
"""

from __future__ import annotations

import numpy as np

from ...extraction import Extraction, params_dict, register
from ...learn import blocks as learn_blocks
from ...learn import model as learn_model
from ...parse.document import Document
from ..auto import AutoParams, enough_chars, fall_back, first_extractor, selected_chars
from ..heuristic import holder_blocks
from .params import LearnedParams
from .rules import block_selection, says_article, says_discussion, says_product, thread_parts
from .table import PageKinds, RulePage, run_post_rules, trees_agree

REFERENCE = (
    "Friedman 2001 (gradient boosting), Wolpert 1992 (stacking), over features of Berg 2020, "
    "Weninger et al. 2010, Kohlschütter et al. 2010 and DANAg's Filter 3; trained by `readerproxy train`; "
    "out-of-fold scores in docs/benchmarks.md"
)


@register(
    "auto",
    "Blocks of the DOM heuristic re-scored by shipped gradient-boosted trees, with auto-heuristic's fallbacks.",
    LearnedParams,
    reference=REFERENCE,
)
@register(
    "learned",
    "The learned block scorer of auto (the same extractor, by its own name).",
    LearnedParams,
    reference=REFERENCE,
)
def extract_learned(doc: Document, params: LearnedParams) -> Extraction:
    """Score the heuristic's blocks with the model, keep those above the threshold, then run the
    post-rules of `POST_RULES` that hold on the page."""
    extractor, heuristic_params = first_extractor()
    heuristic = extractor.run(doc, heuristic_params)
    blocks = learn_blocks.page_blocks(doc, heuristic)
    model = learn_model.load_model(params.model)
    probability = model.probability(blocks.features, blocks.parent, blocks.grandparent)
    keep = probability >= params.threshold
    outside = blocks.features[:, learn_blocks.FEATURES.index("in_heuristic_root")] <= 0
    kinds = PageKinds(
        article=says_article(blocks.features),
        product=says_product(blocks.features),
        discussion=says_discussion(blocks.features),
        root=not outside.all(),
        agrees=trees_agree(
            blocks,
            probability,
            params.threshold if params.heuristic_threshold is None else params.heuristic_threshold,
        ),
    )
    keep = run_post_rules(
        RulePage(doc, blocks, probability, outside, params, thread_parts(doc, blocks.features)), kinds, keep
    )
    auto = AutoParams(min_chars=params.min_chars, min_share=params.min_share)
    selection = block_selection(doc, blocks.holder, blocks.elements[keep])
    if selected_chars(doc, selection) < enough_chars(doc, auto):
        fallback = fall_back(doc, auto, first=heuristic)
        fallback.signals["learned_probability"] = probability
        return fallback
    per_element = np.zeros(len(doc.elements))
    per_element[blocks.elements] = probability
    kept = np.zeros(len(doc.elements), dtype=bool)
    kept[blocks.elements] = keep
    out_blocks = holder_blocks(doc, blocks.elements, per_element, kept)
    weight = blocks.own_words
    confidence = float((probability * weight)[keep].sum() / max(weight[keep].sum(), 1.0))
    return Extraction(
        blocks=out_blocks,
        selection=selection,
        signals={"learned_probability": probability, "threshold": np.array([params.threshold])},
        score=confidence,
        algorithm="learned",  # what produced the selection, under `auto` too
        params=params_dict(params),
    )
