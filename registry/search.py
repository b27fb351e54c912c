"""Search: KernelIndex's query grammar (`op:rmsnorm gpu:b200 dtype:bf16 ...`) parsed and matched against runs.

The grammar is upstream's (`apps/web/src/lib/search-query.ts`, DESIGN section 12.2): `key:value` or
`key=value` facets with 15 keys (op, family, gpu, arch, dtype, shape, layout, framework, language,
cuda, license, source, installable, trust; `tech` and `model`, whose facts manifests here do not
carry, are refused as issues), dtype/framework/layout aliases, bare words that mean a GPU, a dtype, an
architecture, a language, a framework, a trust level or a shape (`4096x4096`, `[2048, 4096]`), `name=int`
axis bindings, quoted phrases, and the rest as text. Unknown keys and bad values are issues with a
hint, never silent text. Values may be quoted (`gpu:"NVIDIA B200"`).

Matching (ours): text is case-insensitive and tokenized on `_`, `-` and spaces, so "fused attention"
finds `fused_attention_*`; each term must match a run's operation or implementation (name or title).
A GPU word matches a product as a whole word ("b200" is NVIDIA B200, not GB200) or an architecture.
Results are ranked by relevance: operation name hits before title hits before implementation hits,
then eligible runs by rank, then newest.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from registry import nodes as n
from registry.cohorts import Trust
from registry.graph import Graph

__all__ = ["DTYPE_ALIASES", "Facet", "Intent", "Issue", "gpu_keys_matching", "parse_query", "search_runs", "tokens"]

DTYPE_ALIASES = {
    "bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "f16": "fp16", "half": "fp16", "float16": "fp16",
    "fp32": "fp32", "f32": "fp32", "float32": "fp32", "float": "fp32", "tf32": "tf32", "fp64": "fp64",
    "fp8": "fp8", "e4m3": "e4m3", "e5m2": "e5m2", "fp8_e4m3": "fp8_e4m3", "fp8_e4m3fnuz": "fp8_e4m3fnuz",
    "fp8_e8m0": "fp8_e8m0", "fp4": "fp4", "nvfp4": "nvfp4", "mxfp4": "mxfp4", "int8": "int8", "int4": "int4",
    "uint8": "uint8", "int32": "int32", "int64": "int64",
}  # fmt: skip
GPU_WORDS = frozenset(
    {"b100", "b200", "gb200", "h100", "h200", "h800", "a100", "a800", "l40s", "l4", "mi300x", "mi325x", "mi355x"}
)
LANGUAGE_WORDS = frozenset({"triton", "cuda", "cutlass", "ptx", "tilelang"})
FRAMEWORK_ALIASES = {"pytorch": "pytorch", "torch": "pytorch"}
LAYOUT_ALIASES = {
    "row_major": "row_major", "row-major": "row_major", "col_major": "col_major", "col-major": "col_major",
    "contiguous": "contiguous", "strided": "strided",
}  # fmt: skip
TRUST_WORDS = {t.name.lower(): t for t in Trust}
KEYS = {
    "op": "op", "operation": "op", "family": "family", "gpu": "gpu", "hardware": "gpu", "arch": "arch",
    "dtype": "dtype", "shape": "shape", "layout": "layout", "framework": "framework", "language": "language",
    "lang": "language", "cuda": "cuda", "trust": "trust", "evidence": "trust", "license": "license",
    "source": "source", "source_available": "source", "installable": "installable",
}  # fmt: skip
_UNSUPPORTED_KEYS = {"tech": "techniques", "technique": "techniques", "model": "workload model provenance"}
_TOKEN = re.compile(r'[A-Za-z_]+[:=]"[^"]*"|"[^"]*"|\S*\[[^\]]*\]|\S+')
_WORD = re.compile(r"[a-z0-9.]+")


@dataclass(frozen=True, slots=True)
class Facet:
    token: str
    field: str
    display: str


@dataclass(frozen=True, slots=True)
class Issue:
    token: str
    message: str


@dataclass(slots=True)
class Intent:
    """What a query asks for."""

    text: list[str] = field(default_factory=list)
    operations: list[str] = field(default_factory=list)  # op: terms (the operation only)
    family: str | None = None
    gpu: str | None = None
    architecture: str | None = None
    dtypes: list[str] = field(default_factory=list)
    shape: tuple[int, ...] | None = None
    axes: dict[str, int] = field(default_factory=dict)
    layout: str | None = None
    framework: str | None = None
    language: str | None = None
    cuda_major: int | None = None
    minimum_trust: Trust | None = None
    license: str | None = None
    require_source: bool = False
    require_installable: bool = False
    facets: list[Facet] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)


def tokens(text: str) -> tuple[str, ...]:
    """Words of a name or title, lower case, split on `_`, `-`, spaces and punctuation.

    >>> tokens("fused_attention-QK Matmul")
    ('fused', 'attention', 'qk', 'matmul')
    """
    return tuple(_WORD.findall(text.lower().replace("_", " ")))


def _shape(value: str) -> tuple[int, ...] | None:
    inner = value[1:-1] if value.startswith("[") and value.endswith("]") else value
    parts = inner.split("x") if "x" in inner else inner.split(",")
    try:
        dims = tuple(int(part.strip()) for part in parts)
    except ValueError:
        return None
    return dims if dims and all(d >= 0 for d in dims) else None


def _flag(value: str) -> bool | None:
    return {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}.get(value)


def _nearest(key: str) -> str | None:
    return next((k for k in KEYS if k.startswith(key[:3]) or key.startswith(k)), None)


def parse_query(query: str) -> Intent:
    """The intent of a search query: its facets, its text, and the issues of what it could not read.

    >>> intent = parse_query("rmsnorm B200 bf16 [2048, 4096]")
    >>> intent.text, intent.gpu, intent.dtypes, intent.shape, intent.issues
    (['rmsnorm'], 'b200', ['bf16'], (2048, 4096), [])
    """
    intent = Intent()

    def facet(token: str, name: str, display: str) -> None:
        intent.facets.append(Facet(token, name, display))

    def issue(token: str, message: str) -> None:
        intent.issues.append(Issue(token, message))

    def keyed(token: str, raw_key: str, value: str) -> None:
        key = KEYS.get(raw_key.lower())
        lower = value.lower()
        if key is None:
            if re.fullmatch(r"[a-z][a-z0-9_]*", raw_key) and re.fullmatch(r"\d+", value):
                intent.axes[raw_key] = int(value)
                facet(token, "axis", f"{raw_key} = {int(value)}")
                return
            if raw_key.lower() in _UNSUPPORTED_KEYS:
                issue(
                    token,
                    f"'{raw_key}:' is not searchable here: manifests carry no {_UNSUPPORTED_KEYS[raw_key.lower()]}",
                )
                return
            hint = _nearest(raw_key.lower())
            issue(token, f"unknown filter '{raw_key}'" + (f". Did you mean '{hint}:'?" if hint else ""))
            return
        if re.match(r"(>=|<=|>|<)", value):
            issue(token, "range filters are not supported yet; use an exact value")
            return
        if key == "op":
            intent.operations.append(lower)
            facet(token, "op", f"operation {lower}")
        elif key == "family":
            intent.family = lower
            facet(token, "family", f"family {lower}")
        elif key == "gpu":
            intent.gpu = lower
            facet(token, "gpu", f"gpu {value}")
        elif key == "arch":
            match = re.fullmatch(r"sm_?(\d+)", lower) or re.fullmatch(r"(gfx\d+)", lower)
            if not match:
                issue(token, f"unrecognized architecture '{value}'")
                return
            intent.architecture = match.group(1) if lower.startswith("gfx") else f"sm_{match.group(1)}"
            facet(token, "arch", f"arch {intent.architecture}")
        elif key == "dtype":
            if lower not in DTYPE_ALIASES:
                issue(token, f"unknown dtype '{value}'")
                return
            _add(intent.dtypes, DTYPE_ALIASES[lower])
            facet(token, "dtype", f"dtype {DTYPE_ALIASES[lower]}")
        elif key == "shape":
            shape = _shape(lower)
            if shape is None:
                issue(token, f"unparseable shape '{value}'")
                return
            intent.shape = shape
            facet(token, "shape", f"shape [{', '.join(map(str, shape))}]")
        elif key == "layout":
            if lower not in LAYOUT_ALIASES:
                issue(token, f"unknown layout '{value}'")
                return
            intent.layout = LAYOUT_ALIASES[lower]
            facet(token, "layout", f"layout {intent.layout}")
        elif key == "framework":
            intent.framework = FRAMEWORK_ALIASES.get(lower, lower)
            facet(token, "framework", f"framework {intent.framework}")
        elif key == "language":
            intent.language = lower
            facet(token, "language", f"language {lower}")
        elif key == "cuda":
            major = re.match(r"\d+", lower)
            if major is None:
                issue(token, f"unparseable CUDA version '{value}'")
                return
            intent.cuda_major = int(major.group())
            facet(token, "cuda", f"cuda {lower}")
        elif key == "trust":
            if lower not in TRUST_WORDS:
                issue(token, f"unknown trust level '{value}': one of verified, replicated, reproducible, reported")
                return
            intent.minimum_trust = TRUST_WORDS[lower]
            facet(token, "trust", f"trust ≥ {lower}")
        elif key == "license":
            intent.license = lower
            facet(token, "license", f"license {lower}")
        else:  # source, installable
            flag = _flag(lower)
            if flag is None:
                issue(token, f"'{raw_key}' expects true or false, got '{value}'")
                return
            if key == "source":
                intent.require_source = flag
                facet(token, "source", f"source {'required' if flag else 'optional'}")
            else:
                intent.require_installable = flag
                facet(token, "installable", "installable" if flag else "any install state")

    for token in _TOKEN.findall(query.strip()):
        if len(token) >= 2 and token.startswith('"') and token.endswith('"'):
            term = token[1:-1].strip().lower()
            if term:
                intent.text.append(term)
            continue
        pair = re.fullmatch(r"([A-Za-z_]+)[:=](.+)", token)
        if pair:
            value = pair.group(2)
            if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
                value = value[1:-1]
            keyed(token, pair.group(1), value)
            continue
        lower = token.lower()
        arch = re.fullmatch(r"sm_?(\d+)", lower)
        if re.fullmatch(r"\[.*\]", token) or re.fullmatch(r"\d+x[\dx]+", lower):
            shape = _shape(lower)
            if shape is None:
                issue(token, f"unparseable shape '{token}'")
            else:
                intent.shape = shape
                facet(token, "shape", f"shape [{', '.join(map(str, shape))}]")
        elif lower in DTYPE_ALIASES:
            _add(intent.dtypes, DTYPE_ALIASES[lower])
            facet(token, "dtype", f"dtype {DTYPE_ALIASES[lower]}")
        elif lower in GPU_WORDS:
            intent.gpu = lower
            facet(token, "gpu", f"gpu {token.upper()}")
        elif arch:
            intent.architecture = f"sm_{arch.group(1)}"
            facet(token, "arch", f"arch {intent.architecture}")
        elif lower in FRAMEWORK_ALIASES:
            intent.framework = FRAMEWORK_ALIASES[lower]
            facet(token, "framework", f"framework {intent.framework}")
        elif lower in LANGUAGE_WORDS:
            intent.language = lower
            facet(token, "language", f"language {lower}")
        elif lower in TRUST_WORDS:
            intent.minimum_trust = TRUST_WORDS[lower]
            facet(token, "trust", f"trust ≥ {lower}")
        else:
            intent.text.append(lower)
    return intent


def _add(values: list[str], value: str) -> None:
    if value not in values:
        values.append(value)


def gpu_keys_matching(query: str, keys: Iterable[str]) -> set[str]:
    """The GPU index keys (lower-case products and architectures) a user's GPU text names.

    >>> sorted(gpu_keys_matching("B200", ["nvidia b200", "nvidia gb200", "sm_100"]))
    ['nvidia b200']
    >>> sorted(gpu_keys_matching("sm100", ["nvidia b200", "sm_100"]))
    ['sm_100']
    >>> sorted(gpu_keys_matching("NVIDIA B200", ["nvidia b200"]))
    ['nvidia b200']
    """
    wanted = " ".join(query.lower().split())
    arch = re.fullmatch(r"sm_?(\d+)", wanted)
    if arch:
        wanted = f"sm_{arch.group(1)}"
    words = wanted.split()
    found = set()
    for key in keys:
        if key == wanted:
            found.add(key)
            continue
        parts = key.split()
        if any(parts[i : i + len(words)] == words for i in range(len(parts) - len(words) + 1)):
            found.add(key)
    return found


def _walk(value: Any, key: str) -> Iterable[Any]:
    """Every value under `key` anywhere in a JSON document."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k == key:
                yield v
            yield from _walk(v, key)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, key)


