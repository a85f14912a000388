"""No module of the facade answers an error itself: ``facade/errors.py`` is the one translation.

Read from the source (AST), so a local ``except VoiceNotFound: raise ApiError(400, ...)`` or a
``JSONResponse`` built in an ``except`` fails here before it can drift from the table.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from facade import errors as e

FACADE = Path(__file__).resolve().parents[3] / "facade"
#: Names that build an error answer (or consult the table to build one by hand).
ANSWER_BUILDERS = frozenset({
    "ApiError", "OpenAIError", "JSONResponse", "PlainTextResponse", "Response", "render", "lookup",
})
#: Builders of a response object: never in an ``except`` (the table renders every error).
RESPONSE_BUILDERS = ANSWER_BUILDERS - {"ApiError", "OpenAIError"}
#: Handlers that turn a *foreign* library's error into an answer at its boundary, and why.
ALLOWED = {
    ("facade/job_form.py", "form_payload"): "python-multipart's errors carry no stable type",
    ("facade/job_request.py", "parse_job_request"): "pydantic's errors, answered as the field's sentence",
    ("facade/model_service/synthesis.py", "invocations"): "the engine's failure, for the API's logs (remote_engine)",
}


def _modules() -> list[Path]:
    return sorted(p for p in FACADE.rglob("*.py") if p.name != "errors.py")


def _handlers(tree: ast.AST) -> Iterator[tuple[str, ast.ExceptHandler]]:
    """Every ``except`` clause with the name of the function it is in."""
    def walk(node: ast.AST, function: str) -> Iterator[tuple[str, ast.ExceptHandler]]:
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else function
            if isinstance(child, ast.ExceptHandler):
                yield function, child
            yield from walk(child, name)

    yield from walk(tree, "<module>")


def _called_names(node: ast.AST) -> set[str]:
    names = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            func = call.func
            names.add(func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", ""))
    return names


def _echoes(handler: ast.ExceptHandler) -> bool:
    """Whether an ``ApiError`` in the handler repeats the caught error (``str(exc)``): that is a
    translation of someone's error, where a fixed message (``"x must be a number"``) is the
    facade's own answer to input it could not parse."""
    if handler.name is None:
        return False
    for call in ast.walk(ast.Module(body=handler.body, type_ignores=[])):
        if isinstance(call, ast.Call) and _called_names(call) & {"ApiError", "OpenAIError"}:
            if any(isinstance(n, ast.Name) and n.id == handler.name for a in call.args for n in ast.walk(a)):
                return True
    return False


def _caught(module: object, handler: ast.ExceptHandler) -> tuple[type[BaseException], ...]:
    if handler.type is None:
        return (BaseException,)
    value = eval(compile(ast.Expression(handler.type), "<except>", "eval"), vars(module))  # noqa: S307 - our own source
    return value if isinstance(value, tuple) else (value,)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(FACADE.parent)))
def test_no_except_clause_builds_an_error_answer(path: Path) -> None:
    relative = str(path.relative_to(FACADE.parent))
    module = importlib.import_module(relative.removesuffix(".py").replace("/", "."))
    offences = []
    for function, handler in _handlers(ast.parse(path.read_text(encoding="utf-8"))):
        built = _called_names(ast.Module(body=handler.body, type_ignores=[])) & ANSWER_BUILDERS
        caught = _caught(module, handler)
        if any(issubclass(cls, e.DOMAIN_ROOTS) for cls in caught) and built:
            offences.append(f"{function}:{handler.lineno} answers a domain error itself ({sorted(built)})")
        elif (built & RESPONSE_BUILDERS or _echoes(handler)) and (relative, function) not in ALLOWED:
            offences.append(f"{function}:{handler.lineno} translates an error itself ({sorted(built)})")
    assert not offences, f"{relative}: raise, and map the error once in facade/errors.py: {offences}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(FACADE.parent)))
def test_only_the_table_reads_the_table(path: Path) -> None:
    """``lookup`` (status and message for a domain error) is the table's own step."""
    assert "lookup" not in _called_names(ast.parse(path.read_text(encoding="utf-8")))


def test_the_check_sees_a_local_translation(tmp_path: Path) -> None:
    """The AST walk finds the pattern this file forbids (it would pass vacuously otherwise)."""
    source = (
        "def route():\n"
        "    try:\n"
        "        pass\n"
        "    except VoiceNotFound as exc:\n"
        "        raise e.ApiError(400, str(exc))\n"
    )
    [(function, handler)] = list(_handlers(ast.parse(source)))
    assert function == "route"
    assert _called_names(ast.Module(body=handler.body, type_ignores=[])) & ANSWER_BUILDERS == {"ApiError"}
    assert _echoes(handler)
