"""Command line: `readerproxy extract|algorithms|eval|bench|train|pagekind|serve`."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import __version__
from . import _speedups as speedups
from .api import algorithms, unavailable_algorithms
from .engine.pipeline import process
from .proxy.settings import SERVE_OPTIONS, Settings, load_settings
from .web.settings import SettingsError

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


def _render(
    data: bytes, url: str | None, content_type: str | None, *, javascript: bool, browser: str, layout: bool
) -> tuple[bytes | str, str | None, Any]:
    """The page run in the browser service: rendered HTML, its content type and the layout snapshot.
    Its stylesheets (and scripts, with JavaScript on) load from its own host through the guarded fetcher."""
    import asyncio

    from .web.browser import BrowserService, BrowserSettings
    from .web.fetch import Fetcher
    from .web.reader import BLANK_PAGE_URL

    async def run() -> Any:
        async with Fetcher() as fetcher:
            service = BrowserService(BrowserSettings(executable=browser), fetcher)
            try:
                return await service.render(
                    url or BLANK_PAGE_URL, data, content_type, javascript=javascript, layout=layout
                )
            finally:
                await service.close()

    page = asyncio.run(run())
    return page.html, "text/html; charset=utf-8", page.layout


def cmd_extract(args: argparse.Namespace) -> int:
    from .engine.extraction import get_extractor
    from .errors import ReaderproxyError

    try:
        data, content_type, fetched_url = _read_source(args.source, args.timeout)
    except OSError as exc:
        print(f"readerproxy: cannot read {args.source}: {exc}", file=sys.stderr)
        return 2
    layout = None
    source: bytes | str = data
    try:
        needs_browser = get_extractor(args.algo).needs_browser
        if args.render or needs_browser:
            source, content_type, layout = _render(
                data,
                args.url or fetched_url,
                content_type,
                javascript=args.render,
                browser=args.browser,
                layout=needs_browser,
            )
    except ReaderproxyError as exc:
        print(f"readerproxy: {exc.message}", file=sys.stderr)
        return 3
    except ValueError as exc:
        print(f"readerproxy: {exc}", file=sys.stderr)
        return 2
    options: dict[str, Any] = {
        "url": args.url or fetched_url,
        "content_type": content_type,
        "algorithm": args.algo,
        "layout": layout,
    }
    try:
        options["params"] = _params(args.param)
        if args.overlay:  # the page with every scored block outlined, in one self-contained file
            from .web.overlay import overlay_file

            Path(args.overlay).write_text(overlay_file(source, **options), encoding="utf-8")
            print(f"readerproxy: overlay written to {args.overlay}", file=sys.stderr)
            return 0
        article = process(source, **options)
    except ValueError as exc:  # a DecompressionError too
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
    from .web.devtools import unavailable_reason

    listing = algorithms()
    unavailable = unavailable_algorithms(unavailable_reason(args.browser))
    width = max(len(name) for name in listing)
    for name, description in listing.items():
        note = f" [unavailable: {unavailable[name]}]" if name in unavailable else ""
        print(f"{name:<{width}}  {description}{note}")
    return 0


#: Commands that need an optional extra: (extra, modules it provides).
EXTRAS = {
    "eval": ("eval", ("rapidfuzz",)),
    "bench": ("bench", ("rapidfuzz", "trafilatura", "readability")),
    "train": ("train", ("rapidfuzz", "lightgbm")),
}


def missing_extra(command: str) -> str | None:
    """One line naming the extra to install when a command's optional modules are missing."""
    if command not in EXTRAS:
        return None
    extra, modules = EXTRAS[command]
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    return (
        f"readerproxy {command} needs the {extra!r} extra ({', '.join(missing)} not installed): "
        f"pip install 'readerproxy[{extra}]'"
    )


def cmd_eval(args: argparse.Namespace) -> int:
    from .research import cli as evaluation_cli  # needs the eval extra: imported where used

    return evaluation_cli.run_eval(args)


def cmd_train(args: argparse.Namespace) -> int:
    from .research.training import train  # needs the train extra: imported where used

    return train.run_train(args)


def cmd_pagekind(args: argparse.Namespace) -> int:
    from .research import pagekind_eval  # lightgbm (train extra) is imported where used

    return pagekind_eval.run(args)


