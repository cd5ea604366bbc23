"""Prometheus metrics of the service, written in the text exposition format (version 0.0.4).

One :class:`Metrics` object per app (no module state); every update takes its lock, so worker
threads and the event loop may both record.

Exposed::

    guardrail_http_requests_total{method, route, status}       counter
    guardrail_http_request_duration_seconds{route}              histogram
    guardrail_checks_total{action}                              counter
    guardrail_verdicts_total{verdict}                           counter
    guardrail_check_duration_seconds                            histogram (the pipeline alone)
    guardrail_checks_in_progress                                gauge
    guardrail_store_writes_total{outcome}                       counter
    guardrail_ready                                             gauge (1 once models are loaded)
"""

from __future__ import annotations

import bisect
import threading
from collections import defaultdict

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: Bucket upper bounds in seconds: checks take from milliseconds to tens of seconds.
BUCKETS: tuple[float, ...] = (
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
)

Labels = tuple[tuple[str, str], ...]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: Labels, extra: tuple[str, str] | None = None) -> str:
    items = [*labels, extra] if extra else list(labels)
    if not items:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in items) + "}"


def _num(value: float) -> str:
    if value == float("inf"):
        return "+Inf"
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


class _Histogram:
    def __init__(self) -> None:
        self.counts = [0] * len(BUCKETS)
        self.total = 0
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        index = bisect.bisect_left(BUCKETS, seconds)
        if index < len(BUCKETS):
            self.counts[index] += 1
        self.total += 1
        self.sum += seconds

    def lines(self, name: str, labels: Labels) -> list[str]:
        out = []
        running = 0
        for bound, count in zip(BUCKETS, self.counts, strict=True):
            running += count
            out.append(f"{name}_bucket{_labels(labels, ('le', _num(bound)))} {running}")
        out.append(f"{name}_bucket{_labels(labels, ('le', '+Inf'))} {self.total}")
        out.append(f"{name}_sum{_labels(labels)} {_num(round(self.sum, 6))}")
        out.append(f"{name}_count{_labels(labels)} {self.total}")
        return out


class Metrics:
    """Counters, gauges and histograms of one service instance."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: dict[str, dict[Labels, float]] = defaultdict(lambda: defaultdict(float))
        self._histograms: dict[str, dict[Labels, _Histogram]] = defaultdict(dict)
        self._gauges: dict[str, float] = {
            "guardrail_checks_in_progress": 0.0,
            "guardrail_ready": 0.0,
            "guardrail_checks_held": 0.0,
        }

    def inc(self, name: str, amount: float = 1.0, **labels: str) -> None:
        with self._lock:
            self._counters[name][tuple(sorted(labels.items()))] += amount

    def observe(self, name: str, seconds: float, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        with self._lock:
            hist = self._histograms[name].get(key)
            if hist is None:
                hist = self._histograms[name][key] = _Histogram()
            hist.observe(seconds)

    def set_gauge(self, name: str, value: float) -> None:
        with self._lock:
            self._gauges[name] = value

    def add_gauge(self, name: str, amount: float) -> None:
        with self._lock:
            self._gauges[name] = self._gauges.get(name, 0.0) + amount

    def record_request(self, method: str, route: str, status: int, seconds: float) -> None:
        """One HTTP request (``route`` is the route template, so labels stay bounded)."""
        self.inc("guardrail_http_requests_total", method=method, route=route, status=str(status))
        self.observe("guardrail_http_request_duration_seconds", seconds, route=route)

    def record_check(self, action: str, verdict: str, seconds: float) -> None:
        """One finished check: its recommended action, its verdict and the pipeline time."""
        self.inc("guardrail_checks_total", action=action)
        self.inc("guardrail_verdicts_total", verdict=verdict)
        self.observe("guardrail_check_duration_seconds", seconds)

    def render(self) -> str:
        """All metrics in the Prometheus text format."""
        help_text = {
            "guardrail_http_requests_total": ("counter", "HTTP requests by route and status."),
            "guardrail_http_request_duration_seconds": ("histogram", "HTTP request latency."),
            "guardrail_checks_total": ("counter", "Finished checks by recommended action."),
            "guardrail_verdicts_total": ("counter", "Finished checks by verdict."),
            "guardrail_check_duration_seconds": ("histogram", "Guardrail pipeline time per check."),
            "guardrail_store_writes_total": ("counter", "Reports written to the store by outcome."),
            "guardrail_checks_in_progress": ("gauge", "Checks running now."),
            "guardrail_ready": ("gauge", "1 once the models are loaded."),
            "guardrail_checks_held": ("gauge", "Check requests running or waiting now."),
            "guardrail_checks_refused_total": ("counter", "Check requests refused with 503."),
        }
        lines: list[str] = []
        with self._lock:
            for name, (kind, text) in help_text.items():
                lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
                if kind == "counter":
                    for labels, value in sorted(self._counters.get(name, {}).items()):
                        lines.append(f"{name}{_labels(labels)} {_num(value)}")
                elif kind == "histogram":
                    for labels, hist in sorted(self._histograms.get(name, {}).items()):
                        lines += hist.lines(name, labels)
                else:
                    lines.append(f"{name} {_num(self._gauges.get(name, 0.0))}")
        return "\n".join(lines) + "\n"
