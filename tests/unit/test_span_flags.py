"""LettuceDetect span flags on the report: spans of the answer a span model marks as
hallucinated become UNSUPPORTED_CLAIM flags (tiny token classifier, no hub)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from guardrail import Guardrail
from guardrail.config import GuardrailConfig
from guardrail.hallucination.flags import span_flags
from guardrail.report import Claim, HallucinationFlag, HallucinationType, Span
from guardrail.verifiers import load_verifier
from guardrail.verifiers.hybrid import HybridVerifier
from guardrail.verifiers.presets import get_preset
from guardrail.verifiers.scripted import ScriptedVerifier
from guardrail.verifiers.span_backend import HallucinatedSpan, SpanPresetVerifier
from tests import tiny_presets as tiny

pytest.importorskip("transformers")

PASSAGE = "The museum opened in 1998 in Lyon. It holds 4,000 paintings."
FIRST = "The museum opened in 1998."
SECOND = "It now holds 9,000 sculptures."
ANSWER = f"{FIRST} {SECOND}"
INVENTED = "9,000 sculptures"


@pytest.fixture(scope="module")
def lettuce(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny.build_token_classifier(tmp_path_factory.mktemp("lettuce") / "m")


def _biased(lettuce: Path, tmp_path: Path, bias: tuple[float, float]) -> Any:
    path = tmp_path / "biased"
    shutil.copytree(lettuce, path)
    tiny.set_head_bias(path, bias, "classifier")
    return load_verifier({"preset": "tinylettuce-17m", "path": str(path)})


def _invoke(verifier: Any) -> Any:
    return Guardrail(GuardrailConfig(), verifier=verifier).invoke(
        {"response": ANSWER, "passages": [PASSAGE], "query": "What does the museum hold?"}
    )


def _span_flags(report: Any) -> list[HallucinationFlag]:
    return [f for f in report.hallucination_flags if "span model" in f.explanation]


def test_a_flagging_head_puts_the_span_on_the_report(lettuce: Path, tmp_path: Path) -> None:
    report = _invoke(_biased(lettuce, tmp_path, (-6.0, 6.0)))
    [flag] = _span_flags(report)  # every answer token flagged: one run over the whole answer
    assert (flag.span.start, flag.span.end) == (0, len(ANSWER))
    assert flag.type is HallucinationType.UNSUPPORTED_CLAIM and flag.content == ANSWER
    assert flag.confidence > 0.99 and "tinylettuce-17m" in flag.explanation
    assert report.claims[flag.claim_index].text == SECOND  # the claim it overlaps most
    claim_spans = {(c.span.start, c.span.end) for c in report.claims}
    assert (flag.span.start, flag.span.end) not in claim_spans


def test_a_head_saying_all_supported_adds_no_flag(lettuce: Path, tmp_path: Path) -> None:
    report = _invoke(_biased(lettuce, tmp_path, (6.0, -6.0)))
    assert _span_flags(report) == [] and report.hallucination_flags == []


class Marked(SpanPresetVerifier):
    """The tiny model with its head forced: tokens of ``INVENTED`` are hallucinated."""

    def token_logits(self, enc: Any) -> np.ndarray:
        ids = np.asarray(enc["input_ids"])
        marked = set(self.tokenizer(INVENTED, add_special_tokens=False)["input_ids"])
        flagged = np.isin(ids, list(marked))
        return np.stack([np.where(flagged, -6.0, 6.0), np.where(flagged, 6.0, -6.0)], -1)


def test_spans_of_some_tokens_in_a_hybrid(lettuce: Path) -> None:
    span_model = Marked(get_preset("tinylettuce-17m"), str(lettuce))
    nli = ScriptedVerifier({(None, FIRST): (0.9, 0.05, 0.05), (None, SECOND): (0.2, 0.7, 0.1)})
    report = _invoke(HybridVerifier([nli, span_model]))
    [flag] = _span_flags(report)
    start = ANSWER.index(INVENTED)
    assert (flag.span.start, flag.span.end) == (start, start + len(INVENTED))
    assert flag.content == INVENTED and flag.claim_index == 1


def _claim(text: str, start: int) -> Claim:
    return Claim(text=text, span=Span(start=start, end=start + len(text)))


def test_builder_maps_claims_and_skips_duplicates() -> None:
    claims = [_claim(FIRST, 0), _claim(SECOND, len(FIRST) + 1)]
    start = ANSWER.index(INVENTED)
    spans = [
        HallucinatedSpan(start, start + len(INVENTED), 0.8, INVENTED),
        HallucinatedSpan(start, start + len(INVENTED), 0.8, INVENTED),  # given twice
        HallucinatedSpan(0, 3, 0.7, "The"),
    ]
    [existing] = span_flags(ANSWER, spans[2:], claims, [], "m")
    flags = span_flags(ANSWER, spans, claims, [existing], "m")
    assert [(f.span.start, f.claim_index, f.confidence) for f in flags] == [(start, 1, 0.8)]
    assert (
        span_flags(ANSWER, [HallucinatedSpan(0, 3, 0.7, "The")], [], [], "m")[0].claim_index is None
    )
