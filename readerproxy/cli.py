"""Command line: `readerproxy extract|algorithms|eval|bench|serve`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .api import algorithms, extract
from .decoding import DecompressionError

FORMATS = ("text", "html", "json", "markdown")


def _params(pairs: Sequence[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ValueError(f"parameters are NAME=VALUE, got {pair!r}")
        params[name.strip()] = value.strip()
    return params


def _read_source(source: str, timeout: float) -> tuple[bytes, str | None, str | None]:
    """Bytes, content type and URL of a local path or an http(s) URL."""
    if source.startswith(("http://", "https://")):
        from urllib.request import Request, urlopen

        request = Request(source, headers={"User-Agent": "readerproxy"})
        with urlopen(request, timeout=timeout) as response:  # scheme checked above
            return response.read(), response.headers.get("Content-Type"), response.geturl()
    if source == "-":
        return sys.stdin.buffer.read(), None, None
    return Path(source).read_bytes(), None, None


def cmd_extract(args: argparse.Namespace) -> int:
    try:
        data, content_type, fetched_url = _read_source(args.source, args.timeout)
    except OSError as exc:
        print(f"readerproxy: cannot read {args.source}: {exc}", file=sys.stderr)
        return 2
    try:
        from .api import to_text

        html = to_text(data, content_type)
        article = extract(html, url=args.url or fetched_url, algorithm=args.algo, **_params(args.param))
    except DecompressionError as exc:
        print(f"readerproxy: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"readerproxy: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        out: Any = json.dumps(article.to_dict(), ensure_ascii=False, indent=2)
    elif args.format == "html":
        out = article.html
    elif args.format == "markdown":
        out = article.markdown
    else:
        out = (f"{article.title}\n\n" if article.title else "") + article.text
    sys.stdout.write(out.rstrip("\n") + "\n")
    return 0


def cmd_algorithms(args: argparse.Namespace) -> int:
    listing = algorithms()
    width = max(len(name) for name in listing)
    for name, description in listing.items():
        print(f"{name:<{width}}  {description}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="readerproxy", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("extract", help="extract the main content of a file or URL")
    p.add_argument("source", metavar="PATH_OR_URL", help="a file (.gz accepted), an http(s) URL, or -")
    p.add_argument("--algo", default="auto", help="algorithm name (see `readerproxy algorithms`)")
    p.add_argument("--format", choices=FORMATS, default="text")
    p.add_argument("--url", help="the page's URL, for resolving relative links in a local file")
    p.add_argument("--param", "-p", action="append", default=[], metavar="NAME=VALUE",
                   help="algorithm parameter, repeatable (e.g. -p c1=0.5)")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds, for URLs")
    p.set_defaults(handler=cmd_extract)

    p = sub.add_parser("algorithms", help="list the algorithms")
    p.set_defaults(handler=cmd_algorithms)

    from .evaluation import cli as evaluation_cli

    p = sub.add_parser("eval", help="measure algorithms on a dataset with known answers")
    evaluation_cli.add_eval_arguments(p)
    p.set_defaults(handler=evaluation_cli.run_eval)

    p = sub.add_parser("bench", help="parse and extraction speed per algorithm, beside trafilatura")
    evaluation_cli.add_bench_arguments(p)
    p.set_defaults(handler=evaluation_cli.run_bench)

    from . import server

    p = sub.add_parser("serve", help="run the reader server")
    server.add_serve_arguments(p)
    p.set_defaults(handler=server.run_from_args)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
