"""Synthetic registries: the real corpus scaled k times, reproducible from a seed.

Copy i of the corpus (i = 1..k-1) re-creates every operation, workload, implementation,
project and run with a small change to its spec, so each gets a new digest, and re-links
the references to the copies: cohorts keep their real sizes and structure (same protocols
and environments), field shapes are the real ones, and latencies are the real values times
log-normal noise (sigma 0.1), observations shifted by up to a month. The history is the
embedded registry's own commits followed by one bulk commit holding every copy, as an
import would write it (a history of k bulk commits would make git rewrite every fan-out
tree k times: a shape no registry has, whose cost is the publication replay's worst case).

Registries are cached under bench/cache/ (keyed by scale and seed); generation takes about
a minute per 200k manifests on 2 cores.
"""

from __future__ import annotations

import math
import os
import random
import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from kernelindex.registry.canonical import manifest_digest, stored_json
from kernelindex.registry.manifest import manifest_path
from kernelindex.registry.store import GitStore

__all__ = ["CACHE", "EMBEDDED", "STATE", "oids_at_head", "stored_bytes_at_head", "synthetic_registry", "write_commit"]

CACHE = Path(os.environ.get("BENCH_CACHE") or Path(__file__).resolve().parent / "cache")
STATE = CACHE / "state"
"""The cache folders of the registries the bench serves and probes (`serve --cache-dir`): kept with them, never
in the user's cache folder."""
EMBEDDED = Path(__file__).resolve().parent.parent / "manifests.git"
_COPIED = {
    "OperationSpec",
    "WorkloadCase",
    "WorkloadSuite",
    "ImplementationRevision",
    "SoftwareProject",
    "BenchmarkRun",
    "ServingRun",
}
_TIME = 1_790_000_000  # commit time of the first synthetic copy (2026-09-21)


def synthetic_registry(scale: int, seed: int = 7, *, source: Path = EMBEDDED) -> Path:
    """The path of a bare registry holding `scale` copies of `source` (1: a clone of `source`, so
    that measuring never writes next to the project's own registry)."""
    target = CACHE / f"x{scale}-seed{seed}" / "manifests.git"
    if (target / "refs" / "heads" / "main").exists():
        return target
    shutil.rmtree(target.parent, ignore_errors=True)
    target.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--bare", "--local", str(source), str(target)], check=True)
    if scale <= 1:
        return target
    store = GitStore(target)
    head = store.head()
    assert head is not None
    documents = [orjson.loads(data) for data in store.read_blobs([e.oid for e in store.entries(head)])]
    corpus = orjson.dumps(documents)
    workers = min(os.cpu_count() or 1, 4)
    files: dict[str, bytes] = {}
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for copy in pool.map(_copy, [(corpus, i, seed) for i in range(1, scale)]):
            files.update(copy)
    write_commit(target, head, files, subject=f"Synthetic: {scale - 1} copies of the corpus (seed {seed})", when=_TIME)
    return target


def write_commit(repo: Path, parent: str, files: dict[str, bytes], *, subject: str, when: int) -> str:
    """One commit on main adding `files`, through git fast-import (a benchmark fixture writer:
    the data is generated valid, so it skips the validation every registry write performs)."""
    env = {**os.environ, "GIT_DIR": str(repo)}
    process = subprocess.Popen(["git", "fast-import", "--quiet", "--done", "--depth=0"], stdin=subprocess.PIPE, env=env)
    assert process.stdin is not None
    out = process.stdin
    for mark, data in enumerate(files.values(), start=1):
        out.write(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(data), data))
    message = f"{subject}\n\nSource: synthetic\n".encode()
    ident = f"KernelIndex bench <bench@kernelindex.invalid> {when} +0000".encode()
    out.write(b"commit refs/heads/main\nauthor " + ident + b"\ncommitter " + ident + b"\n")
    out.write(b"data %d\n%s\nfrom %s\n" % (len(message), message, parent.encode()))
    for mark, path in enumerate(files, start=1):
        out.write(f"M 100644 :{mark} {path}\n".encode())
    out.write(b"\ndone\n")
    out.close()
    if process.wait() != 0:
        raise RuntimeError("git fast-import failed")
    head = GitStore(repo).head()
    assert head is not None
    return head


