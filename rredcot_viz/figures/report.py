"""One self-contained HTML file of what a page shows, to send to a colleague: no server and no network.

The page carries the Plotly bundle the installed ``plotly`` package ships, inline, once; each figure is a div
with its data; the trace is the app's own heatmap (``trace_html.trace_heatmap``, hover values in CSS
tooltips, same colour rule), the table and the settings are escaped HTML. Every piece of trace text is
escaped (by the heatmap builder, ``pandas.DataFrame.to_html`` and ``html.escape`` here); Plotly's figure JSON
escapes ``<`` itself, so a trace cannot close a script.

    html = analysis_report(result, model_info, settings)    # Inspect
    html = comparison_report(comparison, model_info, settings)
    html = diagnosis_report(trace, segments, verdicts, estimate, model_info, settings)
    html = run_report(label, groups, steps, settings)
"""

from __future__ import annotations

import datetime as dt
import html
import math
from collections.abc import Mapping, Sequence
from itertools import count
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from rredcot_viz.diagnosis import FirstError
from rredcot_viz.engine import AnalysisResult
from rredcot_viz.estimators.coupling import uniform_credit
from rredcot_viz.figures.colors import APP_COLOURS, shade_scale
from rredcot_viz.figures.plots import credit_bars, method_heatmap, value_curves
from rredcot_viz.figures.runs import prompt_groups_html, run_step_figure
from rredcot_viz.figures.trace_html import trace_heatmap
from rredcot_viz.segmenters import Segment
from rredcot_viz.traces.trace import Trace
from rredcot_viz.workflows.compare import Comparison
from rredcot_viz.workflows.rollout_groups import RolloutGroup

Section = tuple[str, str]  # (heading, HTML body that is already safe)
PAGE_STYLE = """<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1200px;padding:0 16px;
color:#222}
h1{font-size:1.5rem;margin-bottom:4px}h2{font-size:1.1rem;margin-top:28px;border-bottom:1px solid #ddd}
.rc-meta{color:#555;font-size:.85rem}
table.rc-table{border-collapse:collapse;font-size:.8rem}
table.rc-table td,table.rc-table th{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
dl.rc-facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;font-size:.85rem}
dl.rc-facts dt{font-weight:600}dl.rc-facts dd{margin:0;font-family:ui-monospace,monospace;word-break:break-all}
footer{margin-top:32px;color:#777;font-size:.75rem}
</style>"""
_ids = count(1)
QUANTITIES = {"sigma": "σ", "Q_hat": "Q̂", "R_hat": "R̂", "v_hat": "v̂"}  # what a heatmap's legend names


def report_page(title: str, sections: Sequence[Section], facts: Mapping[str, Any], created: dt.datetime) -> str:
    """The whole file: title, the facts line (model, date), the sections, and the Plotly bundle when a section
    holds a figure."""
    from plotly.offline import get_plotlyjs

    body = "".join(f"<section><h2>{html.escape(heading)}</h2>{content}</section>" for heading, content in sections)
    bundle = f"<script>{get_plotlyjs()}</script>" if 'class="rc-plot"' in body else ""
    stamp = created.isoformat(timespec="seconds")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline' "
        "'unsafe-eval'; style-src 'unsafe-inline'; img-src data:; font-src data:\">"
        f"<title>{html.escape(title)}</title>{PAGE_STYLE}{bundle}</head><body>"
        f'<h1>{html.escape(title)}</h1><p class="rc-meta">{_facts_line(facts)} · created {stamp}</p>'
        f"{body}<footer>RREDCoT Explorer report, created {stamp}. A self-contained file: it loads nothing from any "
        "server.</footer></body></html>"
    )


def _facts_line(facts: Mapping[str, Any]) -> str:
    return " · ".join(f"{html.escape(str(k))}: {html.escape(_text(v))}" for k, v in facts.items() if v is not None)


def report_template() -> go.layout.Template:
    """Plotly's white template with the app's colours. A figure built in the app process carries Streamlit's
    template, whose colours are placeholders (``#000001``...) that only Streamlit's page replaces, so a report
    never keeps the template a figure was built with."""
    template = go.layout.Template(pio.templates["plotly_white"])
    template.layout.colorway = APP_COLOURS
    return template


def figure_block(figure: go.Figure) -> str:
    """A Plotly figure as a div and its data, on the report's template (the bundle is loaded once by
    ``report_page``)."""
    themed = go.Figure(figure).update_layout(template=report_template())
    div = pio.to_html(themed, full_html=False, include_plotlyjs=False, div_id=f"rc-plot-{next(_ids)}")
    return f'<div class="rc-plot">{div}</div>'


