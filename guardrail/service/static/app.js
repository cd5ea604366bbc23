// guardrail's page: Verify (check an answer, see why) and Explore (stored reports).
// Plain DOM, no build step. Every value from the server is written with textContent.
"use strict";

const BANDS = [
  ["human_review", "human review"],
  ["regenerate", "regenerate"],
  ["correct_and_deliver", "correct"],
  ["accept_with_flags", "flags"],
  ["accept", "accept"],
];
const BAND_COLOR = {
  accept: "#1a7f4b", accept_with_flags: "#6a9a1f", correct_and_deliver: "#c28a00",
  regenerate: "#d0621b", human_review: "#b42318",
};
const BAND_LABEL = Object.fromEntries(BANDS);
const $ = (id) => document.getElementById(id);
const state = { thresholds: null, report: null, page: { offset: 0, limit: 20, next: null } };

function el(tag, attrs = {}, text = null) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== null) node.textContent = text;
  return node;
}

function svg(tag, attrs = {}, text = null) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== null) node.textContent = text;
  return node;
}

function showError(message) {
  const box = $("error");
  box.textContent = message || "";
  box.hidden = !message;
}

// --- API -------------------------------------------------------------------------------------

async function api(path, options = {}) {
  const headers = { "content-type": "application/json", ...(options.headers || {}) };
  const token = sessionStorage.getItem("guardrail-token");
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(path, { ...options, headers });
  if (response.status === 401) {
    $("token-form").hidden = false;
    throw new Error("This server needs an API token: enter it at the top right.");
  }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const detail = Array.isArray(body.detail)
      ? body.detail.map((d) => `${(d.loc || []).join(".")}: ${d.msg}`).join("; ")
      : body.detail || response.statusText;
    throw new Error(`${response.status}: ${detail}`);
  }
  return { body, headers: response.headers };
}

async function thresholds() {
  if (!state.thresholds) state.thresholds = (await api("/v1/thresholds")).body;
  return state.thresholds;
}

// --- Verify ----------------------------------------------------------------------------------

function readForm() {
  const score = $("retrieval-score").value.trim();
  const passages = $("passages").value.split(/\n\s*\n/).map((t) => t.trim()).filter(Boolean)
    .map((text) => (score === "" ? { text } : { text, score: Number(score) }));
  const body = { query: $("query").value, response: $("response").value, passages };
  const session = $("session-id").value.trim();
  if (session) body.session_id = session;
  return body;
}

function fillForm(input) {
  $("query").value = input.query || "";
  $("response").value = input.response || "";
  const passages = input.passages || [];
  $("passages").value = passages.map((p) => p.text).join("\n\n");
  const scores = passages.map((p) => p.score).filter((s) => s !== null && s !== undefined);
  $("retrieval-score").value = scores.length ? Math.max(...scores) : "";
  $("session-id").value = input.session_id || "web";
}

// An error leaves no earlier result on screen: what is shown always belongs to the last request.
function clearResult(stateName) {
  state.report = null;
  const result = $("result");
  result.hidden = true;
  result.dataset.state = stateName;
  for (const id of ["verdict-reason", "action", "action-detail", "band-override", "delivered-text",
    "delivered-status", "rs-value", "threshold-note"]) $(id).textContent = "";
  for (const id of ["bands", "answer", "delivered", "claims", "timings", "threshold-plot"]) {
    $(id).replaceChildren();
  }
  $("delivered").classList.remove("withheld");
  $("band-override").hidden = true;
  $("verdict-stamp").textContent = "–";
  $("verdict-stamp").className = "stamp";
  $("gauge-text").textContent = "–";
}

async function submitCheck(event) {
  event.preventDefault();
  showError("");
  const button = $("check-button");
  button.disabled = true;
  $("result").dataset.state = "loading";
  try {
    const { body } = await api("/v1/check", { method: "POST", body: JSON.stringify(readForm()) });
    await renderReport(body);
    loadStoredTurns();
  } catch (err) {
    clearResult("error");
    showError(err.message);
  } finally {
    button.disabled = false;
  }
}

