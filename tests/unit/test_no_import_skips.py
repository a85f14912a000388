"""No test skips itself because an import failed: it fails.

Every dependency a test needs is in the ``test`` extra, so an import that fails is a broken
install or a renamed module, and a skip hides either (``integration/facade/test_admin.py`` once
skipped the whole admin API that way and the suite stayed green). A skip stays for what a
machine may lack on purpose (a GPU, a Debian tool), said by ``skipif`` with its reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}


def _calls_skip(nodes: list[ast.stmt]) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "skip"
        for stmt in nodes for n in ast.walk(stmt)
    )


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    caught = handler.type
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught] if caught is not None else []
    return any(isinstance(n, ast.Name) and n.id in IMPORT_ERRORS for n in names)


def import_skips(tree: ast.AST) -> Iterator[int]:
    """Lines of ``pytest.importorskip(...)`` and of ``except ImportError: pytest.skip(...)``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "importorskip":
            yield node.lineno
        elif isinstance(node, ast.ExceptHandler) and _catches_import_error(node) and _calls_skip(node.body):
            yield node.lineno


def test_no_test_skips_on_a_failed_import() -> None:
    found = [
        f"{path.relative_to(TESTS).as_posix()}:{line}"
        for path in sorted(TESTS.rglob("*.py")) if path != Path(__file__).resolve()
        for line in import_skips(ast.parse(path.read_text()))
    ]
    assert found == []


def test_the_walk_finds_both_kinds() -> None:
    sample = ast.parse(
        "fastapi = pytest.importorskip('fastapi')\n"
        "try:\n    import torch\nexcept (ImportError, OSError):\n    pytest.skip('no torch', allow_module_level=True)\n"
        "try:\n    import x\nexcept ImportError:\n    x = None\n"
    )
    assert list(import_skips(sample)) == [1, 4]
