"""The JSON Schemas served for editors: `/schemas/{name}` (the current one, revalidated) names its immutable twin
`/schemas/{version}/{name}`; both answer the shipped file byte for byte as `application/schema+json`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from server import Running, serve

from kernelindex import registry

SHIPPED = Path(registry.__file__).parent / "schemas"
NAME = "benchmark-run.v1alpha1.schema.json"


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    repo = registry.GitStore.init(tmp_path_factory.mktemp("empty") / "manifests.git").path
    with serve(repo) as running:
        yield running


@pytest.mark.parametrize("name", sorted(p.name for p in SHIPPED.glob("*.schema.json")))
def test_each_shipped_schema_is_served_as_it_is(api: Running, name: str) -> None:
    answer = api.client.get(f"/schemas/{name}", headers={"accept-encoding": "identity"})
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/schema+json"
    assert answer.content == (SHIPPED / name).read_bytes()
    assert answer.headers["cache-control"] == "public, max-age=0, must-revalidate"


def test_the_current_schema_names_its_immutable_twin(api: Running) -> None:
    current = api.client.get(f"/schemas/{NAME}")
    twin = current.headers["content-location"]
    version, name = twin.removeprefix("/schemas/").split("/")
    assert name == NAME and len(version) == 16 and int(version, 16) >= 0
    pinned = api.client.get(twin)
    assert pinned.status_code == 200 and pinned.content == current.content
    assert pinned.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert pinned.headers["content-type"] == "application/schema+json"
    # Every schema of one version shares it: the version names the set, not one file.
    other = api.client.get("/schemas/retraction.v1alpha1.schema.json").headers["content-location"]
    assert other == f"/schemas/{version}/retraction.v1alpha1.schema.json"
    wrong = "0" * 16 if version != "0" * 16 else "1" * 16
    gone = api.client.get(f"/schemas/{wrong}/{NAME}")
    assert gone.status_code == 404 and gone.json()["errors"][0]["extensions"]["code"] == "NOT_FOUND"


def test_a_held_schema_is_not_sent_again(api: Running) -> None:
    first = api.client.get(f"/schemas/{NAME}")
    again = api.client.get(f"/schemas/{NAME}", headers={"if-none-match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""


@pytest.mark.parametrize(
    "path", ["/schemas/benchmark-run.schema.json", "/schemas/BenchmarkRun", "/schemas/..%2Fpyproject.toml"]
)
def test_other_names_are_not_found_in_the_error_shape(api: Running, path: str) -> None:
    """Only the shipped names: never a path read from disk."""
    answer = api.client.get(path)
    assert answer.status_code == 404
    assert answer.json()["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    assert b"setuptools" not in answer.content
