"""Compile the optional C kernels (readerproxy/_native.c) with the interpreter's own compiler settings.

As a hatchling build hook (`[tool.hatch.build.targets.wheel.hooks.custom]` in pyproject.toml):

- a wheel gets the compiled module force-included and a platform tag (`pure_python = False`,
  `infer_tag = True`);
- an editable install builds the module in place, next to its source (gitignored).

If the compiler is missing or fails, the hook warns and the build goes on pure-Python: readerproxy
then runs its numpy code (readerproxy._speedups picks it). Installing never fails for lack of gcc.

As a script, for a worktree run with `PYTHONPATH=$PWD` (no install):

    python hatch_build.py      # builds readerproxy/_native<EXT_SUFFIX> in place

The module carries the SHA-256 of the source it was compiled from (the macro
READERPROXY_NATIVE_SOURCE_HASH); readerproxy._speedups refuses a module whose hash differs from the
`_native.c` beside it, so an edit to the C source is never silently ignored.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
SOURCE = ROOT / "readerproxy" / "_native.c"
MODULE_NAME = "_native" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")


def source_hash(source: Path = SOURCE) -> str:
    """What the compiled module must carry: the SHA-256 of its C source (as readerproxy._speedups reads it)."""
    return hashlib.sha256(source.read_bytes()).hexdigest()


def compile_native(target: Path, source: Path = SOURCE, extra_args: Sequence[str] = ()) -> None:
    """Compile and link `source` into the extension module `target` (CC, CFLAGS, CCSHARED, LDSHARED of
    `sysconfig`, as distutils did; the environment's CC, if set, replaces the compiler). `extra_args`
    go to both the compiler and the linker (the tests' builds: `-DREADERPROXY_NO_DLFCN`, the
    sanitizers). Raises OSError or CalledProcessError when that fails."""
    config = sysconfig.get_config_var
    include = sysconfig.get_paths()["include"]
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        obj = Path(scratch) / "_native.o"
        compile_cmd = [
            *shlex.split(os.environ.get("CC") or config("CC") or "cc"),
            *shlex.split(config("CFLAGS") or ""),
            *shlex.split(config("CCSHARED") or ""),
            # The kernels' float sums must round as numpy's and Python's do: no fused multiply-add.
            "-ffp-contract=off",
            f"-I{include}",
            f'-DREADERPROXY_NATIVE_SOURCE_HASH="{source_hash(source)}"',
            *extra_args,
            "-c",
            str(source),
            "-o",
            str(obj),
        ]
        subprocess.run(compile_cmd, check=True, capture_output=True, text=True)
        # Link to a temporary name and rename: a running interpreter that mapped the old module keeps it.
        partial = target.with_name(target.name + ".partial")
        link_cmd = [
            *shlex.split(config("LDSHARED") or "cc -shared"),
            *extra_args,
            str(obj),
            "-o",
            str(partial),
        ]
        subprocess.run(link_cmd, check=True, capture_output=True, text=True)
        partial.replace(target)


def try_compile(target: Path, warn: Any = None) -> bool:
    """`compile_native`, reporting a failure through `warn` (default: stderr) instead of raising."""
    try:
        compile_native(target)
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        message = (
            f"readerproxy: C kernels not compiled, using the pure-Python code ({detail.strip()[-2000:]})"
        )
        (warn or (lambda text: print(text, file=sys.stderr)))(message)
        return False
    return True


try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # run as a script without hatchling installed
    BuildHookInterface = object  # type: ignore[assignment,misc]


class NativeBuildHook(BuildHookInterface):  # type: ignore[misc,valid-type]
    """Compile `_native` for wheels (force-included, platform tag) and editable installs (in place)."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        warn = self.app.display_warning
        if version == "editable":
            try_compile(Path(self.root) / "readerproxy" / MODULE_NAME, warn)
            return
        built = Path(self.directory) / "native" / MODULE_NAME
        if try_compile(built, warn):
            build_data["force_include"][str(built)] = f"readerproxy/{MODULE_NAME}"
            build_data["pure_python"] = False
            build_data["infer_tag"] = True


if __name__ == "__main__":
    sys.exit(0 if try_compile(SOURCE.parent / MODULE_NAME) else 1)
