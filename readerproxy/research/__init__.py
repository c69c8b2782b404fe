"""Evaluation and benchmarks: datasets with known answers, metrics, the runner, the HTML report.

`readerproxy eval` and `readerproxy bench` live in `cli.py`; everything else is a pure library
(metrics on strings, a runner returning dataclasses) with I/O at the edges.
"""
