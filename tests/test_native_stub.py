"""`readerproxy/_native.pyi` against what it describes: the C source's method table and argument
formats, and the compiled module's exports (when it is built)."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "readerproxy"
STUB = PACKAGE / "_native.pyi"
SOURCE = PACKAGE / "_native.c"


def stub_functions() -> dict[str, ast.arguments]:
    """The stub's top-level functions and their parameters."""
    tree = ast.parse(STUB.read_text())
    return {node.name: node.args for node in tree.body if isinstance(node, ast.FunctionDef)}


def stub_constants() -> set[str]:
    """The module constants the stub declares (annotated names that are not type aliases)."""
    tree = ast.parse(STUB.read_text())
    return {
        node.target.id
        for node in tree.body
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and not (isinstance(node.annotation, ast.Name) and node.annotation.id == "TypeAlias")
    }


def source_formats() -> dict[str, str]:
    """Each kernel's PyArg_ParseTuple format in `_native.c`, by the name after its ':'."""
    formats = re.findall(r'PyArg_ParseTuple\(args, "([^":]*):(\w+)"', SOURCE.read_text())
    return {name: units for units, name in formats}


def source_table() -> set[str]:
    """The names in `_native.c`'s method table (what the module exports as functions)."""
    table = SOURCE.read_text().split("static PyMethodDef methods[]", 1)[1].split("};", 1)[0]
    return set(re.findall(r'\{"(\w+)", native_\w+', table))


def test_the_stub_names_every_function_of_the_method_table() -> None:
    """Proves the stub and the C source's method table name the same functions, built or not."""
    assert set(stub_functions()) == source_table()


@pytest.mark.parametrize("name", sorted(source_table()))
def test_the_stub_takes_the_arguments_the_c_source_parses(name: str) -> None:
    """Proves each stub signature takes the arguments its kernel's PyArg_ParseTuple format reads:
    as many, all positional-only (METH_VARARGS), the optional ones (after '|') with defaults."""
    units = source_formats()[name].replace("!", "")  # "O!" is one argument (an object of a given type)
    required, _, optional = units.partition("|")
    arguments = stub_functions()[name]
    assert not arguments.args and not arguments.kwonlyargs and arguments.vararg is None
    assert len(arguments.posonlyargs) == len(required) + len(optional), (name, units)
    assert len(arguments.defaults) == len(optional), (name, units)


def test_the_stub_names_exactly_what_the_built_module_exports() -> None:
    """Proves the stub lists every public name of the compiled module (functions and constants) and
    nothing else; skipped when the module was not built (no compiler at install time)."""
    try:
        module = importlib.import_module("readerproxy._native")
    except ImportError:
        pytest.skip("readerproxy._native is not built")
    exported = {name for name in vars(module) if not name.startswith("_")}
    functions = {name for name in exported if callable(getattr(module, name))}
    assert functions == set(stub_functions())
    assert exported - functions == stub_constants()
