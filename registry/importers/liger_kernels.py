"""The curated Liger-Kernel benchmark kernels: for each `kernel_name` of the benchmark CSV, the
operation it measures (signature, family, derived axes) and how a row's config binds its axes.

Curation is explicit, as KernelIndex's (`apps/web/src/server/import/liger/kernels*.ts`, whose
three tranches this table follows entry for entry, so that the same rows yield the same digests
here and upstream): a kernel not listed, or a config shape its binder does not recognise, is
skipped and counted, never guessed. The CSV spans several eras of the benchmark scripts, so each
binder checks the exact config keys its era wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["KERNELS", "MODES", "Binding", "Kernel", "Tensor"]

Config = Mapping[str, Any]

DTYPES = {"torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.float32": "fp32"}

MODES = {
    "forward": "the module forward pass",
    "backward": "the backward pass of the module output given a random upstream gradient",
    "full": "the forward pass plus the backward pass",
}
"""The timed pass of each `kernel_operation_mode`: one protocol each."""


@dataclass(frozen=True, slots=True)
class Tensor:
    """A signature argument: dims are axis names or literal sizes; dtype "cfg" is the case's float dtype."""

    name: str
    shape: tuple[str | int, ...]
    dtype: str = "cfg"


@dataclass(frozen=True, slots=True)
class Binding:
    """A row's case: integer axes (in the order upstream writes them), the float dtype, scalars."""

    axes: dict[str, int]
    dtype: str
    scalars: dict[str, float | int] | None = None


Binder = Callable[[int, str, Config], Binding | None]


@dataclass(frozen=True, slots=True)
class Kernel:
    csv_name: str
    slug: str
    family: str
    title: str
    description: str
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    bind: Binder
    derived: dict[str, str] = field(default_factory=dict)


def _int(value: Any) -> int | None:
    """A positive integer (JSON `2048` or `2048.0`), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value) if value > 0 else None


def _positive(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value or value in (float("inf"),):
        return None
    return value if value > 0 else None


def _dtype(value: Any) -> str | None:
    return DTYPES.get(value) if isinstance(value, str) else None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _equals(value: Any, expected: int) -> bool:
    """JavaScript's `===` against a number: booleans never equal numbers."""
    return _number(value) and value == expected


def _rows_hidden(with_eps: bool) -> Binder:
    """rms_norm / layer_norm / softmax era: config {M, dtype[, eps]}, hidden size swept."""

    def bind(x: int, x_name: str, config: Config) -> Binding | None:
        rows, dtype = _int(config.get("M")), _dtype(config.get("dtype"))
        epsilon = _positive(config.get("eps")) if with_eps else None
        if not rows or not dtype or (with_eps and not epsilon) or x_name not in ("H", "N"):
            return None
        return Binding({"rows": rows, "hidden": x}, dtype, {"eps": epsilon} if epsilon else None)

    return bind


def _cross_entropy(x: int, x_name: str, config: Config) -> Binding | None:
    batch, seq = _int(config.get("B")), _int(config.get("T"))
    if not batch or not seq or x_name != "V":
        return None
    return Binding({"tokens": batch * seq, "vocab": x}, "fp32")


def _jsd(x: int, x_name: str, config: Config) -> Binding | None:
    if x_name == "V":
        return _cross_entropy(x, x_name, config)
    if x_name == "BT":
        vocab = _int(config.get("vocab_size"))
        return Binding({"tokens": x, "vocab": vocab}, "fp32") if vocab else None
    return None


def _embedding(x: int, x_name: str, config: Config) -> Binding | None:
    batch, seq, hidden = _int(config.get("B")), _int(config.get("T")), _int(config.get("D"))
    dtype = _dtype(config.get("dtype"))
    if not batch or not seq or not hidden or not dtype or x_name != "V":
        return None
    return Binding({"batch": batch, "seq": seq, "hidden": hidden, "vocab": x}, dtype)


def _rope(x: int, x_name: str, config: Config) -> Binding | None:
    q_heads, kv_heads = _int(config.get("num_q_heads")), _int(config.get("num_kv_heads"))
    dtype = _dtype(config.get("dtype"))
    if not q_heads or not kv_heads or not dtype:
        return None
    seq = x if x_name == "T" else _int(config.get("seq_len"))
    hidden = x if x_name == "H" else _int(config.get("hidden_size"))
    if not seq or not hidden or hidden % q_heads:
        return None
    return Binding({"seq": seq, "hidden": hidden, "q_heads": q_heads, "kv_heads": kv_heads}, dtype)


