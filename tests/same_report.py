"""Same input, same report: a report must be a function of its input and configuration alone.

:func:`history_differences` checks every input of a list four ways against a reference and
lists every field that differs:

- ``fresh``: the reference, each input checked by a new ``Guardrail`` (its own caches);
- ``history``: one ``Guardrail`` checks the inputs in a shuffled order, twice over (the second
  round after every input has filled the caches), and each report is compared;
- ``batch``: ``Guardrail.batch`` over the shuffled inputs, 4 at a time;
- ``service``: ``POST /v1/check`` of the service app over one more ``Guardrail``, in another
  shuffled order.

The models (spaCy, the embedder, the verifier) are shared by every ``Guardrail`` of a process,
so anything they remember is shared too; ``python -m tests.same_report`` prints the reports of
a new process checking the inputs in reverse order, for a comparison across processes.

Fields compared: the whole report as JSON, without ``timings_ms`` and the stages' durations; an
input refused with a typed error (an HTTP 4xx in the service) compares as ``"error"``.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

PASSAGE_ACME = (
    "Acme is a company in Ohio. The chief executive of Acme is Jane Roe. Acme has 450 employees."
)
PASSAGE_SUPPORT = (
    "The refund window is 30 days from delivery. Refunds go back to the original payment "
    "method within 5 business days. The team meeting is on Monday at 2pm in room 4B."
)
PASSAGE_LOAN = (
    "The loan carries an interest rate of 3.25% for the first five years. After that the rate "
    "follows the base rate plus 1.5 points. The contract with Acme ends on 13 March 2027."
)
PASSAGE_ORVIK = "Orvik was founded in 1990 in Lyon. It makes bicycles and has 900 staff."

INPUTS: list[dict[str, Any]] = [
    {
        "query": "Tell me about Acme.",
        "response": "The chief executive of Acme is Jane Roe. Acme has 460 employees.",
        "passages": [PASSAGE_ACME],
    },
    {
        "query": "Tell me about Acme.",
        "response": "The chief executive of Acme is Jane Roe. Acme has 9000 employees.",
        "passages": [PASSAGE_ACME],
    },
    {
        "query": "Tell me about Acme.",
        "response": "Acme is a company in Ohio with 450 employees, led by Jane Roe.",
        "passages": [PASSAGE_ACME, "Unrelated text about the weather in May."],
    },
    {
        "query": "How long do I have to return it?",
        "response": "The refund window is 90 days, does that help?",
        "passages": [PASSAGE_SUPPORT],
    },
    {
        "query": "When is the meeting?",
        "response": "The meeting is on Monday at 2pm in room 4B. Refunds take 5 business days.",
        "passages": [PASSAGE_SUPPORT],
    },
    {
        "query": "When is the meeting?",
        "response": "So the meeting is on Friday at 3pm?",
        "passages": [PASSAGE_SUPPORT],
    },
    {
        "query": "What is the interest rate?",
        "response": "The loan carries an interest rate of 3.5% for the first five years.",
        "passages": [PASSAGE_LOAN],
    },
    {
        "query": "When does the contract end?",
        "response": "The contract with Acme ends on 14 March 2027.",
        "passages": [PASSAGE_LOAN],
    },
    {
        "query": "Tell me about Orvik.",
        "response": "Orvik was founded in 1990. It is based in Lyon and makes cars.",
        "passages": [PASSAGE_ORVIK],
    },
    {
        "query": "Tell me about Orvik.",
        "response": "Orvik was founded in 1990 in Lyon.",
        "knowledge_base": {
            "entities": [{"name": "Orvik", "attributes": {"founded": "1991", "location": "Lyon"}}]
        },
    },
    {
        "response": "Orvik moved to Paris in 2019. It now has 1,200 staff.",
        "dialogue": {
            "turns": [
                {"speaker": "user", "text": "Where is Orvik based?"},
                {"speaker": "assistant", "text": "Orvik is based in Lyon."},
                {"speaker": "user", "text": "Did it move?"},
            ]
        },
    },
    {"query": "Hi!", "response": "Hello! How can I help you today?"},
    {"response": "The meeting is at 3pm on Tuesday."},
    {
        "query": "会议什么时候？",
        "response": "会议在星期一下午两点。会议室是4B。",
        "passages": ["会议在星期一下午两点举行，地点是4B会议室。"],
    },
    {
        "query": "Who leads Acme, and how big is it?",
        "response": (
            "Jane Roe is the chief executive of Acme. Under her, the company grew quickly. "
            "Acme has 450 employees in Ohio. It was founded by John Smith in 1950. "
            "Most of its staff work in Cleveland."
        ),
        "passages": [PASSAGE_ACME, PASSAGE_ORVIK],
    },
    {
        "query": "Summarise the support policy.",
        "response": (
            "You can return an item within 30 days of delivery. The money goes back to the "
            "card you paid with, usually within five business days. Shipping is free."
        ),
        "passages": [
            {"text": PASSAGE_SUPPORT, "score": 0.41},
            {"text": PASSAGE_LOAN, "score": 0.2},
        ],
    },
]
"""Curated inputs: numbers, dates, names, questions, a KB, a dialogue, CJK, no evidence."""


def comparable(report: Any) -> dict[str, Any]:
    """The report as JSON without what changes from run to run (timings)."""
    data: dict[str, Any] = json.loads(report.model_dump_json())
    data.pop("timings_ms", None)
    for stage in data.get("stages", []):
        stage.pop("duration_ms", None)
    return data


def field_differences(want: Any, got: Any, path: str = "") -> list[str]:
    """Every path at which ``got`` differs from ``want`` (exact comparison, floats included)."""
    if isinstance(want, dict) and isinstance(got, dict):
        out: list[str] = []
        for key in sorted(set(want) | set(got), key=str):
            if key not in want or key not in got:
                out.append(f"{path}.{key}: only in {'got' if key in got else 'want'}")
            else:
                out += field_differences(want[key], got[key], f"{path}.{key}")
        return out
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return [f"{path}: {len(want)} items, then {len(got)}"]
        return [
            d
            for k, (w, g) in enumerate(zip(want, got, strict=True))
            for d in field_differences(w, g, f"{path}[{k}]")
        ]
    if want != got:
        return [f"{path}: {str(want)[:60]!r} then {str(got)[:60]!r}"]
    return []


def _ok(item: Any) -> bool:
    return not isinstance(item, BaseException)


def _dumps(items: Iterable[Any]) -> list[Any]:
    return [comparable(r) if _ok(r) else "error" for r in items]


def history_differences(
    make_guard: Callable[[], Any],
    inputs: Sequence[dict[str, Any]],
    *,
    seed: int = 0,
    service: bool = True,
    reference: Sequence[Any] | None = None,
) -> dict[str, list[str]]:
    """Every difference from the fresh reports, per way of checking (see the module docstring).

    ``reference``: the fresh reports already made (as :func:`comparable` dicts), else made here.
    """
    from guardrail.errors import GuardrailError

    def run(guard: Any, item: dict[str, Any]) -> Any:
        try:
            return guard.invoke(item)
        except GuardrailError as exc:
            return exc

    rng = random.Random(seed)
    want = (
        list(reference) if reference is not None else _dumps(run(make_guard(), x) for x in inputs)
    )
    found: dict[str, list[str]] = {}

    def record(way: str, order: Sequence[int], got: Sequence[Any]) -> None:
        diffs: list[str] = []
        for k, item in zip(order, got, strict=True):
            for d in field_differences(want[k], item):
                diffs.append(f"input {k}{d}")
        found[way] = diffs

    guard = make_guard()
    for round_ in (1, 2):
        order = list(range(len(inputs)))
        rng.shuffle(order)
        record(f"history round {round_}", order, _dumps(run(guard, inputs[k]) for k in order))

    order = list(range(len(inputs)))
    rng.shuffle(order)
    got = make_guard().batch(
        [inputs[k] for k in order], {"max_concurrency": 4}, return_exceptions=True
    )
    record("batch", order, _dumps(got))

    if service:
        from fastapi.testclient import TestClient

        from guardrail.report import GuardReport
        from guardrail.service import create_app
        from guardrail.service.settings import ServiceSettings

        app = create_app(guard=make_guard(), settings=ServiceSettings(warmup=False))
        rng.shuffle(order)
        replies: list[Any] = []
        with TestClient(app) as client:
            for k in order:
                r = client.post("/v1/check", json=inputs[k])
                replies.append(
                    comparable(GuardReport.model_validate(r.json()))
                    if r.status_code == 200
                    else "error"
                )
        record("service", order, replies)
    return found


def main() -> int:
    """Print the reports of this new process, checking :data:`INPUTS` in reverse order."""
    import logging

    from guardrail import Guardrail

    logging.disable(logging.CRITICAL)
    guard = Guardrail()
    reports = {k: comparable(guard.invoke(INPUTS[k])) for k in reversed(range(len(INPUTS)))}
    json.dump([reports[k] for k in range(len(INPUTS))], sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
