"""Built-in model zoo: parameter lists and per-layer FLOPs of well-known models, in pure Python.

Each model is a :class:`~simulator.training.workload.ModelSpec`: layers in forward execution order with
their parameters (exact shapes of the real model, named as ``named_parameters()`` names them)
and forward FLOPs per sample, plus the parameters' registration order. Sources of the names:

* ``resnet50``, ``resnet152``, ``vit-b16``: torchvision (``resnet50()``, ``vit_b_16()``).
* ``bert-base``, ``bert-large``: HuggingFace ``BertForMaskedLM`` (no pooler; the decoder weight
  is tied to ``bert.embeddings.word_embeddings.weight`` and its bias is
  ``cls.predictions.bias``), as in our profiles. ``BertModel`` has the pooler instead of the
  ``cls.*`` head: 109,482,240 / 335,141,888 parameters.
* ``gpt2`` .. ``gpt2-xl``: HuggingFace ``GPT2LMHeadModel`` (``lm_head`` tied to ``wte``).
* ``llama-7b``: HuggingFace ``LlamaForCausalLM`` (LLaMA-1/2 7B, untied ``lm_head``).

FLOP conventions: 2 FLOPs per multiply-accumulate of convolutions and matmuls; attention scores
and the attention-weighted sum cost ``4 * seq^2 * d`` per layer (full, non-causal matrices),
charged to the QKV projection whose gradients follow them in backward; norms cost 4 FLOPs per
element; an embedding lookup counts one FLOP per output element; activations, softmax,
pooling and residual adds are not counted. A tied output projection is a parameterless layer.
"""

from __future__ import annotations

from dataclasses import replace

from functools import lru_cache

from simulator.core.errors import InputError
from simulator.training.workload import (DEFAULT_EFFICIENCY, LayerSpec, ModelSpec, Workload,
                                workload_from_layers)

NORM_FLOPS_PER_ELEMENT = 4


class _Net:
    """Collects layers in forward order and parameter names in registration order."""

    def __init__(self) -> None:
        self.layers: list[LayerSpec] = []
        self.registration: list[str] = []

    def layer(self, name: str, flops: float, *params: tuple[str, int]) -> None:
        full = tuple((f"{name}.{p}" if p else name, n) for p, n in params)
        self.layers.append(LayerSpec(name, full, float(flops)))

    def linear(self, name: str, d_in: int, d_out: int, tokens: int, bias: bool = True,
               extra_flops: float = 0.0) -> None:
        params = [("weight", d_in * d_out)] + ([("bias", d_out)] if bias else [])
        self.layer(name, 2 * d_in * d_out * tokens + extra_flops, *params)

    def norm(self, name: str, d: int, elements: int, bias: bool = True) -> None:
        params = [("weight", d)] + ([("bias", d)] if bias else [])
        self.layer(name, NORM_FLOPS_PER_ELEMENT * elements, *params)

    def spec(self, name: str, registration: list[str] | None = None, **kw: object) -> ModelSpec:
        order = tuple(registration) if registration else ()
        return ModelSpec(name, tuple(self.layers), order, **kw)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- vision


def _resnet(name: str, blocks: tuple[int, int, int, int]) -> ModelSpec:
    """torchvision ResNet with Bottleneck blocks (v1.5: stride on the 3x3 conv), 224x224."""
    net = _Net()

    def conv(cname: str, c_in: int, c_out: int, k: int, hw_out: int) -> None:
        net.layer(cname, 2 * c_in * k * k * c_out * hw_out * hw_out, ("weight", c_in * k * k * c_out))

    def bn(bname: str, c: int, hw: int) -> None:
        net.norm(bname, c, c * hw * hw)

    conv("conv1", 3, 64, 7, 112)
    bn("bn1", 64, 112)
    hw, inplanes = 56, 64                      # after the 3x3/2 max pool
    for li, (planes, n) in enumerate(zip((64, 128, 256, 512), blocks), start=1):
        stride = 1 if li == 1 else 2
        for b in range(n):
            s = stride if b == 0 else 1
            p = f"layer{li}.{b}"
            out_hw = hw // s
            conv(f"{p}.conv1", inplanes, planes, 1, hw)
            bn(f"{p}.bn1", planes, hw)
            conv(f"{p}.conv2", planes, planes, 3, out_hw)
            bn(f"{p}.bn2", planes, out_hw)
            conv(f"{p}.conv3", planes, planes * 4, 1, out_hw)
            bn(f"{p}.bn3", planes * 4, out_hw)
            if b == 0:
                conv(f"{p}.downsample.0", inplanes, planes * 4, 1, out_hw)
                bn(f"{p}.downsample.1", planes * 4, out_hw)
            inplanes, hw = planes * 4, out_hw
    net.linear("fc", 2048, 1000, 1)
    return net.spec(name, default_batch_size=64, optimizer="sgd",
                    notes="torchvision, 224x224 images, SGD with momentum")