async function renderReport(report) {
  state.report = report;
  const t = await thresholds();
  $("result").hidden = false;
  renderGauge(report.confidence, report.recommendation.action);
  const verdict = report.verdict || {};
  const stamp = $("verdict-stamp");
  stamp.textContent = verdict.label || "UNVERIFIED";
  stamp.className = `stamp stamp-${verdict.label || "UNVERIFIED"}`;
  $("verdict-reason").textContent = verdict.reason || "";
  renderBands(report, t.bands);
  renderText($("answer"), report.original, spansOf(report));
  renderDelivered(report);
  renderClaims($("claims"), report);
  renderTimings(report.stages || [], report.timings_ms || {});
  renderThreshold(t, verdict);
  $("result").dataset.state = "done";
}

function renderGauge(confidence, action) {
  const circle = $("gauge-value");
  const length = 2 * Math.PI * 58;
  circle.setAttribute("stroke-dasharray", length.toFixed(2));
  circle.setAttribute("stroke-dashoffset", (length * (1 - Math.max(0, Math.min(1, confidence)))).toFixed(2));
  circle.setAttribute("stroke", BAND_COLOR[action] || "#667085");
  $("gauge-text").textContent = `${Math.round(confidence * 100)}%`;
}

function renderBands(report, bands) {
  const lower = { human_review: 0, regenerate: bands.regenerate, correct_and_deliver: bands.correct,
    accept_with_flags: bands.flag, accept: bands.accept };
  const box = $("bands");
  box.replaceChildren();
  BANDS.forEach(([action, label], i) => {
    const upper = i + 1 < BANDS.length ? lower[BANDS[i + 1][0]] : 1;
    const part = el("div", { class: `band band-${action}`, "data-action": action,
      title: `${label}: confidence ${lower[action].toFixed(2)}–${upper.toFixed(2)}` }, label);
    part.style.width = `${Math.max(0, upper - lower[action]) * 100}%`;
    if (report.recommendation.action === action) part.classList.add("active");
    box.appendChild(part);
  });
  const rec = report.recommendation;
  // The band the confidence alone falls in (report.decision.band); when the decision chose
  // another action, say so and why, next to the marker that sits in that band.
  const decision = report.decision || {};
  const band = decision.band && decision.band !== rec.action ? decision.band : null;
  const marker = el("div", { class: "band-marker", id: "band-marker",
    title: `confidence ${report.confidence.toFixed(3)}` + (band ? ` (${BAND_LABEL[band] || band} band)` : "") });
  marker.style.left = `calc(${Math.max(0, Math.min(1, report.confidence)) * 100}% - 1px)`;
  box.appendChild(marker);
  const note = $("band-override");
  if (band) {
    const part = box.querySelector(`.band[data-action="${band}"]`);
    if (part) part.classList.add("confidence-band");
    const why = decision.gate || decision.overrides_band || "";
    note.textContent = `Decision overrides the band: confidence ${report.confidence.toFixed(3)} is in ` +
      `the ${BAND_LABEL[band] || band} band, but the action is ${rec.action.replaceAll("_", " ")}` +
      (why ? ` — ${why}.` : ".");
  } else {
    note.textContent = "";
  }
  note.hidden = !band;
  $("action").textContent = rec.action.replaceAll("_", " ");
  $("action-detail").textContent = rec.guidance || rec.reason || (rec.action === "accept"
    ? "Deliver the answer as it is." : rec.action === "accept_with_flags"
      ? "Deliver the annotated answer." : "Deliver the corrected answer.");
}

function spansOf(report) {
  const spans = [];
  for (const f of report.hallucination_flags || []) {
    const reason = `${f.type.replaceAll("_", " ")} (${Math.round(f.confidence * 100)}%)` +
      (f.explanation ? `: ${f.explanation}` : "") + (f.suggestion ? ` — ${f.suggestion}` : "");
    spans.push({ start: f.span.start, end: f.span.end, reason, kind: "flag", severity: f.severity });
  }
  for (const i of (report.coherence && report.coherence.issues) || []) {
    if (i.span) spans.push({ start: i.span.start, end: i.span.end, kind: "issue",
      reason: `${i.type.replaceAll("_", " ")}: ${i.description}`, severity: i.severity });
  }
  return spans.filter((s) => s.end > s.start);
}