def _mlp(batch_key: str, activation: str) -> Binder:
    def bind(x: int, x_name: str, config: Config) -> Binding | None:
        batch, hidden = _int(config.get(batch_key)), _int(config.get("hidden_size"))
        intermediate, dtype = _int(config.get("intermediate_size")), _dtype(config.get("dtype"))
        if not batch or not hidden or not intermediate or not dtype:
            return None
        if x_name != "T" or config.get("hidden_act") != activation:
            return None
        return Binding({"batch": batch, "seq": x, "hidden": hidden, "intermediate": intermediate}, dtype)

    return bind


def _relu_squared(x: int, x_name: str, config: Config) -> Binding | None:
    rows, dtype = _int(config.get("M")), _dtype(config.get("dtype"))
    if not rows or not dtype or x_name != "N":
        return None
    return Binding({"rows": rows, "hidden": x}, dtype)


def _group_norm(x: int, x_name: str, config: Config) -> Binding | None:
    batch, hidden = _int(config.get("M")), _int(config.get("H"))
    per_group, dtype = _int(config.get("channels_per_group")), _dtype(config.get("dtype"))
    epsilon = _positive(config.get("eps"))
    if not batch or not hidden or not per_group or not dtype or not epsilon:
        return None
    if x_name != "C" or x % per_group:
        return None
    return Binding(
        {"batch": batch, "channels": x, "hidden": hidden, "channels_per_group": per_group}, dtype, {"eps": epsilon}
    )


def _sparsemax(x: int, x_name: str, config: Config) -> Binding | None:
    batch, seq, dtype = _int(config.get("B")), _int(config.get("T")), _dtype(config.get("dtype"))
    if not batch or not seq or not dtype or x_name != "V" or not _equals(config.get("dim"), -1):
        return None
    return Binding({"tokens": batch * seq, "features": x}, dtype)


def _megatron_rms_norm(x: int, x_name: str, config: Config) -> Binding | None:
    seq, batch = _int(config.get("S")), _int(config.get("B"))
    if not seq or not batch or x_name != "H":
        return None
    return Binding({"seq": seq, "batch": batch, "hidden": x}, "bf16", {"eps": 1e-6})


def _megatron_swiglu(x: int, x_name: str, config: Config) -> Binding | None:
    seq, batch = _int(config.get("S")), _int(config.get("B"))
    if not seq or not batch or x_name != "ffn_local":
        return None
    return Binding({"seq": seq, "batch": batch, "ffn": x}, "bf16")


def _megatron_cross_entropy(x: int, x_name: str, config: Config) -> Binding | None:
    seq, batch = _int(config.get("S")), _int(config.get("B"))
    if not seq or not batch or x_name != "V" or not _equals(config.get("TP"), 1):
        return None
    return Binding({"seq": seq, "batch": batch, "vocab": x}, "bf16")


def _fused_moe(x: int, x_name: str, config: Config) -> Binding | None:
    hidden, intermediate = _int(config.get("H")), _int(config.get("intermediate_dim"))
    k, dtype = _int(config.get("K")), _dtype(config.get("dtype"))
    if not hidden or not intermediate or not k or not dtype:
        return None
    tokens = x if x_name == "T" else _int(config.get("T"))
    experts = x if x_name == "E" else _int(config.get("E"))
    if not tokens or not experts or x_name not in ("T", "E"):
        return None
    return Binding(
        {"tokens": tokens, "hidden": hidden, "intermediate": intermediate, "experts": experts, "k": k}, dtype
    )


def _neighborhood_attention(x: int, x_name: str, config: Config) -> Binding | None:
    batch, hidden, heads = (
        _int(config.get("batch_size")),
        _int(config.get("hidden_size")),
        _int(config.get("num_heads")),
    )
    kernel, dilation = _int(config.get("kernel_size")), _int(config.get("dilation"))
    dtype = _dtype(config.get("dtype"))
    if not batch or not hidden or not heads or not kernel or not dilation or not dtype:
        return None
    if x_name != "seq_len" or config.get("bias") is not True or hidden % heads:
        return None
    axes = {"batch": batch, "seq": x, "hidden": hidden, "heads": heads, "kernel_size": kernel, "dilation": dilation}
    return Binding(axes, dtype)


