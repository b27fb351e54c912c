"""One error shape and one code list: every failure a route did not expect answers
`{"errors": [{"message", "extensions": {"code"}}]}` (datasette's test_error_shape), and every code the edges
spell comes from `kernelindex.core.codes`, where it says what it means."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import PROJECT_ROOT
from starlette.requests import Request
from starlette.responses import Response
from starlette.testclient import TestClient

from kernelindex import registry
from kernelindex.app import create_app
from kernelindex.core import codes
from kernelindex.core.settings import Settings


async def _boom(request: Request) -> Response:
    raise RuntimeError("secret internals: /etc/passwd")


async def _registry_fault(request: Request) -> Response:
    raise registry.RevisionNotFound("x", "raised where no route expected it")


async def _corrupt(request: Request) -> Response:
    raise registry.StoreCorrupt("0" * 40, "object hash mismatch")


@pytest.fixture
def client(basic_store: registry.GitStore) -> Iterator[TestClient]:
    application = create_app(Settings(repo_path=basic_store.path, poll_seconds=3600, graph_cache=False))
    for path, endpoint in (("/boom", _boom), ("/fault", _registry_fault), ("/corrupt", _corrupt)):
        application.add_route(path, endpoint)  # faults no route of ours raises on purpose
    with TestClient(application, raise_server_exceptions=False) as running:
        yield running


def test_an_unexpected_fault_is_masked_in_the_error_shape(client: TestClient) -> None:
    answer = client.get("/boom")
    assert answer.status_code == 500
    assert answer.headers["content-type"] == "application/json"
    assert answer.json() == {
        "errors": [{"message": "Unexpected error.", "extensions": {"code": "INTERNAL_SERVER_ERROR"}}]
    }


def test_a_registry_error_no_route_expected_is_a_fault_of_the_server(client: TestClient) -> None:
    answer = client.get("/fault")
    assert answer.status_code == 500
    error = answer.json()["errors"][0]
    assert error["extensions"] == {"code": "INTERNAL_SERVER_ERROR"}  # one code for a fault, as GraphQL's
    assert error["message"] == "revision not found: 'x': raised where no route expected it"


def test_corruption_is_the_servers_state_and_retryable_elsewhere(client: TestClient) -> None:
    answer = client.get("/corrupt")
    assert answer.status_code == 503
    assert answer.json()["errors"][0]["extensions"] == {"code": "STORE_CORRUPT"}


def test_every_code_constant_says_what_it_means() -> None:
    spelled = {value for name, value in vars(codes).items() if name.isupper() and isinstance(value, str)}
    assert spelled <= set(codes.CODES)
    assert all(meaning.strip() for meaning in codes.CODES.values())


SOURCES = [p for tree in ("api", "web") for p in sorted((PROJECT_ROOT / tree).rglob("*.py"))]
_CODE_ARGUMENT = {"error": 2, "Refusal": 2, "PageError": 1, "error_body": 1}
"""The callables that take an error code, and the position of that argument."""


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(PROJECT_ROOT).as_posix())
def test_codes_come_from_the_code_list(path: Path) -> None:
    """No edge spells a code as a string: it names one of `kernelindex.core.codes` (or passes on one it was given)."""
    literal = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        position = _CODE_ARGUMENT.get(name)
        argument = node.args[position] if position is not None and len(node.args) > position else None
        if isinstance(argument, ast.Constant):
            literal.append(f"line {node.lineno}: {argument.value!r}")
    assert not literal
