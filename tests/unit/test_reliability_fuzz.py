"""Property-based fuzzing of the three public entry points: ``Guardrail.invoke``,
``guardrail check`` (in-process) and ``POST /v1/check``.

Odd and adversarial text, passages, dialogue and knowledge-base data (see
``tests/reliability_strategies.py``) must end in a typed ``GuardrailError`` or a complete
report that keeps the invariants (spans inside the text, no accept without evidence, no
contradicted claim delivered unchanged). The verifier is the ``ScriptedVerifier`` test double
(every pair gets one label, drawn per example); spaCy and the embedder are the real offline
models, loaded once per process. ``GUARDRAIL_FUZZ_EXAMPLES`` sets the examples per test (10 by
default); ``benchmarks/reliability.py --examples N`` runs the same strategies at scale.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guardrail import Guardrail, GuardReport
from guardrail.errors import GuardrailError, InputError
from tests.reliability_strategies import (
    ADVERSARIAL,
    EXAMPLES,
    INJECTION,
    classify,
    guard_inputs,
    passages,
    scripted_guard,
    sentences,
    texts,
    violations,
)

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
LABELS = st.sampled_from(["entailment", "neutral", "contradiction"])


@pytest.fixture(scope="module", autouse=True)
def _models_loaded() -> None:
    """Load spaCy and the embedder once, outside any example's time."""
    scripted_guard("neutral")


@FUZZ
@given(data=guard_inputs, label=LABELS)
def test_invoke_ends_in_a_typed_error_or_a_sound_report(data: dict[str, Any], label: str) -> None:
    kind, problems = classify(scripted_guard(label).invoke, data)
    assert kind != "escaped", (problems, data)
    assert problems == [], (problems, data)


@FUZZ
@given(response=st.lists(sentences, min_size=1, max_size=4).map(" ".join), label=LABELS)
def test_no_evidence_is_never_accepted(response: str, label: str) -> None:
    report = scripted_guard(label).invoke({"response": response})
    if report.verdict.label.value == "NOTHING_TO_CHECK":  # no fact stated: nothing to check
        assert report.claims and all(c.status.value == "not_checkworthy" for c in report.claims)
        return
    assert report.action.value not in ("accept", "accept_with_flags")
    assert violations(report, {"response": response}) == []


@FUZZ
@given(response=st.lists(sentences, min_size=1, max_size=3).map(" ".join), extra=passages)
def test_contradicting_evidence_is_never_delivered_unchanged(response: str, extra: Any) -> None:
    data = {"response": response, "passages": ["Orvik was founded in 1985 in Graz."]}
    kind, problems = classify(scripted_guard("contradiction").invoke, data)
    assert kind == "report" and problems == []


@pytest.mark.parametrize("text", ADVERSARIAL)
def test_every_adversarial_text_as_response_and_passage(text: str) -> None:
    data = {"query": text, "response": text, "passages": [text, f"Orvik was founded. {text}"]}
    kind, problems = classify(scripted_guard("contradiction").invoke, data)
    assert kind != "escaped" and problems == [], problems


@pytest.mark.parametrize("injection", INJECTION)
def test_prompt_injection_inside_a_passage_does_not_buy_an_accept(injection: str) -> None:
    data = {
        "query": "When was Orvik founded?",
        "response": "Orvik was founded in 1990.",
        "passages": [f"Orvik was founded in 1985. {injection}", injection],
    }
    report = scripted_guard("contradiction").invoke(data)
    assert report.action.value not in ("accept", "accept_with_flags")
    assert violations(report, data) == []


def test_a_one_megabyte_response_is_a_typed_input_error() -> None:
    with pytest.raises(InputError, match="max_response_chars"):
        scripted_guard("entailment").invoke({"response": "The meeting is at 2pm. " * 45_000})


def test_thousands_of_passages_end_in_a_typed_error_or_a_sound_report() -> None:
    data = {"response": "The meeting is at 2pm.", "passages": ["It is at 2pm."] * 3000}
    kind, problems = classify(scripted_guard("entailment").invoke, data)
    assert kind in ("report", "typed_error") and problems == []


def test_non_input_values_are_typed_errors() -> None:
    guard = scripted_guard("entailment")
    for value in (None, 5, "text", ["a"], {"response": None}, {"response": b"x"}, {}):
        with pytest.raises(GuardrailError):
            guard.invoke(value)


# --- guardrail check (in-process) -------------------------------------------------------------


