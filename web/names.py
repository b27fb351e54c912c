"""How the pages word identifiers: humanized operation names, short digests, external ids, dates; and
what of a hostile value may be shown at all: `link` (an http(s) URL, or nothing to link) and `shown`
(characters XML cannot carry written as escapes). These are the templates' filters.

Names are aliases over stable identity (digests), so presentation may humanize freely; the raw
identifier stays on the page wherever a display name differs.
"""

from __future__ import annotations

import re

from kernelindex.core.hostile import link, profile_link, repository_link, shown
from kernelindex.core.kind_words import kind_words

__all__ = [
    "FILTERS",
    "day",
    "external_id",
    "humanize_operation",
    "kind_words",
    "link",
    "short",
    "shown",
    "trust_words",
]

# Tokens with technical casing (KernelIndex's `apps/web/src/lib/names.ts`, the same list), so an
# operation reads as it does on KernelIndex's own pages.
_CASED_TOKENS = [
    "AMD",
    "GPU",
    "GIT",
    "NHWC",
    "VAE",
    "UNet",
    "LM",
    "MTP",
    "SAM",
    "GRN",
    "SSM",
    "FFN",
    "FFT",
    "RFFT",
    "FP8",
    "FP16",
    "FP32",
    "BF16",
    "INT8",
    "INT4",
    "NVFP4",
    "GEMM",
    "MLP",
    "MoE",
    "MLA",
    "GQA",
    "KV",
    "QKV",
    "QK",
    "RMS",
    "IoU",
    "GELU",
    "GeGLU",
    "SiLU",
    "SwiGLU",
    "RMSNorm",
    "LayerNorm",
    "GroupNorm",
    "RoPE",
    "YaRN",
    "Mamba",
    "Mamba2",
    "ConvNeXtV2",
    "ResNet",
    "Whisper",
    "Hyena",
    "Conformer",
]
_CASED = {token.lower(): token for token in _CASED_TOKENS}
_NUMBERED = re.compile(r"^\d+_")


def humanize_operation(raw: str) -> str:
    """An imported operation identifier as words: `004_fused_add_rmsnorm_h2048` is "Fused add RMSNorm
    h2048". Curated titles (anything with a space) pass through; unknown tokens keep their case.

    >>> humanize_operation("060_fused_attention_qk_matmul_scale_mask_softmax_backward")
    'Fused attention QK matmul scale mask softmax backward'
    """
    if " " in raw:
        return raw
    words = [_CASED.get(word, word) for word in _NUMBERED.sub("", raw).split("_") if word]
    if not words:
        return raw
    if words[0] == words[0].lower():
        words[0] = words[0][:1].upper() + words[0][1:]
    return " ".join(words)


# The sources whose native id is a leaderboard submission number, written `submission/<n>` where the
# source itself writes it so (SOL-ExecBench's leaderboard, as KernelIndex's run pages show it).
_SUBMISSION_SOURCES = frozenset({"sol-execbench"})


def external_id(identifier: str, source: str) -> str:
    """A run's id at its source, as the source writes it.

    >>> external_id("6709", "sol-execbench"), external_id("submission/30771", "gpumode")
    ('submission/6709', 'submission/30771')
    """
    if source in _SUBMISSION_SOURCES and identifier.isdigit():
        return f"submission/{identifier}"
    return identifier


def short(digest: str, digits: int = 16) -> str:
    """`sha256:92bc0be5b5ce9f52…`: a digest cut to `digits` hex digits, marked as cut."""
    prefix, _, hexpart = digest.rpartition(":")
    head = f"{prefix}:" if prefix else ""
    return f"{head}{hexpart[:digits]}…" if len(hexpart) > digits else digest


def day(instant: str | None) -> str:
    """The UTC day of an ISO 8601 instant (`2026-06-07`), or an em dash."""
    return instant[:10] if instant else "—"


_TRUST = {
    "REPORTED": "reported",
    "REPRODUCIBLE": "reproducible",
    "VERIFIED": "verified",
    "REPLICATED": "replicated",
}


def trust_words(trust: str) -> str:
    return _TRUST.get(trust, trust.lower())


FILTERS = {
    "link": link,  # an href or src from data: the URL when http(s), else None (show it as text)
    "repository_link": repository_link,  # ProjectHost / ModelRepository: (kind, id) -> a quoted URL on its host
    "github_link": lambda user: profile_link("github.com", user),  # authors[].github
    "humanize": humanize_operation,
    "external_id": external_id,
    "short": short,
    "day": day,
    "trust": trust_words,
    "kind_words": kind_words,
}
