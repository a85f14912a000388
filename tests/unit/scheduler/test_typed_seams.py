"""No ``Any`` in a public signature of ``scheduler/``, ``books/``, ``speech/`` or ``store/``.

Where the rooms meet (the object store, the voice catalog, the synthesizer, an engine's
capabilities, the job row) strict mypy can only check what the signatures name. A public
function or method that takes or returns ``Any`` (also inside ``dict[str, Any]``) turns that
check off for every caller, so this walk fails on one. Untyped JSON at a boundary is
``object`` (``Mapping[str, object]``) and is narrowed where it is read; ``Any`` may stay inside a
body, where it is the module's own business.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
ROOMS = ("scheduler", "books", "speech", "store")


def _mentions_any(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name) and node.id == "Any":
            return True
        if isinstance(node, ast.Attribute) and node.attr == "Any":
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _mentions_any_text(node.value):
            return True
    return False


def _mentions_any_text(text: str) -> bool:
    try:
        parsed = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    return _mentions_any(parsed)


def _public(name: str) -> bool:
    return not name.startswith("_") or name in {"__init__", "__call__"}


def any_in_signatures(tree: ast.Module) -> Iterator[str]:
    """``name(argument)`` or ``name -> return`` for every public ``Any``."""

    def visit(body: list[ast.stmt], prefix: str) -> Iterator[str]:
        for node in body:
            if isinstance(node, ast.ClassDef) and _public(node.name):
                yield from visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _public(node.name):
                args = node.args
                for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                    if arg is not None and _mentions_any(arg.annotation):
                        yield f"{prefix}{node.name}({arg.arg})"
                if _mentions_any(node.returns):
                    yield f"{prefix}{node.name} -> ..."

    yield from visit(tree.body, "")


def _public_modules() -> list[Path]:
    return [
        path for room in ROOMS for path in sorted((ROOT / room).rglob("*.py"))
        if not any(part.startswith("_") and part != "__init__.py" for part in path.relative_to(ROOT).parts)
    ]


MODULES = _public_modules()


def test_the_walk_sees_the_rooms() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in MODULES}
    assert {"scheduler/lifecycle.py", "speech/synthesizer.py", "store/db/jobs.py"} <= names


@pytest.mark.parametrize("path", MODULES, ids=[p.relative_to(ROOT).as_posix() for p in MODULES])
def test_no_any_in_a_public_signature(path: Path) -> None:
    assert list(any_in_signatures(ast.parse(path.read_text()))) == []


def test_the_walk_finds_each_kind_of_any() -> None:
    sample = ast.parse(
        "def f(objects: Any, *, job: 'dict[str, Any]') -> list[typing.Any]: ...\n"
        "class C:\n    def m(self, *args: Any) -> None: ...\n    def _private(self, x: Any) -> Any: ...\n"
        "def _helper(x: Any) -> Any: ...\n"
        "def typed(x: Mapping[str, object]) -> int: ...\n"
    )
    assert list(any_in_signatures(sample)) == ["f(objects)", "f(job)", "f -> ...", "C.m(args)"]