def _term_score(term: str, run: n.Run, graph: Graph, words: Callable[[str], tuple[str, ...]], operation: str) -> int:
    """How well one text term matches a run: 3 operation name, 2 operation title, 1 implementation."""
    needle = tokens(term)
    if not needle:
        return 0

    def contains(haystack: tuple[str, ...]) -> bool:
        return any(haystack[i : i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1))

    op = graph.nodes.get(operation)
    if op is not None:
        if contains(words(op.name)):
            return 3
        if op.title and contains(words(op.title)):
            return 2
    implementation = graph.nodes.get(run.implementation)
    if implementation is not None and (
        contains(words(implementation.name)) or (implementation.title and contains(words(implementation.title)))
    ):
        return 1
    return 0


def search_runs(graph: Graph, intent: Intent, document: Callable[[str], Mapping[str, Any]]) -> list[str]:
    """The runs an intent matches, most relevant first. `document(digest)` reads a stored manifest
    (for the facets the graph does not keep: dtypes, shapes, layouts, frameworks, CUDA, licences)."""
    candidates: set[str] | None = None

    def narrow(found: Iterable[str]) -> None:
        nonlocal candidates
        candidates = set(found) if candidates is None else candidates.intersection(found)

    gpu_index = graph.runs_by["gpu"]
    if intent.gpu is not None:
        narrow(d for key in gpu_keys_matching(intent.gpu, gpu_index) for d in gpu_index[key])
    if intent.architecture is not None:
        narrow(gpu_index.get(intent.architecture, ()))
    pool: Iterable[str] = candidates if candidates is not None else graph.facts.keys()
    memo: dict[tuple[str, str], Any] = {}

    def cached(kind: str, digest: str, compute: Callable[[], Any]) -> Any:
        key = (kind, digest)
        if key not in memo:
            memo[key] = compute()
        return memo[key]

    word_memo: dict[str, tuple[str, ...]] = {}

    def words(text: str) -> tuple[str, ...]:
        found = word_memo.get(text)
        if found is None:
            found = word_memo[text] = tokens(text)
        return found

    def doc(digest: str) -> Mapping[str, Any]:
        found: Mapping[str, Any] = cached("doc", digest, lambda: document(digest) if digest in graph.nodes else {})
        return found

    scored: list[tuple[int, int, int, str]] = []
    for digest in pool:
        run = graph.nodes[digest]
        facts = graph.facts[digest]
        assert isinstance(run, n.Run)
        operation = facts.operation or ""
        op = graph.nodes.get(operation)
        implementation = graph.nodes.get(run.implementation)
        if intent.family is not None and not (isinstance(op, n.Operation) and op.family.lower() == intent.family):
            continue
        if intent.minimum_trust is not None and facts.trust < intent.minimum_trust:
            continue
        if intent.language is not None and not (
            isinstance(implementation, n.Implementation) and implementation.language.lower() == intent.language
        ):
            continue
        if intent.require_source and not (
            isinstance(implementation, n.Implementation) and implementation.source_available
        ):
            continue
        if any(_term_score(term, run, graph, words, operation) < 2 for term in intent.operations):
            continue  # op: names the operation (its name or title), not an implementation
        hits = [_term_score(term, run, graph, words, operation) for term in intent.text]
        if 0 in hits or not _document_facets_hold(intent, run, doc, cached):
            continue
        rank = graph.rank(digest)
        scored.append((-sum(hits), rank if rank is not None else 1 << 30, -run.observed_ns, digest))
    scored.sort()
    return [entry[3] for entry in scored]


