"""The named profiles a configuration starts from (``offline``, ``online``)."""

from __future__ import annotations

from typing import Any

#: Hugging Face model ids of the ``online`` profile (v1 and v2 of the published evaluation).
SEED_MODELS: dict[str, dict[str, str]] = {
    "v1": {"embedding": "sentence-transformers/all-MiniLM-L6-v2", "verifier": "roberta-large-mnli"},
    "v2": {"embedding": "BAAI/bge-small-en-v1.5", "verifier": "roberta-large-mnli"},
}

PROFILES: dict[str, dict[str, Any]] = {
    "offline": {
        "profile": "offline",
        # The bundled verifier was trained on pairs of up to 160 tokens: smaller windows.
        "hallucination": {"window_tokens": 128, "window_stride": 64},
    },
    "online": {
        "profile": "online",
        "models": {
            "embedding": SEED_MODELS["v2"]["embedding"],
            "verifier": SEED_MODELS["v2"]["verifier"],
        },
        "hallucination": {"window_tokens": 400, "window_stride": 200},
    },
}