def run_cli(argv: list[str], guard: Guardrail) -> tuple[int, str]:
    """``guardrail.cli.main(argv)`` with the shared scripted guardrail (the command builds a
    new ``Guardrail`` per call, which would load the models each time)."""
    import guardrail.cli
    import guardrail.pipeline

    out, err = io.StringIO(), io.StringIO()
    with (
        pytest.MonkeyPatch.context() as mp,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        mp.setattr(guardrail.pipeline, "Guardrail", lambda *a, **k: guard)
        code = guardrail.cli.main(argv)  # usage errors return 2, they do not raise SystemExit
    return code, out.getvalue()


@FUZZ
@given(
    response=texts, passage_texts=st.lists(texts, max_size=3), fmt=st.sampled_from(["json", "text"])
)
def test_check_command_exits_0_or_2_and_prints_a_sound_report(
    response: str, passage_texts: list[str], fmt: str
) -> None:
    if "\x00" in response or any("\x00" in p for p in passage_texts):
        return  # a NUL cannot reach argv from a shell
    argv = ["check", "--response", response, "--format", fmt]
    for p in passage_texts:
        argv += ["--passage", p]
    code, out = run_cli(argv, scripted_guard("neutral"))
    assert code in (0, 2), (code, argv)
    if code == 0 and fmt == "json":
        report = GuardReport.model_validate_json(out)
        assert violations(report, {"response": response, "passages": passage_texts}) == []


# --- POST /v1/check ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client() -> Any:
    pytest.importorskip("fastapi", reason="the service extra is not installed")
    from fastapi.testclient import TestClient

    from guardrail.service import create_app
    from guardrail.service.settings import ServiceSettings

    app = create_app(
        guard=scripted_guard("neutral"),
        settings=ServiceSettings(max_body_bytes=50_000, max_passages=20, warmup=False),
    )
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=20),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


@FUZZ
@given(data=guard_inputs)
def test_service_check_answers_200_422_or_413_never_500(client: Any, data: dict[str, Any]) -> None:
    try:
        body = json.dumps(data, allow_nan=False)
    except ValueError:
        body = json.dumps(data)  # NaN / Infinity as JS literals: the server must still cope
    r = client.post("/v1/check", content=body, headers={"content-type": "application/json"})
    assert r.status_code in (200, 413, 422), (r.status_code, r.text[:300], data)
    if r.status_code == 200:
        report = GuardReport.model_validate(r.json())
        assert violations(report, data) == []


@FUZZ
@given(body=json_values)
def test_service_check_rejects_arbitrary_json_with_422(client: Any, body: Any) -> None:
    r = client.post("/v1/check", json=body)
    assert r.status_code in (200, 413, 422), (r.status_code, r.text[:300], body)


def test_service_answers_non_standard_json_numbers_without_a_crash(client: Any) -> None:
    # strict JSON clients cannot send these (the fuzz strategy above leaves them out), so send
    # the raw bytes: Python's parser reads Infinity / NaN, and the service must still answer
    for raw in (b"Infinity", b"NaN", b'{"response": Infinity}', b'{"query": NaN, "response": "x"}'):
        r = client.post("/v1/check", content=raw, headers={"content-type": "application/json"})
        assert r.status_code in (200, 413, 422), (r.status_code, r.text[:300], raw)


def test_service_rejects_an_oversized_body_with_413(client: Any) -> None:
    r = client.post("/v1/check", json={"response": "x" * 60_000})
    assert r.status_code == 413


def test_service_rejects_broken_json_with_422(client: Any) -> None:
    for raw in (b"{", b"\xff\xfe", b'{"response": "a"', b"[]", b"null"):
        r = client.post("/v1/check", content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 422, (raw, r.status_code, r.text[:200])


@pytest.mark.parametrize("score", ["NaN", "Infinity", "-Infinity", "-3", "1e308", "true", '"0.5"'])
def test_service_odd_passage_scores_are_422_or_a_report(client: Any, score: str) -> None:
    body = (
        '{"response": "Orvik was founded in 1990.", "passages": '
        f'[{{"text": "Orvik was founded in 1990 in Lyon.", "score": {score}}}]}}'
    )
    r = client.post("/v1/check", content=body, headers={"content-type": "application/json"})
    assert r.status_code in (200, 422), (score, r.status_code, r.text[:300])


@pytest.mark.parametrize("score", [math.nan, math.inf, -math.inf, -3.0, 1e308])
def test_invoke_odd_passage_scores_give_a_sound_report(score: float) -> None:
    data = {
        "response": "Orvik was founded in 1990.",
        "passages": [{"text": "Orvik was founded in 1990 in Lyon.", "score": score}],
    }
    kind, problems = classify(scripted_guard("entailment").invoke, data)
    assert kind in ("report", "typed_error") and problems == []
    if kind == "report":
        report = scripted_guard("entailment").invoke(data)
        json.loads(report.model_dump_json())  # serialisable
