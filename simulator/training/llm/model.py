"""Transformer model descriptions for LLM training: a zoo, a one-line spec, or a YAML/JSON file.

A :class:`TransformerSpec` is the architecture only (no batch, no parallelism): hidden size,
layers, attention heads (and key/value heads for grouped-query attention), sequence length,
feed-forward size, vocabulary, and the block's flavour (GPT: biases, LayerNorm, GELU MLP, tied
embeddings; LLaMA: no biases, RMSNorm, SwiGLU MLP with three matrices, untied output layer).

Zoo sources (architecture tables of the papers / model cards):

* ``gpt3-175b``: Brown et al. 2020, Table 2.1 (96 layers, d_model 12288, 96 heads), vocabulary
  padded to 51200 as Megatron-LM does.
* ``megatron-22b``, ``megatron-145b``, ``megatron-310b``, ``megatron-530b``, ``megatron-1t``:
  Narayanan et al. 2021 Table 1 and Korthikanti et al. 2022 Table 3 (the Selene runs);
  ``megatron-530b`` is MT-NLG (Smith et al. 2022).
* ``llama-2-7b/13b/70b``: Touvron et al. 2023 (LLaMA 2) and the HuggingFace configs.
* ``llama-3-8b/70b/405b``: Dubey et al. 2024 (The Llama 3 Herd of Models), Table 3.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path

from simulator.core.errors import InputError
from simulator.core.inputs import names_a_file
from simulator.core.limits import LAYERS, check_count
from simulator.core.values import comma_items, switch, text


@dataclass(frozen=True)
class TransformerSpec:
    """A decoder-only transformer. Sizes are counts (elements), not bytes."""

    name: str
    hidden: int
    layers: int
    heads: int
    seq: int
    ffn: int | None = None        # None: 4 * hidden
    vocab: int = 51200
    kv_heads: int | None = None   # None: heads (multi-head attention); fewer: grouped-query attention
    gated_mlp: bool = False   # SwiGLU: three hidden x ffn matrices instead of two
    bias: bool = True         # biases on the linear layers (GPT) or none (LLaMA)
    tied_embeddings: bool = True

    def __post_init__(self) -> None:
        for f in ("hidden", "layers", "heads", "seq", "vocab"):      # vocab 0: a zero-FLOP GEMM divided by zero
            check_count(getattr(self, f), field=f, limit=LAYERS if f == "layers" else None,
                        words="must be a positive integer")
        if self.hidden % self.heads:
            raise InputError(f"hidden ({self.hidden}) must be a multiple of heads", field="heads",
                             value=self.heads)
        for f, default, words in (("ffn", 4 * self.hidden, "4 x hidden"), ("kv_heads", self.heads, "heads")):
            if getattr(self, f) is None:        # 0 meant the default without a word: refused, as the docs say
                object.__setattr__(self, f, default)
            check_count(getattr(self, f), field=f, words=f"must be a positive integer (leave it out for {words})")
        if self.heads % self.kv_heads:
            raise InputError(f"heads ({self.heads}) must be a multiple of kv_heads", field="kv_heads",
                             value=self.kv_heads)

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def qkv_out(self) -> int:
        """Output width of the fused QKV projection (queries plus keys and values)."""
        return (self.heads + 2 * self.kv_heads) * self.head_dim

    def layer_params(self) -> int:
        """Parameters of one transformer block (weights, biases, two norms)."""
        h, f = self.hidden, self.ffn
        mlp_mats = 3 if self.gated_mlp else 2
        weights = h * self.qkv_out + h * h + mlp_mats * h * f
        biases = (self.qkv_out + h + (2 if self.gated_mlp else 1) * f + h) if self.bias else 0
        norms = 2 * (2 * h if self.bias else h)          # LayerNorm weight+bias, RMSNorm weight
        return weights + biases + norms

    def embedding_params(self) -> int:
        """Input embedding (tokens; GPT models also learned positions)."""
        return self.vocab * self.hidden + (self.seq * self.hidden if self.bias else 0)

    def output_params(self) -> int:
        """Final norm plus the output projection when it is not tied to the input embedding."""
        norm = 2 * self.hidden if self.bias else self.hidden
        return norm + (0 if self.tied_embeddings else self.vocab * self.hidden)

    def total_params(self) -> int:
        return self.layers * self.layer_params() + self.embedding_params() + self.output_params()

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _gpt(name: str, hidden: int, layers: int, heads: int, seq: int = 2048) -> TransformerSpec:
    return TransformerSpec(name, hidden, layers, heads, seq, vocab=51200)


def _llama(name: str, hidden: int, layers: int, heads: int, kv: int, ffn: int, vocab: int,
           seq: int) -> TransformerSpec:
    return TransformerSpec(name, hidden, layers, heads, seq, ffn=ffn, vocab=vocab, kv_heads=kv,
                           gated_mlp=True, bias=False, tied_embeddings=False)


ZOO: dict[str, TransformerSpec] = {m.name: m for m in (
    _gpt("gpt3-175b", 12288, 96, 96),
    _gpt("megatron-22b", 6144, 48, 64),
    _gpt("megatron-145b", 12288, 80, 96),
    _gpt("megatron-310b", 16384, 96, 128),
    _gpt("megatron-530b", 20480, 105, 128),
    _gpt("megatron-1t", 25600, 128, 160),
    _llama("llama-2-7b", 4096, 32, 32, 32, 11008, 32000, 4096),
    _llama("llama-2-13b", 5120, 40, 40, 40, 13824, 32000, 4096),
    _llama("llama-2-70b", 8192, 80, 64, 8, 28672, 32000, 4096),
    _llama("llama-3-8b", 4096, 32, 32, 8, 14336, 128256, 8192),
    _llama("llama-3-70b", 8192, 80, 64, 8, 28672, 128256, 8192),
    _llama("llama-3-405b", 16384, 126, 128, 8, 53248, 128256, 8192),
)}
_ALIASES = {"gpt3": "gpt3-175b", "gpt-3": "gpt3-175b", "gpt-3-175b": "gpt3-175b", "turing-530b": "megatron-530b",
            "mt-nlg-530b": "megatron-530b", "llama2-7b": "llama-2-7b", "llama2-13b": "llama-2-13b",
            "llama2-70b": "llama-2-70b", "llama3-8b": "llama-3-8b", "llama3-70b": "llama-3-70b",
            "llama3-405b": "llama-3-405b", "llama-3.1-405b": "llama-3-405b"}

_SPEC_FIELDS = {"hidden": "hidden", "layers": "layers", "heads": "heads", "seq": "seq", "ffn": "ffn",
                "vocab": "vocab", "kv_heads": "kv_heads", "gated_mlp": "gated_mlp", "bias": "bias",
                "tied_embeddings": "tied_embeddings", "name": "name"}


def model_names() -> list[str]:
    return sorted(ZOO)


def zoo_model(name: str) -> TransformerSpec:
    key = str(name).strip().lower()         # the API's model=5: a name, unknown
    key = _ALIASES.get(key, key)
    if key not in ZOO:
        raise InputError(f"unknown model; zoo: {', '.join(model_names())} (or --model-spec, or a YAML file)",
                         field="--model", value=name)
    return ZOO[key]


def _from_mapping(data: dict, source: str | None, field_prefix: str) -> TransformerSpec:
    kwargs: dict = {}
    for key, raw in data.items():
        k = str(key).strip().replace("-", "_")
        if k not in _SPEC_FIELDS:
            raise InputError(f"unknown field (known: {', '.join(_SPEC_FIELDS)})", source=source,
                             field=f"{field_prefix}{key}", value=raw)
        if k == "name":             # a list ran as the model "['m']"
            kwargs[k] = text(raw, field=f"{field_prefix}{key}", source=source, example="llama-3-8b")
        elif k in ("gated_mlp", "bias", "tied_embeddings"):
            kwargs[k] = switch(raw, source=source, field=f"{field_prefix}{key}", text=source is None)
        else:
            try:
                val = int(str(raw).strip()) if not isinstance(raw, bool) else None
            except ValueError:
                val = None
            if val is None:
                raise InputError("expected an integer", source=source, field=f"{field_prefix}{key}", value=raw)
            kwargs[k] = val
    missing = [f for f in ("hidden", "layers", "heads", "seq") if f not in kwargs]
    if missing:
        raise InputError(f"missing required field(s): {', '.join(missing)}", source=source,
                         field=f"{field_prefix}{missing[0]}")
    kwargs.setdefault("name", "custom")
    try:
        return TransformerSpec(**kwargs)
    except InputError as e:
        raise InputError(e.message, source=source, field=f"{field_prefix}{e.field}", value=e.value) from None


def parse_model_spec(text: str, field: str = "--model-spec") -> TransformerSpec:
    """``"hidden=12288,layers=96,heads=96,seq=2048[,ffn=..,vocab=..,kv_heads=..]"``; errors name ``field`` (the
    option, or a file's field such as ``jobs[0].train``) and the key."""
    data: dict = {}
    for part in comma_items(text, field):
        if "=" not in part:
            raise InputError("expected key=value pairs separated by commas", field=field, value=part)
        k, v = part.split("=", 1)
        if k.strip() in data:           # the later value would silently win (a YAML key twice is refused too)
            raise InputError(f"given twice ({data[k.strip()]} and {v.strip()})", field=f"{field}: {k.strip()}",
                             value=part.strip())
        data[k.strip()] = v.strip()
    return _from_mapping(data, None, f"{field}: ")


_HF_FIELDS = {"hidden_size": "hidden", "num_hidden_layers": "layers", "num_attention_heads": "heads",
              "num_key_value_heads": "kv_heads", "intermediate_size": "ffn", "vocab_size": "vocab",
              "max_position_embeddings": "seq", "tie_word_embeddings": "tied_embeddings"}
"""A Hugging Face ``config.json``'s names of the model file's fields."""


def _hf_hint(data: dict) -> str:
    """What to write instead of a Hugging Face config (it said 'architectures: unknown field')."""
    spec = ",".join(f"{ours}={str(data[theirs]).lower()}" for theirs, ours in _HF_FIELDS.items() if theirs in data)
    return (f"a Hugging Face config, not a model file: give --model-spec \"{spec}\" (seq: the sequence you train "
            "on; add gated_mlp=true,bias=false for a LLaMA-style model), or a file with those fields")


def load_model_file(path: str | Path) -> TransformerSpec:
    """A YAML or JSON file with the :func:`parse_model_spec` fields (``name`` optional)."""
    from simulator.core.inputs import read_structured
    data = read_structured(path, what="model file")
    if not isinstance(data, dict):
        from simulator.core.values import kind_of
        raise InputError(f"expected a mapping of model fields, not {kind_of(data)}", source=str(path))
    data = dict(data)
    if any(key in data for key in _HF_FIELDS):
        raise InputError(_hf_hint(data), source=str(path))
    data.setdefault("name", Path(path).stem)
    return _from_mapping(data, str(path), "")


def resolve_model(model: str | None = None, spec: str | None = None) -> TransformerSpec:
    """The CLI's model choice: exactly one of a zoo name / file (``--model``) and ``--model-spec``."""
    if (model is None) == (spec is None):
        raise InputError("give exactly one of --model and --model-spec", field="--model")
    if spec is not None:
        return parse_model_spec(spec)
    if names_a_file(model):
        return load_model_file(model)
    return zoo_model(model)


def with_seq(spec: TransformerSpec, seq: int | None) -> TransformerSpec:
    """``spec`` with the sequence length ``--seq`` (None: the model's own)."""
    if seq is None:
        return spec
    try:
        return replace(spec, seq=seq)
    except InputError as e:
        raise InputError(e.message, field="--seq", value=e.value) from None
