"""Tiny transformer models built on the spot, from a config and a small vocabulary file.

Random weights, no download: a BERT with one layer and 16 hidden units, saved as a
sentence-transformers bi-encoder or as a CrossEncoder folder.  They load through exactly the
code paths real models take, in well under a second.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import BertConfig

WORDS = [
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "is",
    "for",
    "on",
    "with",
    "ticket",
    "fare",
    "bus",
    "tram",
    "ferry",
    "train",
    "delay",
    "refund",
    "bike",
    "dog",
    "cat",
    "river",
    "bank",
    "money",
    "sea",
    "water",
    "rain",
    "sun",
    "city",
    "map",
    "card",
    "lost",
    "found",
    "help",
    "night",
    "day",
    "week",
]
VOCAB = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS)
HIDDEN = 16


def _config(num_labels: int | None = None) -> BertConfig:
    from transformers import BertConfig

    config = BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=HIDDEN,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=128,
        initializer_range=0.5,  # wide random weights: scores that differ clearly between inputs
    )
    if num_labels is not None:
        config.num_labels = num_labels
    return config


def _save_tokenizer(folder: Path) -> None:
    from transformers import BertTokenizer  # the tokenizers-backed (fast) one in transformers 5

    folder.mkdir(parents=True, exist_ok=True)
    vocab_file = folder / "vocab.txt"
    vocab_file.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    BertTokenizer(vocab_file=str(vocab_file)).save_pretrained(str(folder))


def tiny_sentence_transformer(folder: Path, seed: int = 0) -> Path:
    """A mean-pooling bi-encoder folder with random weights drawn from ``seed``."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import BertModel

    backbone = folder / "backbone"
    _save_tokenizer(backbone)
    torch.manual_seed(seed)
    BertModel(_config()).save_pretrained(str(backbone))
    model = SentenceTransformer(
        modules=[Transformer(str(backbone)), Pooling(HIDDEN, pooling_mode="mean")],
        device="cpu",
    )
    target = folder / "model"
    model.save(str(target))
    return target


def tiny_cross_encoder(folder: Path, seed: int = 0) -> Path:
    """A one-label sequence-classification BERT folder, loadable as a CrossEncoder."""
    import torch
    from transformers import BertForSequenceClassification

    _save_tokenizer(folder)
    torch.manual_seed(seed)
    BertForSequenceClassification(_config(num_labels=1)).save_pretrained(str(folder))
    return folder