def _document_facets_hold(
    intent: Intent,
    run: n.Run,
    doc: Callable[[str], Mapping[str, Any]],
    cached: Callable[[str, str, Callable[[], Any]], Any],
) -> bool:
    if intent.dtypes:
        have = cached("dtypes", run.digest, lambda: _dtypes(doc(run.workload), doc(run.implementation)))
        if not set(intent.dtypes) <= have:
            return False
    if intent.shape is not None:
        shapes = cached(
            "shapes", run.workload, lambda: {tuple(s) for s in _walk(doc(run.workload), "shape") if _ints(s)}
        )
        if intent.shape not in shapes:
            return False
    if intent.axes:
        axes = doc(run.workload).get("spec", {}).get("axes") or {}
        if any(axes.get(name) != value for name, value in intent.axes.items()):
            return False
    if intent.layout is not None:
        layouts = cached(
            "layouts",
            run.digest,
            lambda: (
                {str(v).lower() for v in _walk(doc(run.workload), "layout")}
                | {str(v).lower() for lst in _walk(doc(run.implementation), "layouts") for v in (lst or ())}
            ),
        )
        if intent.layout not in layouts:
            return False
    if intent.framework is not None or intent.cuda_major is not None:
        software = (doc(run.environment).get("spec") or {}).get("software") or {}
        if intent.framework is not None:
            name = str((software.get("framework") or {}).get("name") or "").lower()
            interface = str(((doc(run.implementation).get("spec") or {}).get("callable") or {}).get("interface") or "")
            if intent.framework not in {FRAMEWORK_ALIASES.get(name, name), FRAMEWORK_ALIASES.get(interface, interface)}:
                return False
        if intent.cuda_major is not None:
            major = re.match(r"\d+", str(software.get("cudaToolkit") or ""))
            if major is None or int(major.group()) != intent.cuda_major:
                return False
    if intent.license is not None or intent.require_installable:
        spec = doc(run.implementation).get("spec") or {}
        if intent.license is not None:
            licensing = spec.get("licensing") or {}
            declared = {str(licensing.get(k) or "").lower() for k in ("declared", "concluded")}
            if intent.license not in declared:
                return False
        if intent.require_installable and not any(v.get("install") for v in spec.get("buildVariants") or ()):
            return False
    return True


def _ints(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def _dtypes(workload: Mapping[str, Any], implementation: Mapping[str, Any]) -> set[str]:
    found = {DTYPE_ALIASES.get(str(v).lower(), str(v).lower()) for v in _walk(workload, "dtype")}
    for listed in _walk(implementation, "dtypes"):
        found.update(DTYPE_ALIASES.get(str(v).lower(), str(v).lower()) for v in listed or ())
    return found