// Spans are code-point offsets (Python): slice an array of code points, not UTF-16 units.
function renderText(node, text, spans) {
  const chars = Array.from(text || "");
  const cuts = new Set([0, chars.length]);
  for (const s of spans) { cuts.add(Math.min(s.start, chars.length)); cuts.add(Math.min(s.end, chars.length)); }
  const points = [...cuts].sort((a, b) => a - b);
  node.replaceChildren();
  for (let i = 0; i + 1 < points.length; i++) {
    const [a, b] = [points[i], points[i + 1]];
    const piece = chars.slice(a, b).join("");
    const covering = spans.filter((s) => s.start <= a && s.end >= b);
    if (!covering.length) { node.appendChild(document.createTextNode(piece)); continue; }
    const flags = covering.filter((s) => s.kind === "flag");
    const severity = Math.max(...covering.map((s) => s.severity || 0));
    const cls = flags.length ? `flag ${severity < 0.7 ? "sev-low" : "sev-high"}` : "issue";
    const reasons = covering.map((s) => s.reason).join("\n");
    node.appendChild(el("mark", { class: cls, title: reasons, "data-reasons": reasons }, piece));
  }
}

// --- what is delivered: each claim as the report decided it ----------------------------------

const OUTCOME_LABEL = {
  supported: "supported", uncertain: "uncertain", unverified: "unverified", repaired: "repaired",
  removed: "removed", not_checkworthy: "not checkworthy", withheld: "withheld",
};
const FLAGGED = new Set(["uncertain", "unverified"]);

// The text the user is shown for this action: the report's own delivered_text (null: none).
function deliveredText(report) {
  return report.delivered_text ?? null;
}

const WORD = /[\p{L}\p{N}]/u;

// Where the correction stage inserted an annotation for `span` (guardrail/correction/annotate.py):
// after the word the span ends in, before its closing punctuation.
function notePosition(chars, span) {
  let end = Math.min(span.end, chars.length);
  while (end > 0 && end < chars.length && WORD.test(chars[end - 1]) && WORD.test(chars[end])) end++;
  while (end > span.start && ".,;:!? ".includes(chars[end - 1])) end--;
  return end;
}

const overlaps = (a, b) => a.start < b.end && b.start < a.end;
const sliceOf = (chars, span) => chars.slice(span.start, span.end).join("");

function editTitle(c) {
  const parts = [c.message || c.type];
  if (c.source) parts.push(`source: ${c.source}`);
  if (c.verified === true) parts.push("re-checked: supported");
  if (c.verified === false) parts.push("re-checked: not supported");
  return parts.join(" — ");
}