def _multi_token_attention(x: int, x_name: str, config: Config) -> Binding | None:
    batch, heads_in, heads_out = _int(config.get("B")), _int(config.get("C_in")), _int(config.get("C_out"))
    k, dtype = _int(config.get("K")), _dtype(config.get("dtype"))
    if not batch or not heads_in or not heads_out or not k or not dtype:
        return None
    if x_name != "L" or not _equals(config.get("groups"), 1) or config.get("bias") is not True:
        return None
    return Binding({"batch": batch, "heads_in": heads_in, "heads_out": heads_out, "seq": x, "k": k}, dtype)


def _tokens_vocab(x: int, x_name: str, config: Config) -> Binding | None:
    return _cross_entropy(x, x_name, config)


def _preference(x: int, x_name: str, config: Config) -> Binding | None:
    seq, hidden, vocab = _int(config.get("T")), _int(config.get("H")), _int(config.get("V"))
    dtype = _dtype(config.get("dtype"))
    if not seq or not hidden or not vocab or not dtype or x_name != "B":
        return None
    return Binding({"batch": x, "seq": seq, "hidden": hidden, "vocab": vocab}, dtype)


def _distill(x: int, x_name: str, config: Config) -> Binding | None:
    hidden, vocab, dtype = _int(config.get("H")), _int(config.get("V")), _dtype(config.get("dtype"))
    hard, soft = config.get("weight_hard_loss"), config.get("weight_soft_loss")
    if not hidden or not vocab or not dtype or x_name != "BT":
        return None
    if config.get("bias") is not False or hidden % 2:
        return None
    if not isinstance(hard, int | float) or not isinstance(soft, int | float) or not (_number(hard) and _number(soft)):
        return None
    return Binding(
        {"tokens": x, "hidden": hidden, "vocab": vocab}, dtype, {"weight_hard_loss": hard, "weight_soft_loss": soft}
    )


def _fused_linear(beta: float | None) -> Binder:
    def bind(x: int, x_name: str, config: Config) -> Binding | None:
        hidden, vocab, dtype = _int(config.get("H")), _int(config.get("V")), _dtype(config.get("dtype"))
        if not hidden or not vocab or not dtype or x_name != "BT":
            return None
        return Binding({"tokens": x, "hidden": hidden, "vocab": vocab}, dtype, None if beta is None else {"beta": beta})

    return bind


def _kto(x: int, x_name: str, config: Config) -> Binding | None:
    seq, hidden, vocab = _int(config.get("T")), _int(config.get("H")), _int(config.get("V"))
    dtype, beta = _dtype(config.get("dtype")), config.get("beta")
    if not seq or not hidden or not vocab or not dtype or x_name != "B":
        return None
    if config.get("bias") is not True or not isinstance(beta, int | float) or isinstance(beta, bool):
        return None
    return Binding({"batch": x, "seq": seq, "hidden": hidden, "vocab": vocab}, dtype, {"beta": beta})


def _grpo(level: str) -> Binder:
    def bind(x: int, x_name: str, config: Config) -> Binding | None:
        seq, vocab, dtype = _int(config.get("T")), _int(config.get("V")), _dtype(config.get("dtype"))
        if not seq or not vocab or not dtype or x_name != "B" or config.get("importance_sampling_level") != level:
            return None
        return Binding({"batch": x, "seq": seq, "vocab": vocab}, dtype)

    return bind


def _t(name: str, *shape: str | int, dtype: str = "cfg") -> Tensor:
    return Tensor(name, shape, dtype)


_ROWS_HIDDEN = (_t("x", "rows", "hidden"),)
_Y_ROWS_HIDDEN = (_t("y", "rows", "hidden"),)
_LOSS = (_t("loss", 1),)
_MLP_IN = (
    _t("x", "batch", "seq", "hidden"),
    _t("w_gate", "intermediate", "hidden"),
    _t("w_up", "intermediate", "hidden"),
    _t("w_down", "hidden", "intermediate"),
)
_MLP_OUT = (_t("y", "batch", "seq", "hidden"),)
_ROPE_DERIVED = {"head_dim": "hidden // q_heads"}


