"""One call from a notebook: load a model once, analyse a trace, look at it.

    import rredcot_viz
    analysis = rredcot_viz.analyze("Tom has 3 boxes of 4 pens ...", "3 boxes of 4 make 12 ...\nThe answer is 11.")
    analysis.to_pandas()    # per segment: text, R_hat, v_hat, Q_hat, sigma

``analysis`` shows its heatmap in a notebook (``_repr_html_``); ``figure()`` is the app's value-curve figure,
``heatmap_html()`` the app's shaded trace and ``to_html()`` the shareable report. Everything else (segmenters,
estimators, attributions, the trainer) is one import away in its own package, registered by name.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from rredcot_viz.estimators import DEFAULT_ESTIMATOR, estimators, usable_estimator
from rredcot_viz.segmenters import DEFAULT_SEGMENTER, segmenters
from rredcot_viz.traces.trace import Trace

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

    from rredcot_viz.engine import AnalysisResult, Analyzer

_LOADED: dict[tuple[str, str], Analyzer] = {}


def load(model: str = "embedded", quantization: str = "none") -> Analyzer:
    """The analyzer of ``model`` (the embedded SmolLM2-135M by default; a catalogue key, a GGUF file, a model
    directory or a hub id in the local cache) at ``quantization`` (``none``, ``8bit``, ``4bit``), loaded once per
    process: a second call with the same model returns the same analyzer and its caches."""
    from rredcot_viz.engine import Analyzer
    from rredcot_viz.model.lm import LanguageModel
    from rredcot_viz.model.loading import ModelConfig

    key = (model, quantization)
    if key not in _LOADED:
        _LOADED[key] = Analyzer(LanguageModel.load(ModelConfig(source=model, quantization=quantization)))
    return _LOADED[key]


@dataclass
class TraceAnalysis:
    """A trace's analysis with the ways to look at it; ``result`` holds every number (``AnalysisResult``)."""

    result: AnalysisResult
    model: dict[str, Any]
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)  # e.g. why the estimator is another than the one asked for

    def rows(self) -> list[dict[str, Any]]:
        """One row per segment: its whole text, the state values and sigma."""
        return self.result.rows(preview=None)

    def to_pandas(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.rows())

    def figure(self) -> go.Figure:
        """The value curves at the states s1 ... sK+1 (the app's Inspect figure)."""
        from rredcot_viz.figures import value_curves

        values = self.result.values
        curves = {"Q_hat": values.values, **{k: v for k, v in values.components.items() if k in ("R_hat", "v_hat")}}
        return value_curves(curves, title="Values at the states s1 … sK+1 (the last is the outcome R)")

    def heatmap_html(self) -> str:
        """The trace shaded by sigma on the absolute scale, with hover values (the app's heatmap)."""
        from rredcot_viz.figures import trace_heatmap

        segments = self.result.segmentation.segments
        tips = [{"Q_hat": float(self.result.values.values[s.index]), "sigma": float(self.result.sigma[s.index])}
                for s in segments]  # fmt: skip
        answer = self.result.trace.cot[segments[-1].char_span[1] :]
        return trace_heatmap([s.text for s in segments], self.result.sigma, tips, answer_text=answer)

    def to_html(self) -> str:
        """The shareable report: one self-contained HTML file that opens offline."""
        from rredcot_viz.figures.report import analysis_report

        return analysis_report(self.result, self.model, self.settings)

    def _repr_html_(self) -> str:
        return self.heatmap_html()


def analyze(
    trace: Trace | str,
    cot: str | None = None,
    *,
    reference_answer: str | None = None,
    segmenter: str = DEFAULT_SEGMENTER,
    k: int = 6,
    estimator: str = DEFAULT_ESTIMATOR,
    model: str = "embedded",
    analyzer: Analyzer | None = None,
) -> TraceAnalysis:
    """Segment ``trace`` (a ``Trace``, or a question with its reasoning ``cot``) into about ``k`` segments and
    estimate each one's value and credit with ``estimator``. A trace that lacks what the estimator needs (a
    reference answer, an outcome) gets the richest estimator it can feed, and ``notes`` says which and why, as
    the app does. ``analyzer``: one already loaded (else ``load(model)``)."""
    if isinstance(trace, str):
        if cot is None:
            raise TypeError("analyze(question, cot): give the reasoning text as the second argument, or a Trace")
        trace = Trace(question=trace, cot=cot, reference_answer=reference_answer)
    analyzer = analyzer or load(model)
    chosen, note = usable_estimator(estimator, trace)
    parts = segmenters.get(segmenter).Config.__dataclass_fields__
    cut = segmenters.get(segmenter)(**({"k": k} if "k" in parts else {}))
    value = estimators.get(chosen)()
    result = analyzer.analyze(trace, cut, value)
    settings = {"segmenter": segmenter, **asdict(cut.config), "estimator": chosen, **asdict(value.config)}
    return TraceAnalysis(result, analyzer.lm.info(), settings, [note] if note else [])