// The original answer marked the way the report delivers it: removed text struck through
// (<del class="removed">), repaired values old → new (<del class="old"><ins class="new">),
// uncertain / unverified claims highlighted with their note, supported claims plain. Without
// the <del> elements the text reads exactly as the annotated (delivered) text.
function renderDelivered(report) {
  const node = $("delivered");
  const chars = Array.from(report.original || "");
  const corrections = (report.corrections || []).filter((c) => c.span && c.span.end >= c.span.start);
  const edits = [];
  for (const c of corrections.filter((x) => x.type !== "annotation")
    .sort((a, b) => a.span.start - b.span.start || a.span.end - b.span.end)) {
    const last = edits[edits.length - 1];
    if (!last || c.span.start >= last.span.end) edits.push(c);  // the report's never overlap
  }
  const notes = corrections.filter((c) => c.type === "annotation")
    .map((c) => ({ pos: notePosition(chars, c.span), text: c.replacement, title: c.message || "" }))
    .filter((n) => !edits.some((e) => e.span.start < n.pos && n.pos < e.span.end));
  const marks = (report.claims || []).filter((c) => c.span && FLAGGED.has(c.outcome));
  const emitted = new Set();
  node.replaceChildren();
  const notesAt = (pos) => {
    notes.forEach((n, i) => {
      if (n.pos !== pos || emitted.has(i)) return;
      emitted.add(i);
      node.appendChild(document.createTextNode(" "));
      node.appendChild(el("span", { class: "note", title: n.title }, n.text));
    });
  };
  const plain = (a, b) => {
    const cuts = new Set([a, b]);
    for (const m of marks) for (const x of [m.span.start, m.span.end]) if (x > a && x < b) cuts.add(x);
    for (const n of notes) if (n.pos > a && n.pos < b) cuts.add(n.pos);
    const points = [...cuts].sort((x, y) => x - y);
    for (let i = 0; i + 1 < points.length; i++) {
      const [x, y] = [points[i], points[i + 1]];
      notesAt(x);
      const piece = chars.slice(x, y).join("");
      const claim = marks.find((m) => m.span.start <= x && m.span.end >= y);
      if (!claim) { node.appendChild(document.createTextNode(piece)); continue; }
      const p = claim.p_supported == null ? "" : ` (p(supported) ${claim.p_supported.toFixed(2)})`;
      node.appendChild(el("mark", { class: `outcome outcome-${claim.outcome}`,
        title: `${OUTCOME_LABEL[claim.outcome]}${p}` + (claim.reason ? `: ${claim.reason}` : "") }, piece));
    }
  };
  let pos = 0;
  for (const e of edits) {
    plain(pos, Math.max(pos, e.span.start));
    notesAt(e.span.start);
    const old = sliceOf(chars, e.span);
    if (e.type === "removal") {
      node.appendChild(el("del", { class: "removed", title: editTitle(e),
        "data-reason": (e.message || "").replace(/^removed: /, "") }, old));
    } else {
      const repair = el("span", { class: `repair repair-${e.type}`, title: editTitle(e) });
      if (old) repair.appendChild(el("del", { class: "old" }, old));
      repair.appendChild(el("ins", { class: "new" }, e.replacement));
      node.appendChild(repair);
    }
    pos = Math.max(pos, e.span.end);
  }
  plain(pos, chars.length);
  notesAt(chars.length);

  const action = report.recommendation.action;
  const text = deliveredText(report);
  node.classList.toggle("withheld", text === null);
  $("delivered-status").textContent = text === null
    ? `(nothing delivered: ${action.replaceAll("_", " ")}; the marks show what the checks found)`
    : `(what the user is shown: ${action.replaceAll("_", " ")})`;
  $("delivered-text").textContent = text === null
    ? `nothing delivered (${action})`
    : text.trim() ? text : "(nothing left: every claim was removed)";
}

// One row per claim: its outcome, p(supported), the text, and what was done with it.
function renderClaims(table, report) {
  table.replaceChildren();
  const claims = report.claims || [];
  if (!claims.length) {
    table.appendChild(el("caption", { class: "muted" }, "No claims were checked."));
    return;
  }
  const head = el("tr");
  for (const h of ["outcome", "p(supported)", "claim", "what was done"]) head.appendChild(el("th", {}, h));
  table.appendChild(el("thead")).appendChild(head);
  const body = table.appendChild(el("tbody"));
  for (const c of claims) {
    const outcome = c.outcome || "none";
    const tr = el("tr", { "data-outcome": outcome, title: `status: ${c.status}` });
    const cell = el("td");
    cell.appendChild(el("span", { class: `outcome-pill outcome-${outcome}` }, OUTCOME_LABEL[outcome] || outcome));
    tr.appendChild(cell);
    tr.appendChild(el("td", { class: "num" }, c.p_supported == null ? "–" : c.p_supported.toFixed(3)));
    tr.appendChild(el("td", {}, c.text));
    const mine = (report.corrections || []).filter((x) => x.span && overlaps(x.span, c.span));
    const done = [];
    for (const x of mine) {
      if (x.type === "removal") done.push(x.message || "removed");
      else if (x.type === "annotation") done.push(x.replacement);
      else done.push(`${x.original} → ${x.replacement}` + (x.source ? ` (${x.source})` : ""));
    }
    if (!done.length && c.reason) done.push(c.reason);
    tr.appendChild(el("td", { class: "muted" }, done.join("; ")));
    body.appendChild(tr);
  }
}