def _mta(csv_name: str, slug: str, title: str, activation: str) -> Kernel:
    return Kernel(
        csv_name,
        slug,
        "multi-token-attention",
        title,
        f"Multi-token attention over batch×heads_in×seq×seq scores: causal mask, {activation}, then a K×K "
        "convolution to heads_out with bias, re-masked causally.",
        (
            _t("scores", "batch", "heads_in", "seq", "seq"),
            _t("weight", "heads_out", "heads_in", "k", "k"),
            _t("bias", "heads_out"),
        ),
        (_t("y", "batch", "heads_out", "seq", "seq"),),
        _multi_token_attention,
    )


def _tiled(csv_name: str, slug: str, title: str, description: str, activation: str) -> Kernel:
    family = "swiglu" if csv_name == "tiled_swiglu" else "geglu"
    return Kernel(csv_name, slug, family, title, description, _MLP_IN, _MLP_OUT, _mlp("bsz", activation))


def _preference_kernel(csv_name: str, slug: str, family: str, title: str, description: str) -> Kernel:
    inputs = (
        _t("x", "batch", "seq", "hidden"),
        _t("weight", "vocab", "hidden"),
        _t("target", "batch", "seq", dtype="int64"),
    )
    return Kernel(csv_name, slug, family, title, description, inputs, _LOSS, _preference)


def _distill_kernel(csv_name: str, slug: str, family: str, title: str, description: str) -> Kernel:
    inputs = (
        _t("student_input", "tokens", "student_hidden"),
        _t("student_weight", "vocab", "student_hidden"),
        _t("teacher_input", "tokens", "hidden"),
        _t("teacher_weight", "vocab", "hidden"),
        _t("target", "tokens", dtype="int64"),
    )
    return Kernel(
        csv_name, slug, family, title, description, inputs, _LOSS, _distill, {"student_hidden": "hidden // 2"}
    )


def _grpo_kernel(csv_name: str, slug: str, level: str) -> Kernel:
    return Kernel(
        csv_name,
        slug,
        "grpo",
        f"GRPO loss, {level}-level importance sampling",
        f"GRPO policy loss over batch×(seq+1)×vocab logits with per-sequence advantages and {level}-level "
        "importance sampling (clip 0.2, no KL reference term).",
        (
            _t("logits", "batch", "seq_next", "vocab"),
            _t("completion_ids", "batch", "seq", dtype="int64"),
            _t("advantages", "batch"),
        ),
        _LOSS,
        _grpo(level),
        {"seq_next": "seq + 1"},
    )


_FIRST = [
    Kernel(
        "rms_norm",
        "liger-rms-norm",
        "rmsnorm",
        "RMSNorm",
        "Root-mean-square normalization of a rows×hidden activation with a learned hidden-size weight.",
        (*_ROWS_HIDDEN, _t("weight", "hidden")),
        _Y_ROWS_HIDDEN,
        _rows_hidden(True),
    ),
    Kernel(
        "fused_add_rms_norm",
        "liger-fused-add-rms-norm",
        "rmsnorm",
        "Fused add + RMSNorm",
        "Residual add followed by RMSNorm, returning the normalized activation and the post-add residual.",
        (*_ROWS_HIDDEN, _t("residual", "rows", "hidden"), _t("weight", "hidden")),
        (*_Y_ROWS_HIDDEN, _t("residual_out", "rows", "hidden")),
        _rows_hidden(True),
    ),
    Kernel(
        "layer_norm",
        "liger-layer-norm",
        "layernorm",
        "LayerNorm",
        "Layer normalization of a rows×hidden activation with learned weight and bias.",
        (*_ROWS_HIDDEN, _t("weight", "hidden"), _t("bias", "hidden")),
        _Y_ROWS_HIDDEN,
        _rows_hidden(True),
    ),
    Kernel(
        "softmax",
        "liger-softmax",
        "softmax",
        "Softmax",
        "Softmax over the last dimension of a rows×hidden tensor.",
        _ROWS_HIDDEN,
        _Y_ROWS_HIDDEN,
        _rows_hidden(False),
    ),
    Kernel(
        "cross_entropy",
        "liger-cross-entropy",
        "cross-entropy",
        "Cross-entropy loss",
        "Cross-entropy loss over tokens×vocab logits against integer targets; the benchmark generates fp32 logits.",
        (_t("logits", "tokens", "vocab"), _t("target", "tokens", dtype="int64")),
        _LOSS,
        _cross_entropy,
    ),
    Kernel(
        "jsd",
        "liger-jsd",
        "jsd",
        "Jensen-Shannon divergence loss",
        "Generalized JSD between student and teacher log-probabilities over tokens×vocab; the benchmark generates "
        "fp32 log-probs.",
        (_t("student_log_probs", "tokens", "vocab"), _t("teacher_log_probs", "tokens", "vocab")),
        _LOSS,
        _jsd,
    ),
    Kernel(
        "embedding",
        "liger-embedding",
        "embedding",
        "Embedding lookup",
        "Embedding table lookup: batch×seq integer ids gathered from a vocab×hidden weight.",
        (_t("input_ids", "batch", "seq", dtype="int64"), _t("weight", "vocab", "hidden")),
        (_t("y", "batch", "seq", "hidden"),),
        _embedding,
    ),
    Kernel(
        "rope",
        "liger-rope",
        "rope",
        "Rotary position embedding",
        "Rotary position embedding applied to query and key tensors (batch 1, Llama-style head layout).",
        (_t("q", 1, "q_heads", "seq", "head_dim"), _t("k", 1, "kv_heads", "seq", "head_dim")),
        (_t("q_out", 1, "q_heads", "seq", "head_dim"), _t("k_out", 1, "kv_heads", "seq", "head_dim")),
        _rope,
        _ROPE_DERIVED,
    ),
    Kernel(
        "swiglu",
        "liger-swiglu",
        "swiglu",
        "SwiGLU MLP",
        "Llama-style SwiGLU MLP: silu(x·Wgate)·(x·Wup) projected back down, over batch×seq×hidden activations.",
        _MLP_IN,
        _MLP_OUT,
        _mlp("B", "silu"),
    ),
    Kernel(
        "geglu",
        "liger-geglu",
        "geglu",
        "GeGLU MLP",
        "GeGLU MLP (tanh-approximated GELU gate) over batch×seq×hidden activations.",
        _MLP_IN,
        _MLP_OUT,
        _mlp("bsz", "gelu_pytorch_tanh"),
    ),
]

