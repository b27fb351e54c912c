"""`Run.hasRawEvidence` (half of what makes a run REPRODUCIBLE, which the run page's evidence text names)
equals upstream's `hasRawEvidence` column for every corpus run, and the page says what is missing."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import orjson
import pytest
import zstandard
from helpers import EMBEDDED_REPO, EXPORT

from kernelindex.core.context import Context, StoredObjects
from kernelindex.registry.snapshots import Snapshots
from kernelindex.schema.root import Query, schema

CORPUS_ONLY = "314f4d24fd889fc1048942a520881d7750ef542c"  # the last corpus import, before the seeds
RUNS = """query($after: String) { registry(at: "%s") {
  runs(first: 100, after: $after) { pageInfo { hasNextPage endCursor } edges { node { digest hasRawEvidence } } } } }"""


def _upstream() -> dict[str, bool]:
    data = zstandard.ZstdDecompressor().stream_reader(EXPORT.read_bytes()).read()
    found = {}
    for line in data.splitlines():
        record = orjson.loads(line)
        if record["table"] == "benchmark_runs":
            found[record["row"]["runDigest"]] = record["row"]["hasRawEvidence"]
    return found


def _ours() -> dict[str, bool]:
    snapshots = Snapshots(EMBEDDED_REPO)
    snapshots.load()
    context = Context(snapshots, StoredObjects(snapshots), "http://test", dt.date(2026, 11, 30), snapshots.head)
    found: dict[str, bool] = {}
    after: Any = None
    while True:
        result = asyncio.run(
            schema.execute(RUNS % CORPUS_ONLY, {"after": after}, context_value=context, root_value=Query())
        )
        assert result.errors is None, result.errors
        assert result.data is not None
        page = result.data["registry"]["runs"]
        found.update((edge["node"]["digest"], edge["node"]["hasRawEvidence"]) for edge in page["edges"])
        if not page["pageInfo"]["hasNextPage"]:
            return found
        after = page["pageInfo"]["endCursor"]


@pytest.mark.slow
def test_raw_evidence_is_upstreams_for_every_corpus_run() -> None:
    upstream = _upstream()
    assert len(upstream) == 7857 and sum(upstream.values()) == 175  # data/corpus: FlashInfer-Bench's traces
    assert _ours() == upstream