function renderTimings(stages, timings) {
  const table = $("timings");
  table.replaceChildren();
  const rows = stages.length ? stages : Object.entries(timings).map(([name, ms]) =>
    ({ name, duration_ms: ms, status: "ran" }));
  const longest = Math.max(1, ...rows.map((r) => r.duration_ms || 0));
  let total = 0;
  for (const r of rows) {
    total += r.duration_ms || 0;
    const tr = el("tr", { title: r.reason || "" });
    tr.appendChild(el("td", {}, r.name));
    const barCell = el("td", { style: "width: 55%" });
    const bar = el("div", { class: "bar" });
    bar.style.width = `${((r.duration_ms || 0) / longest) * 100}%`;
    barCell.appendChild(bar);
    tr.appendChild(barCell);
    tr.appendChild(el("td", {}, `${(r.duration_ms || 0).toFixed(1)} ms`));
    tr.appendChild(el("td", { class: `status-${r.status}` }, r.status));
    table.appendChild(tr);
  }
  const tr = el("tr");
  tr.append(el("td", {}, "total"), el("td"), el("td", {}, `${total.toFixed(1)} ms`), el("td"));
  table.appendChild(tr);
}

// --- threshold panel: T(rs) as served by /v1/thresholds (the JS never recomputes it) -------

const PLOT = { x0: 34, y0: 170, w: 270, h: 150 };
const px = (rs) => PLOT.x0 + rs * PLOT.w;
const py = (v) => PLOT.y0 - v * PLOT.h;

function thresholdAt(curve, rs) {
  const x = Math.max(curve[0].rs, Math.min(curve[curve.length - 1].rs, rs));
  for (let i = 0; i + 1 < curve.length; i++) {
    const [a, b] = [curve[i], curve[i + 1]];
    if (x >= a.rs && x <= b.rs) return a.t + ((x - a.rs) / (b.rs - a.rs || 1)) * (b.t - a.t);
  }
  return curve[curve.length - 1].t;
}

function renderThreshold(t, verdict) {
  const plot = $("threshold-plot");
  plot.replaceChildren();
  plot.appendChild(svg("line", { class: "axis", x1: PLOT.x0, y1: PLOT.y0, x2: PLOT.x0 + PLOT.w, y2: PLOT.y0 }));
  plot.appendChild(svg("line", { class: "axis", x1: PLOT.x0, y1: PLOT.y0, x2: PLOT.x0, y2: PLOT.y0 - PLOT.h }));
  for (const v of [0, 0.5, 1]) {
    plot.appendChild(svg("text", { x: px(v) - 6, y: PLOT.y0 + 14 }, v.toFixed(1)));
    plot.appendChild(svg("text", { x: 6, y: py(v) + 3 }, v.toFixed(1)));
  }
  plot.appendChild(svg("text", { x: PLOT.x0 + PLOT.w - 80, y: PLOT.y0 + 26 }, "retrieval score rs"));
  const points = t.curve.map((p) => `${px(p.rs).toFixed(1)},${py(p.t).toFixed(1)}`).join(" ");
  plot.appendChild(svg("polyline", { class: "curve", points, id: "threshold-curve" }));
  plot.appendChild(svg("line", { class: "cursor", id: "rs-cursor", y1: PLOT.y0, y2: PLOT.y0 - PLOT.h }));
  plot.appendChild(svg("circle", { id: "t-dot", r: 4, fill: "#2f5bd3" }));
  if (verdict.threshold != null) {
    const y = py(verdict.threshold);
    plot.appendChild(svg("line", { class: "cursor", id: "used-threshold", x1: PLOT.x0, x2: PLOT.x0 + PLOT.w, y1: y, y2: y }));
    plot.appendChild(svg("text", { x: PLOT.x0 + PLOT.w - 70, y: y - 4 }, `used ${verdict.threshold.toFixed(2)}`));
  }
  plot.appendChild(svg("circle", { id: "nli-dot", r: 5, stroke: "#fff", "stroke-width": 1.5 }));
  // The cursor starts at the retrieval score the check used (verdict.retrieval_score: the
  // passages' own, or the one the server computed for an "auto" field); none was used →
  // T(rs) took its strict end, drawn at rs 0, never at an invented score.
  const slider = $("rs-slider");
  const used = verdict.retrieval_score ?? null;
  const rs = used ?? 0;
  slider.value = rs;
  slider.oninput = () => moveCursor(t, verdict, Number(slider.value), false);
  moveCursor(t, verdict, rs, used === null);
}