_EXTRA = [
    Kernel(
        "relu_squared",
        "liger-relu-squared",
        "relu-squared",
        "ReLU squared",
        "Elementwise relu(x)^2 activation over a rows×hidden tensor; the benchmark sweeps the hidden size.",
        _ROWS_HIDDEN,
        _Y_ROWS_HIDDEN,
        _relu_squared,
    ),
    Kernel(
        "group_norm",
        "liger-group-norm",
        "groupnorm",
        "GroupNorm",
        "Group normalization of a batch×channels×hidden tensor with affine channel weight and bias; groups = "
        "channels / channels_per_group.",
        (_t("x", "batch", "channels", "hidden"), _t("weight", "channels"), _t("bias", "channels")),
        (_t("y", "batch", "channels", "hidden"),),
        _group_norm,
        {"groups": "channels // channels_per_group"},
    ),
    Kernel(
        "sparsemax",
        "liger-sparsemax",
        "sparsemax",
        "Sparsemax",
        "Sparsemax projection over the last dimension of a tokens×features tensor.",
        (_t("x", "tokens", "features"),),
        (_t("y", "tokens", "features"),),
        _sparsemax,
    ),
    Kernel(
        "llama4_rope",
        "liger-llama4-rope",
        "rope",
        "Llama 4 rotary position embedding",
        "Llama-4-style rotary embedding applied to query and key tensors in batch×seq×heads×head_dim layout "
        "(batch 1, complex-frequency formulation).",
        (_t("q", 1, "seq", "q_heads", "head_dim"), _t("k", 1, "seq", "kv_heads", "head_dim")),
        (_t("q_out", 1, "seq", "q_heads", "head_dim"), _t("k_out", 1, "seq", "kv_heads", "head_dim")),
        _rope,
        _ROPE_DERIVED,
    ),
    Kernel(
        "megatron_rms_norm",
        "liger-megatron-rms-norm",
        "rmsnorm",
        "RMSNorm, Megatron layout",
        "RMSNorm over the hidden dimension of a seq×batch×hidden activation (Megatron sbh layout) with a learned "
        "hidden-size weight; the benchmark runs bf16.",
        (_t("x", "seq", "batch", "hidden"), _t("weight", "hidden")),
        (_t("y", "seq", "batch", "hidden"),),
        _megatron_rms_norm,
    ),
    Kernel(
        "megatron_swiglu",
        "liger-megatron-swiglu",
        "swiglu",
        "SwiGLU activation, Megatron layout",
        "SwiGLU activation over a seq×batch×(2·ffn) tensor: chunk in two on the last dimension, silu(gate)·up. "
        "The projections are outside the timed region; the benchmark runs bf16 and sweeps the per-rank FFN size.",
        (_t("y", "seq", "batch", "ffn_double"),),
        (_t("out", "seq", "batch", "ffn"),),
        _megatron_swiglu,
        {"ffn_double": "ffn * 2"},
    ),
    Kernel(
        "megatron_cross_entropy",
        "liger-megatron-cross-entropy",
        "cross-entropy",
        "Vocab-parallel cross-entropy, Megatron layout",
        "Vocab-parallel cross-entropy over seq×batch×vocab bf16 logits against integer targets, returning per-token "
        "fp32 losses. Only TP=1 rows import; sharded-vocab rows would change the local logits shape.",
        (_t("logits", "seq", "batch", "vocab"), _t("target", "seq", "batch", dtype="int64")),
        (_t("loss", "seq", "batch", dtype="fp32"),),
        _megatron_cross_entropy,
    ),
    Kernel(
        "fused_moe",
        "liger-fused-moe",
        "moe",
        "Fused MoE expert MLP",
        "Top-k routed mixture-of-experts silu-gated MLP: tokens×hidden activations dispatched to experts holding "
        "fused gate/up and down projections, weighted by softmaxed router scores.",
        (
            _t("x", "tokens", "hidden"),
            _t("gate_up_proj", "experts", "intermediate_double", "hidden"),
            _t("down_proj", "experts", "hidden", "intermediate"),
            _t("top_k_index", "tokens", "k", dtype="int32"),
            _t("top_k_weights", "tokens", "k"),
        ),
        (_t("y", "tokens", "hidden"),),
        _fused_moe,
        {"intermediate_double": "intermediate * 2"},
    ),
    Kernel(
        "fused_neighborhood_attention",
        "liger-fused-neighborhood-attention",
        "neighborhood-attention",
        "Fused neighborhood attention",
        "Neighborhood attention module over batch×seq×hidden states: q/k/v projections, banded (kernel_size, "
        "dilation) softmax attention, and output projection — the projections are inside the timed module.",
        (
            _t("hidden_states", "batch", "seq", "hidden"),
            _t("q_weight", "hidden", "hidden"),
            _t("k_weight", "hidden", "hidden"),
            _t("v_weight", "hidden", "hidden"),
            _t("out_weight", "hidden", "hidden"),
            _t("q_bias", "hidden"),
            _t("k_bias", "hidden"),
            _t("v_bias", "hidden"),
            _t("out_bias", "hidden"),
        ),
        (_t("y", "batch", "seq", "hidden"),),
        _neighborhood_attention,
        {"head_dim": "hidden // heads"},
    ),
    _mta("multi_token_attention", "liger-multi-token-attention", "Multi-token attention", "softmax"),
    _mta(
        "sparse_multi_token_attention",
        "liger-sparse-multi-token-attention",
        "Sparse multi-token attention",
        "sparsemax",
    ),
    _tiled(
        "tiled_swiglu",
        "liger-tiled-swiglu",
        "SwiGLU MLP (tiled benchmark)",
        "Llama-style SwiGLU MLP over batch×seq×hidden activations; providers include seq-sharded tiled executions "
        "of the same computation.",
        "silu",
    ),
    _tiled(
        "tiled_geglu",
        "liger-tiled-geglu",
        "GeGLU MLP (tiled benchmark)",
        "GeGLU MLP (tanh-approximated GELU gate) over batch×seq×hidden activations; providers include seq-sharded "
        "tiled executions of the same computation.",
        "gelu_pytorch_tanh",
    ),
]