def table_block(frame: pd.DataFrame) -> str:
    """A table, every cell escaped."""
    return frame.to_html(index=False, escape=True, classes="rc-table", border=0, na_rep="", float_format=_number)


def facts_block(facts: Mapping[str, Any]) -> str:
    """Settings or model facts as a definition list, escaped."""
    rows = "".join(
        f"<dt>{html.escape(str(k))}</dt><dd>{html.escape(_text(v))}</dd>" for k, v in facts.items() if v is not None
    )
    return f'<dl class="rc-facts">{rows}</dl>'


def _text(value: Any) -> str:
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_text(v)}" for k, v in value.items())
    return str(value)


def _number(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:.4g}"


def model_facts(model: Mapping[str, Any]) -> dict[str, Any]:
    """What identifies a model in a report: its name, fingerprint and precision."""
    keys = ("name", "fingerprint", "dtype", "quantization", "device")
    return {f"model {k}" if k != "name" else "model": model.get(k) for k in keys if model.get(k) is not None}


def _question(trace: Trace) -> str:
    answer = f"trace answer: {trace.answer} · reference answer: {trace.reference_answer} · outcome R: {trace.outcome}"
    return f'<p><b>Question.</b> {html.escape(trace.question)}</p><p class="rc-meta">{html.escape(answer)}</p>'


def _trace_facts(trace: Trace) -> dict[str, Any]:
    return {"trace": trace.trace_id or trace.short_id, "trace hash": trace.content_hash, "source": trace.source}


def _now(created: dt.datetime | None) -> dt.datetime:
    return created or dt.datetime.now(dt.UTC).astimezone()


# ---------------------------------------------------------------------------------------------- pages
def analysis_report(
    result: AnalysisResult,
    model: Mapping[str, Any],
    settings: Mapping[str, Any],
    shade: str = "sigma",
    created: dt.datetime | None = None,
    relative: bool = False,
) -> str:
    """Inspect's view of one trace: the heatmap (shaded by ``shade``, on the page's absolute or ``relative``
    scale), the value curves, sigma next to GRPO's uniform credit, the segment table, the settings and the
    model."""
    trace, segments = result.trace, result.segmentation.segments
    states = {"Q_hat": result.values.values}
    states.update({k: v for k, v in result.values.components.items() if k in ("R_hat", "v_hat")})
    scores = result.sigma if shade == "sigma" else states[shade][: result.k]
    tips = [
        {**{n: float(v[s.index]) for n, v in states.items()}, "sigma": float(result.sigma[s.index])} for s in segments
    ]
    answer = trace.cot[segments[-1].char_span[1] :]
    kind = "diverging" if shade == "sigma" else "sequential"
    scale = shade_scale(scores, kind, relative=relative, quantity=QUANTITIES.get(shade, shade))
    heatmap = trace_heatmap([s.text for s in segments], scores, tips, scale=scale, answer_text=answer)
    summary = (
        f"K = {result.k} segments · shaded by {shade} · Σσ = {result.sigma.sum():+.4f} · outcome R = "
        f"{result.outcome:g} · variant {result.variant}. Hover a segment for its values."
    )
    sections = [
        ("Trace", _question(trace) + heatmap + f'<p class="rc-meta">{html.escape(summary)}</p>'),
        ("Value curves", figure_block(value_curves(states, title="Values at the states s1 … sK+1"))),
        (
            "Credit per segment",
            figure_block(
                credit_bars(
                    {"σ": result.sigma, "GRPO: R / K": uniform_credit(result.outcome, result.k)},
                    title="Credit per segment: redistribution vs what GRPO gives",
                )
            ),
        ),
        ("Segments", table_block(pd.DataFrame(result.rows(preview=10_000)))),
        ("Settings", facts_block({**_trace_facts(trace), **settings})),
        ("Model", facts_block(model_facts(model))),
    ]
    facts = {"model": model.get("name"), "fingerprint": str(model.get("fingerprint", ""))[:12] or None}
    return report_page(f"Inspect · {trace.trace_id or trace.short_id}", sections, facts, _now(created))