function strictEnd(t) {
  const a = t.adaptive || {};
  return a.enabled === false ? a.fixed : a.t_low;
}

function moveCursor(t, verdict, rs, unscored) {
  const threshold = unscored && strictEnd(t) != null ? strictEnd(t) : thresholdAt(t.curve, rs);
  const cursor = $("rs-cursor");
  cursor.setAttribute("x1", px(rs)); cursor.setAttribute("x2", px(rs));
  const dot = $("t-dot");
  dot.setAttribute("cx", px(rs)); dot.setAttribute("cy", py(threshold));
  $("rs-value").textContent = unscored ? `no rs → T ${threshold.toFixed(3)} (strict end)`
    : `rs ${rs.toFixed(2)} → T ${threshold.toFixed(3)}`;
  $("rs-value").dataset.rs = unscored ? "none" : rs.toFixed(2);
  const nli = verdict.nli_score;
  const nliDot = $("nli-dot");
  if (nli === null || nli === undefined) {
    nliDot.setAttribute("visibility", "hidden");
    $("threshold-note").textContent = "No NLI score: nothing was verified against evidence.";
    return;
  }
  const policy = verdict.policy || t.policy;
  const calibrated = policy === "calibrated" && verdict.threshold != null;
  const passes = nli >= (calibrated ? verdict.threshold : threshold);
  nliDot.setAttribute("visibility", "visible");
  nliDot.setAttribute("cx", px(rs)); nliDot.setAttribute("cy", py(nli));
  nliDot.setAttribute("fill", passes ? "#1a7f4b" : "#b42318");
  const at = unscored ? "T with no retrieval score (its strict end)" : `T(${rs.toFixed(2)})`;
  const where = unscored ? "with no retrieval score" : "at this retrieval score";
  let note;
  if (calibrated) {
    // p(supported) is compared with the claim threshold, not with T(rs): say each apart.
    note = `Decided by the calibrated policy: lowest p(supported) ${nli.toFixed(3)} ` +
      `${passes ? "≥" : "<"} claim threshold ${verdict.threshold.toFixed(3)} ` +
      `(dashed line). weakest_link would compare the weakest claim's entailment with ` +
      `${at} = ${threshold.toFixed(3)}.`;
  } else {
    note = `Under weakest_link, score ${nli.toFixed(3)} ${passes ? "≥" : "<"} ${at} = ` +
      `${threshold.toFixed(3)}: ${passes ? "VERIFIED" : "HALLUCINATION"} ${where}.`;
    if (policy !== "weakest_link" && verdict.threshold != null) {
      note = `This report was decided by the ${policy} policy at threshold ` +
        `${verdict.threshold.toFixed(3)} (dashed line). ` + note;
    }
  }
  if (unscored) note += " The check used no retrieval score (the passages had none and none was computed).";
  $("threshold-note").textContent = note;
}

// --- stored turns and Explore ----------------------------------------------------------------