def _vit_b16() -> ModelSpec:
    """torchvision ``vit_b_16``: 224x224, 16x16 patches -> 196 + 1 tokens, d=768, 12 layers."""
    net = _Net()
    d, tokens, layers, mlp = 768, 197, 12, 3072
    net.layer("conv_proj", 2 * 3 * 16 * 16 * d * 196, ("weight", 3 * 16 * 16 * d), ("bias", d))
    # the class token is concatenated, then the position embedding added, right after conv_proj
    net.layers.append(LayerSpec("encoder.pos_embedding", (("class_token", d),
                                ("encoder.pos_embedding", tokens * d)), float(tokens * d)))
    for i in range(layers):
        p = f"encoder.layers.encoder_layer_{i}"
        net.norm(f"{p}.ln_1", d, tokens * d)
        net.layer(f"{p}.self_attention", 2 * d * 3 * d * tokens + 4 * tokens * tokens * d,
                  ("in_proj_weight", 3 * d * d), ("in_proj_bias", 3 * d))
        net.linear(f"{p}.self_attention.out_proj", d, d, tokens)
        net.norm(f"{p}.ln_2", d, tokens * d)
        net.linear(f"{p}.mlp.0", d, mlp, tokens)
        net.linear(f"{p}.mlp.3", mlp, d, tokens)
    net.norm("encoder.ln", d, tokens * d)
    net.linear("heads.head", d, 1000, 1)
    names = [n for layer in net.layers for n, _ in layer.params]
    names.remove("class_token")
    return net.spec("vit-b16", ["class_token"] + names, default_batch_size=64, optimizer="adamw",
                    notes="torchvision vit_b_16, 224x224 images")


# --------------------------------------------------------------------------- language


def _bert(name: str, d: int, layers: int, seq: int) -> ModelSpec:
    """HuggingFace BertForMaskedLM (bert-*-uncased: vocab 30522, 512 positions)."""
    net = _Net()
    vocab, ffn = 30522, 4 * d
    e = "bert.embeddings"
    net.layer(e, 2 * seq * d, ("word_embeddings.weight", vocab * d),
              ("position_embeddings.weight", 512 * d), ("token_type_embeddings.weight", 2 * d))
    net.norm(f"{e}.LayerNorm", d, seq * d)
    for i in range(layers):
        p = f"bert.encoder.layer.{i}"
        net.linear(f"{p}.attention.self.query", d, d, seq)
        net.linear(f"{p}.attention.self.key", d, d, seq)
        net.linear(f"{p}.attention.self.value", d, d, seq, extra_flops=4 * seq * seq * d)
        net.linear(f"{p}.attention.output.dense", d, d, seq)
        net.norm(f"{p}.attention.output.LayerNorm", d, seq * d)
        net.linear(f"{p}.intermediate.dense", d, ffn, seq)
        net.linear(f"{p}.output.dense", ffn, d, seq)
        net.norm(f"{p}.output.LayerNorm", d, seq * d)
    net.linear("cls.predictions.transform.dense", d, d, seq)
    net.norm("cls.predictions.transform.LayerNorm", d, seq * d)
    # decoder: weight tied to the word embeddings, bias registered as cls.predictions.bias
    net.layers.append(LayerSpec("cls.predictions.decoder", (("cls.predictions.bias", vocab),),
                                float(2 * d * vocab * seq)))
    names = [n for layer in net.layers for n, _ in layer.params]
    names.remove("cls.predictions.bias")
    names.insert(names.index("cls.predictions.transform.dense.weight"), "cls.predictions.bias")
    return net.spec(name, names, default_batch_size=32, seq_len=seq, optimizer="adamw",
                    notes=f"HF BertForMaskedLM, sequence length {seq}")