def _copy(job: tuple[bytes, int, int]) -> dict[str, bytes]:
    corpus, index, seed = job
    documents: list[dict[str, Any]] = orjson.loads(corpus)
    rng = random.Random(seed * 1_000_003 + index)
    renamed: dict[str, str] = {}  # old digest -> new digest
    names: dict[str, str] = {}  # old project name -> new project name
    files: dict[str, bytes] = {}
    order = (
        "SoftwareProject",
        "OperationSpec",
        "WorkloadCase",
        "WorkloadSuite",
        "ImplementationRevision",
        "BenchmarkRun",
        "ServingRun",
    )
    by_kind: dict[str, list[dict[str, Any]]] = {kind: [] for kind in order}
    for document in documents:
        if document["kind"] in _COPIED:
            by_kind[document["kind"]].append(document)
    for kind in order:
        for document in by_kind[kind]:
            old = manifest_digest(document)
            copy = _changed(document, index, rng, renamed, names)
            digest = manifest_digest(copy)
            renamed[old] = digest
            files[manifest_path(kind, digest)] = stored_json(copy)
    return files


def _changed(
    document: dict[str, Any], index: int, rng: random.Random, renamed: dict[str, str], names: dict[str, str]
) -> dict[str, Any]:
    copy: dict[str, Any] = orjson.loads(orjson.dumps(document))
    kind = copy["kind"]
    spec = copy["spec"]
    metadata = copy["metadata"]
    old_name = metadata["name"]
    metadata["name"] = f"{old_name[:190]}-c{index}"
    tag = f"synthetic copy {index}"
    if kind == "SoftwareProject":
        spec["name"] = f"{spec['name'][:180]} ({tag})"
        names[old_name] = metadata["name"]
    elif kind == "OperationSpec":
        spec["semantics"]["expression"] = f"{spec['semantics'].get('expression', '')[:1900]} [{tag}]".strip()
    elif kind in ("WorkloadCase", "WorkloadSuite"):
        spec["operationSpecDigest"] = renamed.get(spec["operationSpecDigest"], spec["operationSpecDigest"])
    elif kind == "ImplementationRevision":
        spec["operation"]["specDigest"] = renamed.get(spec["operation"]["specDigest"], spec["operation"]["specDigest"])
        version = spec["projectRevision"].get("version")
        spec["projectRevision"]["version"] = f"{(version or 'r')[:80]}-c{index}"
        labels = metadata.get("labels") or {}
        if "project" in labels:
            labels["project"] = names.get(labels["project"], labels["project"])
    elif kind == "BenchmarkRun":
        for field in ("implementationDigest", "workloadDigest"):
            spec[field] = renamed.get(spec[field], spec[field])
        noise = math.exp(rng.gauss(0.0, 0.1))
        timing = spec.get("timing")
        if timing:
            latency = timing["latencyNs"]
            for key, value in list(latency.items()):
                if key == "confidence95":
                    latency[key] = [max(0, round(v * noise)) for v in value]
                else:
                    latency[key] = max(0, round(value * noise))
        for measurement in spec.get("measurements") or ():
            measurement["value"] = measurement["value"] * noise
        spec["observedAt"] = _shifted(spec["observedAt"], rng)
    elif kind == "ServingRun":
        noise = math.exp(rng.gauss(0.0, 0.1))
        for measurement in spec["measurements"]:
            measurement["value"] = measurement["value"] * noise
        spec["observedAt"] = _shifted(spec["observedAt"], rng)
    return copy


def _shifted(stamp: str, rng: random.Random) -> str:
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")) + timedelta(
        seconds=rng.randint(-30 * 86400, 30 * 86400)
    )
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def stored_bytes_at_head(repo: Path) -> int:
    """Total size of the manifests at main: the floor of the memory measurement."""
    store = GitStore(repo)
    head = store.head()
    assert head is not None
    output = subprocess.run(
        ["git", "--git-dir", str(repo), "ls-tree", "-r", "-l", head], capture_output=True, check=True, text=True
    ).stdout
    return sum(int(line.split()[3]) for line in output.splitlines() if line.split()[3] != "-")


def oids_at_head(repo: Path) -> Iterator[str]:
    store = GitStore(repo)
    head = store.head()
    assert head is not None
    for entry in store.entries(head):
        yield entry.oid