async function loadStoredTurns() {
  try {
    const { body } = await api("/v1/reports?limit=100");
    const select = $("stored-turns");
    select.replaceChildren(el("option", { value: "" }, "— paste a new one below —"));
    for (const item of body.items) {
      const label = `${item.session_id}/${item.turn_id} · ${item.verdict} · ${item.response.slice(0, 50)}`;
      select.appendChild(el("option", { value: `${item.session_id}/${item.turn_id}/${item.attempt}` }, label));
    }
  } catch (err) {
    if (!/404/.test(err.message)) showError(err.message);
  }
}

async function openStored(session, turn, attempt) {
  showError("");
  try {
    const query = attempt ? `?attempt=${encodeURIComponent(attempt)}` : "";
    const { body } = await api(`/v1/reports/${encodeURIComponent(session)}/${encodeURIComponent(turn)}${query}`);
    fillForm(body.input);
    await renderReport(body.report);
  } catch (err) {
    clearResult("error");
    showError(err.message);
  }
}

async function loadReports() {
  const params = new URLSearchParams({ limit: state.page.limit, offset: state.page.offset });
  for (const [key, id] of [["session_id", "filter-session"], ["action", "filter-action"], ["verdict", "filter-verdict"]]) {
    const value = $(id).value.trim();
    if (value) params.set(key, value);
  }
  showError("");
  try {
    const { body } = await api(`/v1/reports?${params}`);
    const tbody = $("reports").querySelector("tbody");
    tbody.replaceChildren();
    for (const item of body.items) {
      const tr = el("tr", { "data-key": `${item.session_id}/${item.turn_id}` });
      tr.appendChild(el("td", {}, item.created_at.replace("T", " ").slice(0, 19)));
      tr.appendChild(el("td", {}, `${item.session_id} / ${item.turn_id}` + (item.attempt > 1 ? ` (#${item.attempt})` : "")));
      const verdict = el("td");
      verdict.appendChild(el("span", { class: `pill pill-${item.verdict}` }, item.verdict));
      tr.appendChild(verdict);
      tr.appendChild(el("td", {}, item.action.replaceAll("_", " ")));
      tr.appendChild(el("td", {}, item.confidence.toFixed(3)));
      tr.appendChild(el("td", {}, item.response.slice(0, 90)));
      tr.onclick = () => { location.hash = `#/report/${encodeURIComponent(item.session_id)}/${item.turn_id}/${item.attempt}`; };
      tbody.appendChild(tr);
    }
    state.page.next = body.next_offset;
    const last = body.offset + body.items.length;
    $("page-info").textContent = body.total ? `${body.offset + 1}–${last} of ${body.total}` : "nothing stored yet";
    $("prev-page").disabled = body.offset === 0;
    $("next-page").disabled = body.next_offset === null;
  } catch (err) {
    showError(err.message);
  }
}

// --- routing ---------------------------------------------------------------------------------

function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const explore = parts[0] === "explore";
  $("verify-view").hidden = explore;
  $("explore-view").hidden = !explore;
  $("nav-verify").classList.toggle("active", !explore);
  $("nav-explore").classList.toggle("active", explore);
  if (explore) loadReports();
  else if (parts[0] === "report" && parts.length >= 3) openStored(parts[1], parts[2], parts[3]);
}

function init() {
  $("check-form").addEventListener("submit", submitCheck);
  $("stored-turns").addEventListener("change", (e) => {
    const [session, turn, attempt] = e.target.value.split("/");
    if (session) location.hash = `#/report/${encodeURIComponent(session)}/${turn}/${attempt}`;
  });
  $("filter-form").addEventListener("submit", (e) => { e.preventDefault(); state.page.offset = 0; loadReports(); });
  $("prev-page").addEventListener("click", () => { state.page.offset = Math.max(0, state.page.offset - state.page.limit); loadReports(); });
  $("next-page").addEventListener("click", () => { if (state.page.next !== null) { state.page.offset = state.page.next; loadReports(); } });
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    sessionStorage.setItem("guardrail-token", $("token").value);
    $("token-form").hidden = true;
    showError("");
    state.thresholds = null;
    loadStoredTurns();
    route();
  });
  window.addEventListener("hashchange", route);
  loadStoredTurns();
  route();
}

document.addEventListener("DOMContentLoaded", init);