def _gpt2(name: str, d: int, layers: int, seq: int) -> ModelSpec:
    """HuggingFace GPT2LMHeadModel (vocab 50257, 1024 positions, lm_head tied to wte)."""
    net = _Net()
    vocab = 50257
    net.layer("transformer.wte", seq * d, ("weight", vocab * d))
    net.layer("transformer.wpe", seq * d, ("weight", 1024 * d))
    for i in range(layers):
        p = f"transformer.h.{i}"
        net.norm(f"{p}.ln_1", d, seq * d)
        net.linear(f"{p}.attn.c_attn", d, 3 * d, seq, extra_flops=4 * seq * seq * d)
        net.linear(f"{p}.attn.c_proj", d, d, seq)
        net.norm(f"{p}.ln_2", d, seq * d)
        net.linear(f"{p}.mlp.c_fc", d, 4 * d, seq)
        net.linear(f"{p}.mlp.c_proj", 4 * d, d, seq)
    net.norm("transformer.ln_f", d, seq * d)
    net.layer("lm_head", 2 * d * vocab * seq)     # weight tied to transformer.wte.weight
    return net.spec(name, default_batch_size=8, seq_len=seq, optimizer="adamw",
                    notes=f"HF GPT2LMHeadModel, sequence length {seq}")


def _llama_7b(seq: int) -> ModelSpec:
    """HuggingFace LlamaForCausalLM, LLaMA-1/2 7B: 32 layers, d=4096, FFN 11008, vocab 32000."""
    net = _Net()
    d, ffn, vocab, layers = 4096, 11008, 32000, 32
    net.layer("model.embed_tokens", seq * d, ("weight", vocab * d))
    for i in range(layers):
        p = f"model.layers.{i}"
        net.norm(f"{p}.input_layernorm", d, seq * d, bias=False)
        net.linear(f"{p}.self_attn.q_proj", d, d, seq, bias=False)
        net.linear(f"{p}.self_attn.k_proj", d, d, seq, bias=False)
        net.linear(f"{p}.self_attn.v_proj", d, d, seq, bias=False, extra_flops=4 * seq * seq * d)
        net.linear(f"{p}.self_attn.o_proj", d, d, seq, bias=False)
        net.norm(f"{p}.post_attention_layernorm", d, seq * d, bias=False)
        net.linear(f"{p}.mlp.gate_proj", d, ffn, seq, bias=False)
        net.linear(f"{p}.mlp.up_proj", d, ffn, seq, bias=False)
        net.linear(f"{p}.mlp.down_proj", ffn, d, seq, bias=False)
    net.norm("model.norm", d, seq * d, bias=False)
    net.linear("lm_head", d, vocab, seq, bias=False)
    # registration: per decoder layer self_attn.*, mlp.*, then the two norms
    names = ["model.embed_tokens.weight"]
    for i in range(layers):
        p = f"model.layers.{i}"
        names += [f"{p}.self_attn.{x}_proj.weight" for x in "qkvo"]
        names += [f"{p}.mlp.{x}_proj.weight" for x in ("gate", "up", "down")]
        names += [f"{p}.input_layernorm.weight", f"{p}.post_attention_layernorm.weight"]
    names += ["model.norm.weight", "lm_head.weight"]
    return net.spec("llama-7b", names, default_batch_size=1, seq_len=seq, optimizer="adamw",
                    notes=f"HF LlamaForCausalLM 7B, sequence length {seq}")


# --------------------------------------------------------------------------- registry

_TEXT_SEQ = {"bert-base": 128, "bert-large": 128, "gpt2": 512, "gpt2-medium": 512,
             "gpt2-large": 512, "gpt2-xl": 512, "llama-7b": 2048}
_BUILDERS = {
    "resnet50": lambda seq: _resnet("resnet50", (3, 4, 6, 3)),
    "resnet152": lambda seq: _resnet("resnet152", (3, 8, 36, 3)),
    "vit-b16": lambda seq: _vit_b16(),
    "bert-base": lambda seq: _bert("bert-base", 768, 12, seq),
    "bert-large": lambda seq: _bert("bert-large", 1024, 24, seq),
    "gpt2": lambda seq: _gpt2("gpt2", 768, 12, seq),
    "gpt2-medium": lambda seq: _gpt2("gpt2-medium", 1024, 24, seq),
    "gpt2-large": lambda seq: _gpt2("gpt2-large", 1280, 36, seq),
    "gpt2-xl": lambda seq: _gpt2("gpt2-xl", 1600, 48, seq),
    "llama-7b": lambda seq: _llama_7b(seq),
}
_ALIASES = {
    "resnet-50": "resnet50", "resnet-152": "resnet152", "vit-b-16": "vit-b16",
    "vit-base-patch16-224": "vit-b16", "bert-base-uncased": "bert-base",
    "bert-large-uncased": "bert-large", "gpt2-small": "gpt2", "llama-2-7b": "llama-7b",
    "llama2-7b": "llama-7b", "llama-1-7b": "llama-7b",
}
_MAX_POSITIONS = {"bert-base": 512, "bert-large": 512, "gpt2": 1024, "gpt2-medium": 1024,
                  "gpt2-large": 1024, "gpt2-xl": 1024, "llama-7b": 4096}


