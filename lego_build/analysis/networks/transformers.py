"""Transformer presets: BERT-base, GPT-2 small, LLaMA-7B.

Sources of the shapes:

* BERT-base: Devlin, Chang, Lee, Toutanova, "BERT: Pre-training of Deep
  Bidirectional Transformers for Language Understanding", NAACL 2019, Section 3
  (L = 12, H = 768, A = 12, FFN 4H = 3072); layer names follow Hugging Face
  ``transformers`` ``modeling_bert.py`` (``encoder.layer.<i>.attention.self.query``).
* GPT-2 small: Radford, Wu, Child, Luan, Amodei, Sutskever, "Language Models are
  Unsupervised Multitask Learners", 2019, Table 2 (12 layers, d_model 768) and
  Section 2.3; 12 heads, FFN 3072, vocabulary 50,257 from the released ``hparams.json``
  / Hugging Face ``modeling_gpt2.py`` (names ``h.<i>.attn.c_attn``, ``lm_head``).
* LLaMA-7B: Touvron et al., "LLaMA: Open and Efficient Foundation Language Models",
  2023, Table 2 (dimension 4096, 32 heads, 32 layers) and Section 2.2 (RMSNorm
  pre-normalisation, SwiGLU FFN of width 2/3 * 4d, 11008 in the released model,
  rotary embeddings); vocabulary 32,000 (the released tokenizer); names follow Hugging Face ``modeling_llama.py``
  (``model.layers.<i>.self_attn.q_proj``, ``mlp.gate_proj``).

The blocks of a model are identical, so each per-block layer appears once with
``count`` = number of blocks and a ``*`` in place of the block index
(``encoder.layer.*.attention.self.query``). Linear projections are ``fc`` GEMMs with
``M`` = tokens (batch x sequence) sharing one weight matrix; attention is
:func:`lego_build.analysis.from_config.attention_layers` (``Q K^T`` and ``P V`` as
batched matmuls over batch x heads, softmax on the PPU, the ``1/sqrt(d)`` scale and
the masks folded into the softmax). Embedding lookups do no MACs: they are recorded
as an ``embedding`` PPU op touching tokens x hidden elements. Dropout is the
identity at inference.
"""
from __future__ import annotations

from lego_build.analysis.from_config import attention_layers
from lego_build.analysis.networks.builder import NetBuilder
from lego_build.ir.workload import Layer

# ----------------------------------------------------------------------------- BERT-base
BERT_LAYERS, BERT_HIDDEN, BERT_HEADS, BERT_FFN, BERT_SEQ = 12, 768, 12, 3072, 16


