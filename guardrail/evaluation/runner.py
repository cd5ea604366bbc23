"""Run evaluation conditions over a dataset through the real :class:`~guardrail.Guardrail`.

For each condition a ``Guardrail`` is built from the condition's config with one shared
:class:`~guardrail.evaluation.cache.CachingVerifier` injected, so verifier scores computed by
one condition are reused by the others (and by later runs).

Retrieval scores: the evaluation sets have no retriever, so each passage's score is the cosine
similarity (the configured embedder, all-MiniLM-L6-v2 offline) between the query — or the
response when the example has no query — and the passage, as a retriever would report it.
T(rs) then sees the best of these, like in a RAG app.

Prediction of an example: 1 when the verdict is HALLUCINATION, and also when it is UNVERIFIED
(fail-closed: an answer that could not be checked is not accepted; counted as ``unverified``);
0 when it is VERIFIED or NOTHING_TO_CHECK (an answer that states no checkable fact — a greeting,
a question back — hallucinates nothing; its score is the lowest, -1).
Score (higher = more likely hallucinated): ``T(rs) − nli_score`` for the weakest-link policy,
the larger margin of the two ratios over their thresholds for the ratio policy.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from guardrail.config import HallucinationConfig
from guardrail.errors import GuardrailError
from guardrail.evaluation.conditions import Condition, condition_config
from guardrail.evaluation.examples import EvalExample
from guardrail.evaluation.results import (
    ClaimScore,
    ConditionMetrics,
    ExampleResult,
    write_condition,
    write_json,
)
from guardrail.report import ClaimStatus, GuardReport, VerdictLabel
from guardrail.verifiers.base import Verifier

logger = logging.getLogger(__name__)


def verifier_fingerprint(verifier: Verifier, spec: str | None) -> str:
    """A cache key name for the verifier's weights: its name plus a digest of its files'
    sizes and modification times (so retrained weights never hit stale scores)."""
    from guardrail.verifiers import bundled_dir

    folder = bundled_dir() if spec in (None, "bundled", "offline", "default") else Path(str(spec))
    digest = hashlib.sha256()
    if folder.is_dir():
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                st = f.stat()
                digest.update(f"{f.relative_to(folder)}:{st.st_size}:{st.st_mtime_ns};".encode())
    return f"{verifier.name}@{digest.hexdigest()[:12]}"


def retrieval_scores(examples: Sequence[EvalExample], embedder: Any) -> list[list[float]]:
    """Cosine(query or response, passage) per passage of each example: the pipeline's own
    scoring (:func:`guardrail.hallucination.retrieval.cosine_scores`), so the published numbers
    use the scores a library user gets."""
    from guardrail.hallucination.retrieval import cosine_scores

    return [
        cosine_scores(embedder, ex.query if ex.query.strip() else ex.response, ex.passages)
        for ex in examples
    ]


def guard_input(example: EvalExample, scores: Sequence[float]) -> dict[str, Any]:
    """The ``Guardrail`` input of an example, its passages carrying the retrieval scores."""
    given = example.meta.get("passage_scores") or []
    passages = []
    for i, text in enumerate(example.passages):
        own = given[i] if i < len(given) else None
        score = own if isinstance(own, int | float) else (scores[i] if i < len(scores) else None)
        passages.append({"text": text, "score": score})
    data: dict[str, Any] = {"query": example.query, "response": example.response}
    data["passages"] = passages
    if example.meta.get("knowledge_base") is not None:
        data["knowledge_base"] = example.meta["knowledge_base"]
    return data


def _ratio_margin(claims: Sequence[ClaimScore], cfg: HallucinationConfig) -> float | None:
    checked = [c for c in claims if c.status != ClaimStatus.UNVERIFIED.value]
    if not checked:
        return None
    contra = sum(c.status == ClaimStatus.CONTRADICTED.value for c in checked) / len(checked)
    unsup = sum(c.status == ClaimStatus.UNSUPPORTED.value for c in checked) / len(checked)
    return max(contra - cfg.contradiction_ratio, unsup - cfg.neutral_ratio)


def result_from_report(
    example: EvalExample, report: GuardReport, cfg: HallucinationConfig
) -> ExampleResult:
    """Prediction and score of one example from its report (see the module docstring)."""
    v = report.verdict
    claims = [
        ClaimScore(
            entailment=c.scores.entailment,
            neutral=c.scores.neutral,
            contradiction=c.scores.contradiction,
            status=c.status.value,
        )
        for c in report.claims
        if c.scores is not None
    ]
    score: float | None = None
    if cfg.policy == "ratio":
        score = _ratio_margin(claims, cfg)
    elif v.nli_score is not None and v.threshold is not None:
        score = v.threshold - v.nli_score
    if v.label is VerdictLabel.NOTHING_TO_CHECK:
        # an answer that states no checkable fact hallucinates nothing: the lowest score
        score = -1.0
    elif v.label is VerdictLabel.UNVERIFIED or score is None:
        score = 1.0 if score is None else max(score, 1e-6)
    delivered = (VerdictLabel.VERIFIED, VerdictLabel.NOTHING_TO_CHECK)
    return ExampleResult(
        id=example.id,
        label=example.label,
        prediction=0 if v.label in delivered else 1,
        score=float(score),
        nli_score=v.nli_score,
        threshold=v.threshold,
        retrieval_score=v.retrieval_score,
        verdict=v.label.value,
        claims=claims,
        error=_error_of(report),
    )


def _error_of(report: GuardReport) -> str | None:
    """Failed stages, else why the verdict is UNVERIFIED, else ``None``."""
    failed = [f"{r.name} failed: {r.reason}" for r in report.stages if r.status.value == "failed"]
    if failed:
        return "; ".join(failed)
    if report.verdict.label is VerdictLabel.UNVERIFIED:
        return report.verdict.reason or "unverified"
    return None


def _progress(items: Sequence[Any], desc: str, enabled: bool) -> Any:
    if not enabled:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, unit="ex")


def run_condition(
    examples: Sequence[EvalExample],
    condition: Condition,
    verifier: Verifier,
    scores: Sequence[Sequence[float]],
    base_config: dict[str, Any] | None = None,
    hallucination: dict[str, Any] | None = None,
    progress: bool = True,
    embedder: Any = None,
) -> list[ExampleResult]:
    """Every example under ``condition`` through the real pipeline (one ``Guardrail``).

    ``embedder``, when given, replaces the config's (e.g. a shared ``CachingEmbedder``).
    """
    from guardrail.pipeline import Guardrail

    config = condition_config(condition, base_config, hallucination)
    guard = Guardrail(config, verifier=verifier)
    if embedder is not None:
        guard.resources.set("embedder", embedder)
    out: list[ExampleResult] = []
    for ex, rs in zip(_progress(examples, condition.name, progress), scores, strict=True):
        try:
            report = guard.invoke(guard_input(ex, rs))
        except GuardrailError as exc:
            logger.warning("%s: %s", ex.id, exc)
            out.append(
                ExampleResult(id=ex.id, label=ex.label, prediction=1, score=1.0, error=str(exc))
            )
            continue
        out.append(result_from_report(ex, report, config.hallucination))
    return out


def _threshold_info(condition: Condition, base: dict[str, Any] | None) -> dict[str, Any]:
    cfg = condition_config(condition, base).hallucination
    info: dict[str, Any] = {"policy": cfg.policy}
    info.update(cfg.threshold.model_dump())
    if cfg.policy == "ratio":
        info["contradiction_ratio"] = cfg.contradiction_ratio
        info["neutral_ratio"] = cfg.neutral_ratio
    return info


def evaluate(
    dataset: str,
    examples: Sequence[EvalExample],
    conditions: Sequence[Condition],
    verifier: Verifier,
    out_dir: Path,
    embedder: Any,
    base_config: dict[str, Any] | None = None,
    run_info: dict[str, Any] | None = None,
    progress: bool = True,
) -> list[ConditionMetrics]:
    """Run ``conditions`` over ``examples`` and write ``out_dir/<dataset>/<condition>/``.

    ``verifier`` should be a :class:`~guardrail.evaluation.cache.CachingVerifier` so the
    conditions share one verifier pass. Returns the metrics of each condition.
    """
    import time

    from guardrail.embedding_cache import CachingEmbedder

    folder = out_dir / dataset.replace("/", "_").replace(":", "_")
    start = time.perf_counter()
    if not isinstance(embedder, CachingEmbedder):
        embedder = CachingEmbedder(embedder)  # conditions share claim / window vectors
    scores = retrieval_scores(examples, embedder)
    has_kb = any(ex.meta.get("knowledge_base") is not None for ex in examples)
    summary: list[ConditionMetrics] = []
    for cond in conditions:
        info = ConditionMetrics(
            dataset=dataset,
            condition=cond.name,
            description=cond.description,
            threshold=_threshold_info(cond, base_config),
        )
        t0 = time.perf_counter()
        results: list[ExampleResult] = []
        if cond.needs_knowledge_base and not has_kb:
            info = info.model_copy(
                update={
                    "applicable": False,
                    "reason": f"{dataset} has no knowledge base: the fact stage has nothing to "
                    "check (the other conditions cover its evidence)",
                }
            )
        else:
            results = run_condition(
                examples, cond, verifier, scores, base_config, None, progress, embedder
            )
        info = info.model_copy(update={"seconds": round(time.perf_counter() - t0, 3)})
        info = write_condition(folder / cond.name, results, info)
        if info.metrics is not None:
            m = info.metrics
            logger.info(
                "%s/%s: balanced accuracy %.3f, F1 %.3f, AUROC %s",
                dataset, cond.name, m.balanced_accuracy, m.f1,
                f"{m.auroc:.3f}" if m.auroc is not None else "n/a",
            )  # fmt: skip
        summary.append(info)
    write_json(
        folder / "run.json",
        {
            **(run_info or {}),
            "dataset": dataset,
            "examples": len(examples),
            "labels": {"hallucinated": sum(e.label for e in examples),
                       "faithful": sum(1 - e.label for e in examples)},
            "conditions": [c.name for c in conditions],
            "retrieval_score": "cosine(query or response, passage), all-MiniLM-L6-v2 embedder",
            "seconds": round(time.perf_counter() - start, 3),
        },
    )  # fmt: skip
    return summary
