"""The shape of the GPT-style transformer the LLM runners train, as plain data (no torch).

A spec is written the way ``gpunetsim train --model-spec`` reads one::

    hidden=2048,layers=8,heads=16,seq=1024[,vocab=32000,ffn=8192]

``ffn`` defaults to ``4 * hidden`` and ``vocab`` to 32000. The model (``validation.gpt``) is
exactly: learned token (``vocab x hidden``) and position (``seq x hidden``) embeddings; ``layers``
pre-LayerNorm blocks of causal multi-head attention (one fused QKV linear ``hidden -> 3 hidden``
with bias, output projection ``hidden -> hidden`` with bias) and an MLP (``hidden -> ffn`` with
bias, GeLU (tanh), ``ffn -> hidden`` with bias); a final LayerNorm and an *untied* LM head
``hidden -> vocab`` without bias; cross-entropy loss in fp32. No dropout.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.core.errors import InputError

SPEC_FIELDS = ("hidden", "layers", "heads", "seq", "vocab", "ffn")
DEFAULT_VOCAB = 32000


@dataclass(frozen=True)
class GPTSpec:
    """Hyper-parameters of the runners' GPT (all counts, no units)."""

    hidden: int
    layers: int
    heads: int
    seq: int
    vocab: int = DEFAULT_VOCAB
    ffn: int = 0  # 0: 4 * hidden

    def __post_init__(self) -> None:
        if self.ffn == 0:
            object.__setattr__(self, "ffn", 4 * self.hidden)
        for name in SPEC_FIELDS:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InputError("must be a positive integer", field=f"model-spec {name}",
                                 value=value)
        if self.hidden % self.heads:
            raise InputError("hidden must be a multiple of heads", field="model-spec heads",
                             value=(self.hidden, self.heads))

    @property
    def text(self) -> str:
        """The canonical spec string (every field, fixed order)."""
        return ",".join(f"{k}={getattr(self, k)}" for k in SPEC_FIELDS)

    @property
    def layer_params(self) -> int:
        """Parameters of one transformer block: 2 LayerNorms, QKV, projection, MLP (with biases)."""
        h, f = self.hidden, self.ffn
        return 4 * h + (3 * h * h + 3 * h) + (h * h + h) + (h * f + f) + (f * h + h)

    @property
    def embedding_params(self) -> int:
        """Token plus position embeddings."""
        return (self.vocab + self.seq) * self.hidden

    @property
    def head_params(self) -> int:
        """Final LayerNorm plus the untied LM head."""
        return 2 * self.hidden + self.hidden * self.vocab

    @property
    def params(self) -> int:
        """All parameters of the model."""
        return self.embedding_params + self.layers * self.layer_params + self.head_params

    def fields(self) -> dict[str, int]:
        """``hidden, layers, heads, seq, vocab, ffn`` as a dict (what every record carries)."""
        return {k: getattr(self, k) for k in SPEC_FIELDS}


def stage_bounds(layers: int, stages: int) -> list[tuple[int, int]]:
    """Blocks ``[first, last)`` of each pipeline stage: as even as possible, earlier stages taking
    the remainder (stage 0 also holds the embedding, the last stage the head)."""
    if stages < 1 or stages > layers:
        raise InputError("need 1 <= stages <= layers", field="stages", value=(stages, layers))
    base, extra = divmod(layers, stages)
    out, first = [], 0
    for s in range(stages):
        n = base + (1 if s < extra else 0)
        out.append((first, first + n))
        first += n
    return out


def parse_spec(text: str, field: str = "model-spec") -> GPTSpec:
    """A :class:`GPTSpec` from ``"hidden=..,layers=..,heads=..,seq=..[,vocab=..,ffn=..]"``."""
    values: dict[str, int] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, eq, val = item.partition("=")
        key = key.strip()
        if not eq or key not in SPEC_FIELDS:
            raise InputError(f"write key=value with keys {', '.join(SPEC_FIELDS)}", field=field,
                             value=item)
        if key in values:
            raise InputError("key given twice", field=field, value=key)
        try:
            values[key] = int(val)
        except ValueError:
            raise InputError("values are integers", field=f"{field} {key}", value=val) from None
    missing = [k for k in ("hidden", "layers", "heads", "seq") if k not in values]
    if missing:
        raise InputError(f"missing {', '.join(missing)}", field=field, value=text)
    return GPTSpec(**values)


def parse_specs(text: str, field: str = "specs") -> list[GPTSpec]:
    """Several specs separated by ``;``."""
    specs = [parse_spec(t, field) for t in text.split(";") if t.strip()]
    if not specs:
        raise InputError("no model spec given", field=field, value=text)
    return specs


def parse_ints(text: str, field: str, minimum: int = 1) -> list[int]:
    """Comma-separated integers, each at least ``minimum``."""
    out = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        try:
            n = int(item)
        except ValueError:
            raise InputError("write comma-separated integers", field=field, value=item) from None
        if n < minimum:
            raise InputError(f"must be at least {minimum}", field=field, value=n)
        out.append(n)
    if not out:
        raise InputError("no values given", field=field, value=text)
    return out
