"""Plain mode (`KERNELINDEX_PLAIN=1`, `kernelindex serve --plain`): strawberry's own executor on Starlette and uvicorn
as they come. Which parts it switches off is read from a fresh interpreter at the flag's edge ("0" and unset: the
shortcuts; "1": none of them, and the module that reaches into graphql-core and strawberry never imported); two
real `kernelindex serve` processes, one of each mode, answer the same requests with the same bytes.

The rest of the suite's GraphQL answers (the golden recording among them) is run in plain mode by `.ci/run`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from helpers import EMBEDDED_REPO

SEED_RUN = "sha256:7f6df4bbbdbeb0960fc8acc7e71c764ea190f2a17cf28da04b8cfc1b45aca308"

PROBE = """
import json, sys
from kernelindex.app import create_app
from kernelindex.core.settings import Settings
from kernelindex.schema.root import schema
from kernelindex.serving.process import options
from pathlib import Path
app = create_app(Settings(repo_path=Path(sys.argv[1]), graph_cache=False, prepare_search=False))
protocol = options(Settings()).get("http")
print(json.dumps({
    "compiled": "kernelindex.engine.compiled" in sys.modules,
    "direct": "kernelindex.service.direct" in sys.modules,
    "wire": "kernelindex.serving.wire" in sys.modules,
    "executor": getattr(schema.execution_context_class, "__name__", None),
    "middleware": [m.cls.__name__ for m in app.user_middleware],
    "protocol": getattr(getattr(protocol, "func", protocol), "__name__", None),
}))
"""

FAST = {
    "compiled": True,
    "direct": True,
    "wire": True,
    "executor": "CompiledExecutor",
    "middleware": ["Observing", "Metering", "FastLane", "SafeAnswers", "CORSMiddleware"],  # Metering: both modes
    "protocol": "HttpProtocol",
}
PLAIN = {
    "compiled": False,
    "direct": False,
    "wire": False,
    "executor": "StrawberryGraphQLCoreExecutionContext",  # strawberry's default
    "middleware": ["Observing", "Metering", "SafeAnswers", "HeaderLimit", "CORSMiddleware"],
    "protocol": None,
}


def _probe(value: str | None) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "KERNELINDEX_PLAIN"}
    if value is not None:
        env["KERNELINDEX_PLAIN"] = value
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(EMBEDDED_REPO)], env=env, capture_output=True, text=True, check=True
    )
    found: dict[str, object] = json.loads(done.stdout)
    return found


@pytest.mark.parametrize(("value", "expected"), [(None, FAST), ("", FAST), ("0", FAST), ("1", PLAIN)])
def test_the_flag_switches_every_shortcut_and_only_at_its_edge(value: str | None, expected: dict[str, object]) -> None:
    assert _probe(value) == expected


def _free_port() -> int:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port: int = free.getsockname()[1]
        return port


@contextmanager
def _server(*extra: str) -> Iterator[str]:
    """`kernelindex serve` of the embedded registry in a process of its own, until it answers /healthz."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "KERNELINDEX_PLAIN"}
    process = subprocess.Popen(
        [sys.executable, "-m", "kernelindex", "serve", "--repo", str(EMBEDDED_REPO), "--port", str(port), *extra],
        env=env | {"KERNELINDEX_BASE_URL": "https://registry.test"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, "serve exited"
            try:
                if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "serve did not become healthy"
            time.sleep(0.1)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


README_QUERY = (
    f'{{ run(id: "{SEED_RUN}") {{ name rank trust primary {{ value display }} cohort {{ key size }} '
    "leader { name primary { display } } } }"
)
REQUESTS: list[tuple[str, str, dict[str, str], bytes | None]] = [
    ("POST", "/graphql", {"content-type": "application/json"}, json.dumps({"query": README_QUERY}).encode()),
    ("POST", "/graphql", {"content-type": "application/json", "accept-encoding": "br"},
     json.dumps({"query": "{ records(first: 20) { edges { node { run { name } } } } }"}).encode()),
    ("POST", "/graphql", {"content-type": "application/json", "accept": "application/graphql-response+json"},
     b'{"query": "{ nothing }"}'),
    ("POST", "/graphql", {"content-type": "application/json", "origin": "https://elsewhere.example"},
     json.dumps([{"query": README_QUERY}, {"query": "{ __typename }"}]).encode()),
    ("GET", "/graphql?query=%7B%20__typename%20%7D", {}, None),
    ("GET", f"/runs/{SEED_RUN}", {"accept": "application/json"}, None),
    ("GET", "/healthz", {}, None),
]  # fmt: skip


def _answer(url: str, method: str, path: str, headers: dict[str, str], body: bytes | None) -> tuple[object, ...]:
    """Status, headers (less the clock's `date` and, for /healthz, the length of its readings) and body bytes, twice: the first
    answer executes, the second is the cache's."""
    answers: list[object] = []
    with httpx.Client(base_url=url, timeout=60) as client:
        for _ in range(2):
            response = client.request(method, path, headers=headers, content=body)
            readings = path == "/healthz"  # its clock and uptime vary in value and so in length
            # The budget left (`RateLimit`) follows what each server charged so far; its policy is compared.
            dropped = {"date", "content-length", "ratelimit"} if readings else {"date", "ratelimit"}
            kept = [(k, v) for k, v in response.headers.multi_items() if k not in dropped]
            content = sorted(json.loads(response.content)) if readings else response.content
            answers.append((response.status_code, kept, content))
    return tuple(answers)


@pytest.mark.slow  # two server processes of the embedded registry
def test_a_plain_server_answers_the_same_bytes_as_a_fast_one() -> None:
    with _server() as fast, _server("--plain") as plain:
        for method, path, headers, body in REQUESTS:
            assert _answer(plain, method, path, headers, body) == _answer(fast, method, path, headers, body), path
