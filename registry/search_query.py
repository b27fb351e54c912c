"""KernelIndex's search grammar (`op:rmsnorm gpu:b200 dtype:bf16 ...`): a query read into an `Intent`,
with the limits that bound what a search may cost.

The grammar is upstream's (`apps/web/src/lib/search-query.ts`): `key:value` or
`key=value` facets with 15 keys (op, family, gpu, arch, dtype, shape, layout, framework, language,
cuda, license, source, installable, trust; `tech` and `model`, whose facts manifests here do not
carry, are refused as issues), dtype/framework/layout aliases, bare words that mean a GPU, a dtype, an
architecture, a language, a framework, a trust level or a shape (`4096x4096`, `[2048, 4096]`), `name=int`
axis bindings, quoted phrases, and the rest as text. Unknown keys and bad values are issues with a
hint, never silent text. Values may be quoted (`gpu:"NVIDIA B200"`).

Limits (ours; upstream has none): a query holds at most `MAX_QUERY_CHARS` characters and `MAX_TERMS`
terms (words, quoted phrases and facets, as the grammar splits them). Each term is a pass over the
snapshot's search index (`kernelindex.registry.search`), so `search_cost` says what a query costs before it runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from kernelindex.registry.cohorts import Trust
from kernelindex.registry.errors import SearchTooLarge

__all__ = [
    "DTYPE_ALIASES",
    "FRAMEWORK_ALIASES",
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "Facet",
    "Intent",
    "Issue",
    "gpu_keys_matching",
    "parse_query",
    "search_cost",
    "tokens",
]

MAX_QUERY_CHARS = 512
"""Characters in a query: the longest real query is a few dozen."""
MAX_TERMS = 32
"""Terms in a query (words, phrases, facets): a realistic query holds under a dozen. Each costs a pass
over the snapshot's index; 255 one-letter words once took 36 s."""

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

    Raises:
        SearchTooLarge: more than `MAX_QUERY_CHARS` characters or `MAX_TERMS` terms.

    >>> intent = parse_query("rmsnorm B200 bf16 [2048, 4096]")
    >>> intent.text, intent.gpu, intent.dtypes, intent.shape, intent.issues
    (['rmsnorm'], 'b200', ['bf16'], (2048, 4096), [])
    """
    found = _terms(query)
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

    for token in found:
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


def _terms(query: str) -> list[str]:
    if len(query) > MAX_QUERY_CHARS:
        raise SearchTooLarge("characters", len(query), MAX_QUERY_CHARS)
    found: list[str] = _TOKEN.findall(query.strip())
    if len(found) > MAX_TERMS:
        raise SearchTooLarge("terms", len(found), MAX_TERMS)
    return found


def search_cost(query: str) -> int:
    """What searching for `query` costs, before it runs, in passes over a snapshot's search index: one
    for the runs (facets, order), plus one per term. Each pass looks at most once at each run of the
    snapshot (9,508 kernel runs in the embedded registry), so a query costs at most 1 + MAX_TERMS.

    >>> search_cost(""), search_cost("rmsnorm b200 bf16"), search_cost('"fused add rmsnorm" gpu:"NVIDIA B200"')
    (1, 4, 3)

    Raises:
        SearchTooLarge: as `parse_query`.
    """
    return 1 + len(_terms(query))


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