_LOSSES = [
    Kernel(
        "kl_div",
        "liger-kl-div",
        "kl-divergence",
        "KL-divergence loss",
        "KL divergence between tokens×vocab log-probabilities and target probabilities (batchmean reduction); the "
        "benchmark generates fp32 inputs.",
        (_t("log_probs", "tokens", "vocab"), _t("target_probs", "tokens", "vocab")),
        _LOSS,
        _tokens_vocab,
    ),
    Kernel(
        "tvd",
        "liger-tvd",
        "tvd",
        "Total variation distance loss",
        "Total variation distance between two tokens×vocab probability distributions (batchmean reduction); the "
        "benchmark generates fp32 inputs.",
        (_t("p", "tokens", "vocab"), _t("q", "tokens", "vocab")),
        _LOSS,
        _tokens_vocab,
    ),
    Kernel(
        "fused_linear_cross_entropy",
        "liger-fused-linear-cross-entropy",
        "cross-entropy",
        "Fused linear + cross-entropy",
        "LM-head projection of tokens×hidden activations through a vocab×hidden weight fused with cross-entropy "
        "against integer targets, without materializing the logits.",
        (_t("x", "tokens", "hidden"), _t("weight", "vocab", "hidden"), _t("target", "tokens", dtype="int64")),
        _LOSS,
        _fused_linear(None),
    ),
    Kernel(
        "fused_linear_jsd",
        "liger-fused-linear-jsd",
        "jsd",
        "Fused linear + JSD",
        "Student and teacher tokens×hidden activations projected through separate vocab×hidden heads fused with "
        "generalized JSD (beta 0.5, batchmean) between the resulting log-distributions.",
        (
            _t("student_input", "tokens", "hidden"),
            _t("student_weight", "vocab", "hidden"),
            _t("teacher_input", "tokens", "hidden"),
            _t("teacher_weight", "vocab", "hidden"),
        ),
        _LOSS,
        _fused_linear(0.5),
    ),
    _distill_kernel(
        "distill_jsd_loss",
        "liger-distill-jsd-loss",
        "jsd",
        "Chunked distillation JSD loss",
        "Distillation loss combining hard cross-entropy and soft JSD between a hidden/2 student and a hidden "
        "teacher, each projected through its own LM head (equal hard/soft weights).",
    ),
    _distill_kernel(
        "distill_cosine_loss",
        "liger-distill-cosine-loss",
        "cosine-similarity-loss",
        "Chunked distillation cosine loss",
        "Distillation loss combining hard cross-entropy and a soft cosine-similarity term between a hidden/2 "
        "student and a hidden teacher, each projected through its own LM head (equal hard/soft weights).",
    ),
    _preference_kernel(
        "fused_linear_orpo_loss",
        "liger-fused-linear-orpo-loss",
        "orpo",
        "Fused linear + ORPO loss",
        "ORPO preference loss over batch×seq×hidden activations projected through a vocab×hidden LM head against "
        "integer targets, computed chunked without materializing logits.",
    ),
    _preference_kernel(
        "fused_linear_cpo_loss",
        "liger-fused-linear-cpo-loss",
        "cpo",
        "Fused linear + CPO loss",
        "CPO preference loss over batch×seq×hidden activations projected through a vocab×hidden LM head against "
        "integer targets, computed chunked without materializing logits.",
    ),
    _preference_kernel(
        "fused_linear_simpo_loss",
        "liger-fused-linear-simpo-loss",
        "simpo",
        "Fused linear + SimPO loss",
        "SimPO preference loss over batch×seq×hidden activations projected through a vocab×hidden LM head against "
        "integer targets, computed chunked without materializing logits.",
    ),
    Kernel(
        "kto_loss",
        "liger-fused-linear-kto-loss",
        "kto",
        "Fused linear + KTO loss",
        "KTO preference loss: policy and reference batch×seq×hidden activations project through separate biased "
        "vocab×hidden LM heads against integer targets, with per-sequence boolean preference labels and a "
        "precomputed KL term (beta 0.1).",
        (
            _t("x", "batch", "seq", "hidden"),
            _t("ref_x", "batch", "seq", "hidden"),
            _t("weight", "vocab", "hidden"),
            _t("bias", "vocab"),
            _t("ref_weight", "vocab", "hidden"),
            _t("ref_bias", "vocab"),
            _t("target", "batch", "seq", dtype="int64"),
            _t("preference_labels", "batch", dtype="bool"),
            _t("kl", 1),
        ),
        _LOSS,
        _kto,
    ),
    _grpo_kernel("fused_linear_grpo_loss_token", "liger-grpo-loss-token", "token"),
    _grpo_kernel("fused_linear_grpo_loss_sequence", "liger-grpo-loss-sequence", "sequence"),
]

KERNELS: dict[str, Kernel] = {kernel.csv_name: kernel for kernel in (*_FIRST, *_EXTRA, *_LOSSES)}
"""Curated kernels by the CSV's `kernel_name`."""