def bert(batch: int, bits: int) -> tuple[Layer, ...]:
    """BERT-base encoder at sequence length 16, plus the pooler (dense + tanh on [CLS]).

    Per block: Q, K, V projections, attention, output projection, residual add,
    layernorm, FFN up (GELU) and down, residual add, layernorm. No task head.
    """
    n, h, f, heads, s = BERT_LAYERS, BERT_HIDDEN, BERT_FFN, BERT_HEADS, BERT_SEQ
    t = batch * s
    net = NetBuilder("bert", batch, bits, (h, s, 1))
    net.ppu("embeddings", "embedding", t * h)  # word + position + token-type lookups, summed
    net.ppu("embeddings.LayerNorm", "layernorm", t * h)
    p = "encoder.layer.*"
    for proj in ("query", "key", "value"):
        net.matmul(f"{p}.attention.self.{proj}", t, h, h, count=n, op="fc")
    net.layers.extend(attention_layers(f"{p}.attention.self", batch, heads, s, s, h // heads, bits, count=n))
    net.matmul(f"{p}.attention.output.dense", t, h, h, count=n, op="fc")
    net.ppu(f"{p}.attention.output.add", "add", t * h, count=n)
    net.ppu(f"{p}.attention.output.LayerNorm", "layernorm", t * h, count=n)
    net.matmul(f"{p}.intermediate.dense", t, f, h, count=n, op="fc")
    net.ppu(f"{p}.intermediate.gelu", "gelu", t * f, count=n)
    net.matmul(f"{p}.output.dense", t, h, f, count=n, op="fc")
    net.ppu(f"{p}.output.add", "add", t * h, count=n)
    net.ppu(f"{p}.output.LayerNorm", "layernorm", t * h, count=n)
    net.matmul("pooler.dense", batch, h, h, op="fc")  # first ([CLS]) token of each sequence
    net.ppu("pooler.activation", "tanh", batch * h)
    return tuple(net.layers)


# ----------------------------------------------------------------------------- GPT-2 small
GPT2_LAYERS, GPT2_HIDDEN, GPT2_HEADS, GPT2_FFN, GPT2_VOCAB = 12, 768, 12, 3072, 50257
GPT2_PROMPT = 1000


def _gpt2_pass(net: NetBuilder, phase: str, batch: int, seq_q: int, seq_kv: int) -> None:
    """One forward pass over ``seq_q`` new tokens per sequence attending to ``seq_kv`` keys.

    Logits are computed for the last position only (what generation samples from),
    so ``ln_f`` and ``lm_head`` run on ``batch`` rows.
    """
    n, h, f, heads, v = GPT2_LAYERS, GPT2_HIDDEN, GPT2_FFN, GPT2_HEADS, GPT2_VOCAB
    t = batch * seq_q
    p = f"{phase}.h.*"
    net.ppu(f"{phase}.wte+wpe", "embedding", t * h)  # token + position embedding lookups, summed
    net.ppu(f"{p}.ln_1", "layernorm", t * h, count=n)
    net.matmul(f"{p}.attn.c_attn", t, 3 * h, h, count=n, op="fc")  # fused Q, K, V
    net.layers.extend(attention_layers(f"{p}.attn", batch, heads, seq_q, seq_kv, h // heads, net.bits, count=n))
    net.matmul(f"{p}.attn.c_proj", t, h, h, count=n, op="fc")
    net.ppu(f"{p}.attn.add", "add", t * h, count=n)
    net.ppu(f"{p}.ln_2", "layernorm", t * h, count=n)
    net.matmul(f"{p}.mlp.c_fc", t, f, h, count=n, op="fc")
    net.ppu(f"{p}.mlp.act", "gelu", t * f, count=n)
    net.matmul(f"{p}.mlp.c_proj", t, h, f, count=n, op="fc")
    net.ppu(f"{p}.mlp.add", "add", t * h, count=n)
    net.ppu(f"{phase}.ln_f", "layernorm", batch * h)
    net.matmul(f"{phase}.lm_head", batch, v, h, op="fc")  # weight tied to wte
    net.ppu(f"{phase}.softmax", "softmax", batch * v)


def gpt2(batch: int, bits: int) -> tuple[Layer, ...]:
    """GPT-2 small generating one token after a 1000-token input (seed 004 §6: "input length
    1000 ... the latency of generating one token"): the decode step, that token attending to a
    KV cache of the 1000 input positions plus itself (1001 keys), and the LM head (768 x 50257)
    producing its logits. The prompt's prefill is not included, as for ``llama7b``: §6.2 finds
    both designs bound by memory bandwidth on GPT-2, which only the decode step is (the prefill
    of 1000 tokens reuses every weight 1000 times).
    """
    net = NetBuilder("gpt2", batch, bits, (GPT2_HIDDEN, 1, 1))
    _gpt2_pass(net, "decode", batch, 1, GPT2_PROMPT + 1)
    return tuple(net.layers)


# ----------------------------------------------------------------------------- LLaMA-7B
LLAMA_LAYERS, LLAMA_HIDDEN, LLAMA_HEADS, LLAMA_FFN, LLAMA_VOCAB = 32, 4096, 32, 11008, 32000
LLAMA_CONTEXT = 1000


def llama7b(batch: int, bits: int) -> tuple[Layer, ...]:
    """LLaMA-7B decoding one token per sequence with 1000 tokens already in the KV cache.

    The new token's query attends over 1001 keys (1000 cached + its own). Per block:
    RMSNorm, Q/K/V projections, rotary embedding of Q and K, attention, output
    projection, residual add, RMSNorm, SwiGLU FFN (gate and up projections, SiLU on
    the gate, element-wise product, down projection), residual add. Then the final
    RMSNorm, the LM head (4096 x 32000, untied) and the softmax the sampler reads.
    The prefill of the context is not included.
    """
    n, h, f, heads, v = LLAMA_LAYERS, LLAMA_HIDDEN, LLAMA_FFN, LLAMA_HEADS, LLAMA_VOCAB
    t = batch  # one new token per sequence
    net = NetBuilder("llama7b", batch, bits, (h, 1, 1))
    p = "model.layers.*"
    net.ppu("model.embed_tokens", "embedding", t * h)
    net.ppu(f"{p}.input_layernorm", "rmsnorm", t * h, count=n)
    for proj in ("q_proj", "k_proj", "v_proj"):
        net.matmul(f"{p}.self_attn.{proj}", t, h, h, count=n, op="fc")
    net.ppu(f"{p}.self_attn.rotary_emb", "rope", 2 * t * h, count=n)  # on Q and K
    net.layers.extend(attention_layers(f"{p}.self_attn", batch, heads, 1, LLAMA_CONTEXT + 1, h // heads, bits,
                                       count=n))
    net.matmul(f"{p}.self_attn.o_proj", t, h, h, count=n, op="fc")
    net.ppu(f"{p}.self_attn.add", "add", t * h, count=n)
    net.ppu(f"{p}.post_attention_layernorm", "rmsnorm", t * h, count=n)
    net.matmul(f"{p}.mlp.gate_proj", t, f, h, count=n, op="fc")
    net.matmul(f"{p}.mlp.up_proj", t, f, h, count=n, op="fc")
    net.ppu(f"{p}.mlp.act_fn", "silu", t * f, count=n)
    net.ppu(f"{p}.mlp.mul", "mul", t * f, count=n)
    net.matmul(f"{p}.mlp.down_proj", t, h, f, count=n, op="fc")
    net.ppu(f"{p}.mlp.add", "add", t * h, count=n)
    net.ppu("model.norm", "rmsnorm", t * h)
    net.matmul("lm_head", t, v, h, op="fc")
    net.ppu("softmax", "softmax", t * v)
    return tuple(net.layers)