def zoo_names() -> list[str]:
    """Canonical names of the zoo's models."""
    return list(_BUILDERS)


def _canonical(name: str) -> str:
    key = str(name).strip().lower().replace("_", "-")
    key = _ALIASES.get(key, key)
    if key not in _BUILDERS:
        raise InputError(f"unknown zoo model; known: {', '.join(zoo_names())}", field="model",
                         value=name)
    return key


@lru_cache(maxsize=64)
def _build(key: str, seq: int | None) -> ModelSpec:
    return _BUILDERS[key](seq)


def zoo_model(name: str, seq_len: int | None = None) -> ModelSpec:
    """The zoo model ``name`` (aliases such as ``gpt2-small``, ``vit_b_16`` accepted).

    ``seq_len`` (language models only) overrides the default tokens per sample.
    """
    key = _canonical(name)
    if seq_len is None:
        return _build(key, _TEXT_SEQ.get(key))
    if key not in _TEXT_SEQ:
        raise InputError(f"{key} is an image model; seq_len does not apply", field="seq_len",
                         value=seq_len)
    if isinstance(seq_len, bool) or not isinstance(seq_len, int) or not (
            0 < seq_len <= _MAX_POSITIONS[key]):
        raise InputError(f"seq_len must be an integer in 1..{_MAX_POSITIONS[key]} for {key}",
                         field="seq_len", value=seq_len)
    return _build(key, seq_len)


# Achievable fraction of the GPU's dense peak (forward + backward), measured on one H200 with eager
# PyTorch 2.11 and bf16 autocast at the default batch sizes (validation/data/h200x4_2026-11-26b,
# profile_*.json): ResNet-50 5.5%, BERT-base 13%, GPT-2 small 10%. Family members without a
# measurement inherit their family's figure; llama-7b takes 0.40, typical of tuned large-model
# training. Pass ``efficiency=`` (or calibrate with a profile) for anything else.
ZOO_EFFICIENCY = {"resnet50": 0.055, "resnet152": 0.055, "vit-b16": 0.13, "bert-base": 0.13,
                  "bert-large": 0.13, "gpt2": 0.10, "gpt2-medium": 0.10, "gpt2-large": 0.10,
                  "gpt2-xl": 0.10, "llama-7b": 0.40}


def zoo_workload(name: str, gpu: str = "h100", batch_size: int | None = None,
                 dtype: str = "bf16", efficiency: float | None = None, *,
                 seq_len: int | None = None, optimizer: str | None = None) -> Workload:
    """A workload for zoo model ``name`` on ``gpu``: see
    :func:`~simulator.training.workload.workload_from_layers` for the timing assumptions.

    ``batch_size`` defaults to the model's (resnet/vit 64, bert 32, gpt2 8, llama 1);
    ``efficiency`` to the model's measured figure (ZOO_EFFICIENCY); ``optimizer`` to the model's
    (SGD for ResNets, AdamW otherwise).
    """
    model = zoo_model(name, seq_len)
    bs = model.default_batch_size if batch_size is None else batch_size
    assert bs is not None
    w = workload_from_layers(model, gpu, bs, dtype=dtype,
                             efficiency=ZOO_EFFICIENCY.get(model.name, DEFAULT_EFFICIENCY)
                             if efficiency is None else efficiency,
                             optimizer=optimizer)
    return replace(w, extras=w.extras + io_extras(model))


#: Classes (image models) or vocabulary (language models) of the zoo's output layers.
_OUTPUTS = {"resnet": 1000, "vit": 1000, "bert": 30522, "gpt2": 50257, "llama": 32000}


def io_extras(model: ModelSpec) -> tuple[tuple[str, object], ...]:
    """What one sample moves in and out of the model, for nn.DataParallel's scatter and gather
    (simulator.training.dataparallel): fp32 224x224 images and bf16 logits for image models;
    int64 token ids and labels in, and, as HuggingFace's models return them, the loss and the
    bf16 logits out (only the loss is differentiated) for language models."""
    classes = next(v for k, v in _OUTPUTS.items() if model.name.startswith(k))
    if model.seq_len is None:
        return (("input_bytes_per_sample", 3 * 224 * 224 * 4), ("output_bytes_per_sample", classes * 2),
                ("output_grad_bytes_per_sample", classes * 2))
    return (("input_bytes_per_sample", 2 * model.seq_len * 8),
            ("output_bytes_per_sample", model.seq_len * classes * 2), ("output_grad_bytes_per_sample", 0))
