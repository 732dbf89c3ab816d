"""Record the sample traces' analyses with a stronger model, for the Inspect page to show by default.

    .venv/bin/python scripts/record_scores.py                     # Qwen2.5-Coder-1.5B (opt-in, see MODELS.md)
    .venv/bin/python scripts/record_scores.py --model smollm2-135m --out /tmp/recorded.json

Each sample is analysed with the default segmenter (hybrid, K = min(config K, the trace's pieces), as the
Inspect page starts) and the default estimator, and only the scores are written (rredcot_viz.engine.recorded).
For every failed sample with a labelled first error, prints the segment with the lowest sigma, the step
that contains its first character, and whether that is the labelled error step (the check docs/BENCHES.md
reports), beside two controls: the last segment (the one that writes the answer) and a random segment
(expected hits). Last line: ``traces= failed_labelled= worst_is_error= last_is_error= random_is_error= seconds=``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from rredcot_viz.engine import Analyzer
from rredcot_viz.engine.recorded import RECORDED_FILE, Recording, save_recordings
from rredcot_viz.estimators import estimators
from rredcot_viz.model.catalogue import CATALOGUE
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.segmenters import segmenters
from rredcot_viz.segmenters.hybrid import HybridSegmenterConfig
from rredcot_viz.traces.io import sample_traces


def step_of(trace, char: int) -> int:
    """0-based index of the labelled step that contains character ``char`` of the trace's reasoning."""
    spans = trace.step_spans()
    return next((i for i, (start, end) in enumerate(spans) if start <= char < end), len(spans) - 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", choices=sorted(CATALOGUE))
    parser.add_argument("--out", default=str(RECORDED_FILE))
    args = parser.parse_args()
    started = time.perf_counter()
    lm = LanguageModel.load(ModelConfig(source=args.model))
    analyzer = Analyzer(lm)
    estimator = estimators.get("rredcot")()
    traces = sample_traces()
    results, labelled, hits, last_hits, random_hits = {}, 0, 0, 0, 0.0
    for trace in traces:
        text_input = analyzer.context(trace).segmenter_input("reasoning", with_entropies=False)
        pieces = len(segmenters.get("hybrid")(k=None).candidate_cuts(text_input)) + 1
        segmenter = segmenters.get("hybrid")(k=max(min(HybridSegmenterConfig().k, pieces), 1))
        result = analyzer.analyze(trace, segmenter, estimator)
        results[trace.trace_id] = result
        line = f"{trace.trace_id:28s} K={result.k:2d} Q-hat " + " ".join(f"{v:.2f}" for v in result.values.values)
        if trace.outcome == 0.0 and trace.first_error is not None and trace.first_error >= 0:
            worst = int(np.argmin(result.sigma))
            steps = [step_of(trace, segment.char_span[0]) for segment in result.segmentation.segments]
            step = steps[worst]
            labelled += 1
            hits += step == trace.first_error
            last_hits += steps[-1] == trace.first_error  # control: blame the segment that writes the answer
            random_hits += float(np.mean([s == trace.first_error for s in steps]))  # control: a random segment
            line += f" | worst segment {worst + 1} -> step {step}, labelled error step {trace.first_error}"
        print(line, flush=True)
    info = CATALOGUE[args.model]
    settings = {
        "segmenter": f"hybrid (K = min({HybridSegmenterConfig().k}, the trace's pieces))",
        "estimator_name": estimator.name,
        "estimator": repr(estimator.config),
        "variant": "exact_sum",
        "model_id": info.hf_id,
        "wheels": [wheel.requirement for wheel in info.wheels],
    }
    recording = Recording(f"{info.display_name.split(' (')[0]} ({info.gguf_name})", info.gguf_sha256, settings)
    save_recordings(Path(args.out), recording, results)
    print(f"wrote {args.out}")
    print(
        f"traces={len(traces)} failed_labelled={labelled} worst_is_error={hits} last_is_error={last_hits} "
        f"random_is_error={random_hits:.2f} "
        f"seconds={time.perf_counter() - started:.0f}"
    )


if __name__ == "__main__":
    main()