def comparison_report(
    comparison: Comparison,
    model: Mapping[str, Any],
    settings: Mapping[str, Any],
    metric: str = "spearman",
    created: dt.datetime | None = None,
    relative: bool = False,
) -> str:
    """Compare's view: the trace shaded by the first estimator's sigma (every method's score in the hover),
    the methods x segments heatmap (on the page's absolute or ``relative`` scale, titled as on the page), the
    value curves, the per-segment table, the settings and the model."""
    trace, segments = comparison.trace, comparison.segmentation.segments
    scores = comparison.scores()
    first = next((r for r in comparison.methods.values() if r.kind == "estimator"), None)
    shade_name = first.name if first else next(iter(scores))
    tips = [{name: float(values[s.index]) for name, values in scores.items()} for s in segments]
    answer = trace.cot[segments[-1].char_span[1] :]
    scale = shade_scale(scores[shade_name], "diverging", relative=relative)
    heatmap = trace_heatmap([s.text for s in segments], scores[shade_name], tips, scale=scale, answer_text=answer)
    names, matrix = comparison.matrix(metric)
    agreement = pd.DataFrame(matrix, columns=names).assign(method=names)[["method", *names]]
    curves = {n: r.values for n, r in comparison.methods.items() if r.values is not None}
    sections = [
        ("Trace", _question(trace) + heatmap + f'<p class="rc-meta">Shaded by {html.escape(shade_name)}.</p>'),
        ("Methods × segments", figure_block(method_heatmap(scores, relative=relative))),
        (f"Agreement ({metric})", table_block(agreement)),
    ]
    if curves:
        sections.append(("Value curves", figure_block(value_curves(curves, title="Value curves"))))
    sections += [
        ("Segments", table_block(pd.DataFrame(comparison.rows(10_000)))),
        ("Settings", facts_block({**_trace_facts(trace), **settings})),
        ("Model", facts_block(model_facts(model))),
    ]
    facts = {"model": model.get("name"), "fingerprint": str(model.get("fingerprint", ""))[:12] or None}
    return report_page(f"Compare · {trace.trace_id or trace.short_id}", sections, facts, _now(created))


def diagnosis_report(
    trace: Trace,
    segments: Sequence[Segment],
    verdicts: Mapping[str, FirstError],
    estimate: AnalysisResult | None,
    model: Mapping[str, Any],
    settings: Mapping[str, Any],
    created: dt.datetime | None = None,
) -> str:
    """Diagnose's view: the trace shaded by how many detectors flag each segment (every score in the hover),
    the value curve, the verdict table, the settings and the model."""
    flags = [sum(v.prediction == s.index for v in verdicts.values()) for s in segments]
    tips = [
        {
            **{f"{n} score": float(v.scores[s.index]) for n, v in verdicts.items()},
            **({"sigma": float(estimate.sigma[s.index])} if estimate else {}),
            "detectors flagging": float(flags[s.index]),
        }
        for s in segments
    ]
    answer = trace.cot[segments[-1].char_span[1] :] if segments else ""
    heatmap = trace_heatmap([s.text for s in segments], flags, tips, scale="sequential", answer_text=answer)
    rows = [
        {"detector": n, "first error (segment)": str(v.segment or "none"), "abstained": v.abstained}
        for n, v in verdicts.items()
    ]
    if trace.first_error is not None:
        labelled = str(trace.first_error + 1) if trace.first_error >= 0 else "none"
        rows.append({"detector": "label", "first error (segment)": labelled, "abstained": False})
    sections = [
        ("Trace", _question(trace) + heatmap + '<p class="rc-meta">Darker = flagged by more detectors.</p>'),
        ("Verdicts", table_block(pd.DataFrame(rows))),
    ]
    if estimate is not None:
        curve = {f"Q̂ ({estimate.values.estimator})": estimate.values.values}
        sections.append(("Value curve", figure_block(value_curves(curve, title="Value along the trace"))))
    sections += [
        ("Settings", facts_block({**_trace_facts(trace), **settings})),
        ("Model", facts_block(model_facts(model))),
    ]
    facts = {"model": model.get("name"), "fingerprint": str(model.get("fingerprint", ""))[:12] or None}
    return report_page(f"Diagnose · {trace.trace_id or trace.short_id}", sections, facts, _now(created))


def run_report(
    label: str,
    groups: Sequence[RolloutGroup],
    steps: pd.DataFrame,
    settings: Mapping[str, Any],
    shown: Sequence[RolloutGroup] = (),
    created: dt.datetime | None = None,
) -> str:
    """An RL run: reward and credit per step, the groups where RREDCoT and GRPO disagree most (or ``shown``),
    their rollouts side by side, and the settings."""
    from rredcot_viz.workflows.runs import disagreeing_groups, groups_frame

    chosen = list(shown) or disagreeing_groups(list(groups), 3) or list(groups)[:3]
    sections = [
        ("Reward and credit per step", figure_block(run_step_figure(steps)) + table_block(steps)),
        ("Groups where RREDCoT and GRPO disagree most", table_block(groups_frame(disagreeing_groups(list(groups))))),
        ("Rollouts", prompt_groups_html(chosen)),
        ("Settings", facts_block({"run": label, **settings})),
    ]
    return report_page(f"RL run · {label}", sections, {"run": label}, _now(created))
