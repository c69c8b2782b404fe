"""A learned block scorer for `auto`: blocks and their features, labels, the model, folds, training.

- `blocks`: candidate blocks (the text holders of the DOM heuristic) and their feature matrix, in numpy.
- `labels`: which blocks are content, from a reference text by word-shingle overlap.
- `model`: gradient-boosted trees exported to arrays, evaluated in numpy, loaded once.
- `folds`: the site of a dataset page, and folds that keep every site on one side.
- `provenance`: what a model file records of its making (commit, versions, dataset and feature hashes).
- `train`: `readerproxy train` (needs the `train` extra, lightgbm).
"""
