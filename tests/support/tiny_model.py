"""A tiny llama-architecture model written with ``gguf``: random weights, a small vocabulary, ChatML.

Nothing is downloaded. :func:`write_model` writes a model of 2 layers and 64 dimensions with about
700 tokens, tokenizer metadata and a ChatML chat template (about 0.7 MB, in a few hundredths of a
second), identical bytes for the same arguments. Its answers are gibberish, but llama.cpp serves it
like any model: real tokenization, token counts, ``finish_reason``, context limits, slots, and
grammar-constrained JSON.

Two vocabulary styles, because llama.cpp treats them differently:

- ``bpe``: GPT-2 style byte-level BPE (256 byte tokens, merges). JSON mode and JSON schemas work.
- ``spm``: SentencePiece style (``<0xNN>`` byte tokens, ``▁`` pieces with scores) with the space
  prefix on, as Llama-2 and Mistral tokenizers have it. llama.cpp refuses ``response_format``
  (``json_object`` and ``json_schema`` alike) with ``400 Failed to initialize samplers:
  std::exception`` for it; the same vocabulary without the space prefix is accepted.

The weights are random except for one direction: every token's embedding carries a constant in
dimension 0, which survives the two small layers and the final norm, and the output matrix reads
that dimension as a fixed bias towards the end-of-turn token and the double quote. Answers are then
short (a few dozen tokens), and a JSON string the grammar holds open ends soon, so grammar-bound
judge replies complete instead of running into the token limit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import gguf
import numpy as np

Vocabulary = Literal["bpe", "spm"]

CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
"""The ChatML template (as Qwen and many fine-tunes use it), rendered by llama.cpp's Jinja engine."""

LAYERS = 2
DIM = 64
HEADS = 4
FFN = 128
TRAINED_CONTEXT = 4096
"""The context length the metadata claims; the server's own ``n_ctx`` decides what is usable."""
PIECES = 440
"""Merges (bpe) or word pieces (spm) beyond the 256 byte tokens: about 700 tokens in all."""

_LETTERS = "etaoinshrdlucmfwypvbgkjqxz"
_ANCHOR = 8.0
"""The constant in dimension 0 of every embedding: after the final norm it is about 5.7."""
_END_BIAS = 0.6
_QUOTE_BIAS = 0.9
"""Output weights on dimension 0 for the end-of-turn token and ``"`` (about +3.4 and +5 logits,
against random logits of spread 1.7): plain answers of about 8 tokens, JSON strings of a few."""


def _byte_chars() -> list[str]:
    """GPT-2's byte-to-character table: printable bytes stand for themselves, the rest from U+0100."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table: list[str] = []
    shifted = 0
    for byte in range(256):
        if byte in printable:
            table.append(chr(byte))
        else:
            table.append(chr(0x100 + shifted))
            shifted += 1
    return table


def _pairs() -> list[tuple[str, str]]:
    """Space + letter first, then letter pairs: the pieces both vocabularies build from."""
    return [(" ", c) for c in _LETTERS] + [(a, b) for a in _LETTERS for b in _LETTERS]


def _bpe_tokenizer(writer: gguf.GGUFWriter) -> tuple[int, int]:
    """A byte-level BPE vocabulary; returns (vocabulary size, end-of-turn id)."""
    chars = _byte_chars()
    tokens = list(chars)
    merges = []
    for left, right in _pairs()[:PIECES]:
        a, b = (chars[ord(left)] if left == " " else left), right
        merges.append(f"{a} {b}")
        tokens.append(a + b)
    types = [gguf.TokenType.NORMAL] * len(tokens)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tokens += specials
    types += [gguf.TokenType.CONTROL] * len(specials)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(tokens.index("<|endoftext|>"))
    writer.add_eos_token_id(tokens.index("<|im_end|>"))
    writer.add_add_bos_token(False)
    return len(tokens), tokens.index("<|im_end|>")


def _spm_tokenizer(writer: gguf.GGUFWriter) -> tuple[int, int]:
    """A SentencePiece vocabulary with the space prefix; returns (vocabulary size, end-of-turn id)."""
    tokens = ["<unk>", "<s>", "</s>", *(f"<0x{b:02X}>" for b in range(256))]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    types += [gguf.TokenType.BYTE] * 256
    pieces = ["▁", *_LETTERS, *("".join(pair).replace(" ", "▁") for pair in _pairs())][:PIECES]
    tokens += pieces
    types += [gguf.TokenType.NORMAL] * len(pieces)
    scores = [0.0] * (len(tokens) - len(pieces)) + [-float(i) for i in range(len(pieces))]
    for special in ("<|im_start|>", "<|im_end|>"):
        tokens.append(special)
        types.append(gguf.TokenType.CONTROL)
        scores.append(0.0)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_scores(scores)
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(tokens.index("<|im_end|>"))
    writer.add_add_bos_token(True)
    writer.add_add_space_prefix(True)
    return len(tokens), tokens.index("<|im_end|>")


def write_model(path: Path, vocabulary: Vocabulary = "bpe", *, seed: int = 0) -> Path:
    """Write the tiny model to ``path`` and return it (same arguments, same bytes)."""
    rng = np.random.default_rng(seed)

    def normal(*shape: int, scale: float) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    writer = gguf.GGUFWriter(path, "llama")
    writer.add_name(f"omk-tiny-{vocabulary}")
    writer.add_context_length(TRAINED_CONTEXT)
    writer.add_embedding_length(DIM)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(HEADS)
    writer.add_rope_dimension_count(DIM // HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    tokenizer = _bpe_tokenizer if vocabulary == "bpe" else _spm_tokenizer
    n_vocab, end_id = tokenizer(writer)
    writer.add_chat_template(CHATML)

    # Shapes are numpy's (rows, columns); GGUF stores them reversed, as llama.cpp expects.
    embeddings = normal(n_vocab, DIM, scale=1.0)
    embeddings[:, 0] = _ANCHOR
    output = normal(n_vocab, DIM, scale=0.3)
    output[:, 0] = 0.0
    output[end_id, 0] = _END_BIAS
    first_byte = 0 if vocabulary == "bpe" else 3  # where the 256 byte tokens start
    quote = first_byte + ord('"')
    # Never a control character or a lone UTF-8 continuation byte: llama.cpp's reply parser
    # answers 500 to a reply that is not valid UTF-8.
    unprintable = [*range(0x00, 0x20), *range(0x7F, 0x100)]
    output[[first_byte + b for b in unprintable], 0] = -1.0
    output[quote, 0] = _QUOTE_BIAS
    writer.add_tensor("token_embd.weight", embeddings)
    writer.add_tensor("output_norm.weight", np.ones(DIM, np.float32))
    writer.add_tensor("output.weight", output)
    for layer in range(LAYERS):
        prefix = f"blk.{layer}."
        writer.add_tensor(prefix + "attn_norm.weight", np.ones(DIM, np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"{prefix}{name}.weight", normal(DIM, DIM, scale=0.1))
        writer.add_tensor(prefix + "ffn_norm.weight", np.ones(DIM, np.float32))
        writer.add_tensor(prefix + "ffn_gate.weight", normal(FFN, DIM, scale=0.1))
        writer.add_tensor(prefix + "ffn_up.weight", normal(FFN, DIM, scale=0.1))
        writer.add_tensor(prefix + "ffn_down.weight", normal(DIM, FFN, scale=0.1))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