def cmd_bench(args: argparse.Namespace) -> int:
    from .research import cli as evaluation_cli  # needs the bench extra: imported where used

    return evaluation_cli.run_bench(args)


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `readerproxy serve`, made from `proxy/settings.SERVE_OPTIONS` (the reader server's
    and proxy mode's, `app.py` composes them): each with default and env var."""
    defaults = Settings()
    for option in SERVE_OPTIONS:
        if option.name == "config":
            default: object = "none"
        elif option.name == "allow_private":
            default = "off"
        elif option.name == "reading_list":
            default = "beside the cache: its Redis, else readinglist.sqlite3 in the data directory"
        else:
            default = getattr(defaults, option.name)
        text = f"{option.help} (default: {default}; env {option.env})"
        if option.metavar is None:
            parser.add_argument(option.flag, dest=option.name, action="store_true", default=None, help=text)
        else:
            parser.add_argument(
                option.flag, dest=option.name, metavar=option.metavar, default=None, help=text
            )


def cmd_serve(args: argparse.Namespace) -> int:
    """`readerproxy serve`: settings from defaults, config file, environment and flags, then run."""
    try:
        settings = load_settings({option.name: getattr(args, option.name) for option in SERVE_OPTIONS})
    except SettingsError as exc:
        print(f"readerproxy serve: {exc}", file=sys.stderr, flush=True)
        return 2
    from .app import run  # the reader server and proxy mode are only needed here

    run(settings)
    return 0


def cmd_ca(args: argparse.Namespace) -> int:
    """`readerproxy ca`: the --intercept-https CA (created on first use): where it is, how to trust it."""
    try:
        from .proxy.tls import CertificateAuthority, ca_directory, describe
    except ImportError as exc:
        print(f"readerproxy ca needs the cryptography package ({exc})", file=sys.stderr)
        return 2
    from .web.datadir import data_dir

    print(describe(CertificateAuthority.load_or_create(ca_directory(data_dir()))))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="readerproxy", description=__doc__)
    parser.add_argument(
        "--version",
        action="version",
        version=f"readerproxy {__version__} (native kernels: {speedups.describe()})",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("extract", help="extract the main content of a file or URL")
    p.add_argument("source", metavar="PATH_OR_URL", help="a file (.gz accepted), an http(s) URL, or -")
    p.add_argument("--algo", default="auto", help="algorithm name (see `readerproxy algorithms`)")
    p.add_argument("--format", choices=FORMATS, default="text")
    p.add_argument("--url", help="the page's URL, for resolving relative links in a local file")
    p.add_argument(
        "--param",
        "-p",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="algorithm parameter, repeatable (e.g. -p c1=0.5)",
    )
    p.add_argument("--timeout", type=float, default=20.0, help="seconds, for URLs")
    p.add_argument(
        "--overlay",
        metavar="FILE.html",
        help="write the page with every scored block outlined and the signal charts (self-contained)",
    )
    p.add_argument(
        "--render",
        action="store_true",
        help="run the page in the browser with JavaScript on first, then extract from the rendered DOM",
    )
    p.add_argument(
        "--browser", default=Settings.browser, metavar="PATH", help="Chromium for visual and --render"
    )
    p.set_defaults(handler=cmd_extract)

    p = sub.add_parser("algorithms", help="list the algorithms")
    p.add_argument(
        "--browser",
        default=Settings.browser,
        metavar="PATH",
        help="Chromium for visual (checked for the listing)",
    )
    p.set_defaults(handler=cmd_algorithms)

    # eval and bench: their arguments are declared without importing the optional extras.
    from .research import arguments as evaluation_arguments

    p = sub.add_parser("eval", help="measure algorithms on a dataset with known answers (extra: eval)")
    evaluation_arguments.add_eval_arguments(p)
    p.set_defaults(handler=cmd_eval)

    p = sub.add_parser(
        "bench", help="parse and extraction speed per algorithm, beside trafilatura (extra: bench)"
    )
    evaluation_arguments.add_bench_arguments(p)
    p.set_defaults(handler=cmd_bench)

    from .research.training import arguments as train_arguments

    p = sub.add_parser(
        "train",
        help="fit the block scorer of `learned` on the shared datasets, with out-of-fold models (extra: train)",
    )
    train_arguments.add_arguments(p)
    p.set_defaults(handler=cmd_train)

    from .research import pagekind_eval

    p = sub.add_parser(
        "pagekind",
        help="fit the page-kind model (train) or measure it out of fold on wcxb-dev (eval) (extra: train)",
    )
    pagekind_eval.add_arguments(p)
    p.set_defaults(handler=cmd_pagekind)

    p = sub.add_parser(
        "serve",
        help="run the reader server",
        description="Run the reader server. Options also come from environment variables "
        "and a TOML config file; the command line wins.",
    )
    add_serve_arguments(p)
    p.set_defaults(handler=cmd_serve)

    p = sub.add_parser("ca", help="where the --intercept-https CA certificate is and how to trust it")
    p.set_defaults(handler=cmd_ca)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    problem = missing_extra(args.command)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
