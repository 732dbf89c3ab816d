"""The HTML heatmap (figures/trace_html.py): every text escaped, long segments collapsed but kept whole."""

from __future__ import annotations

from rredcot_viz.figures.trace_html import trace_heatmap


def test_heatmap_escapes_every_text_and_keeps_segment_count():
    texts = ["<script>alert(1)</script>", "a & b <img src=x onerror=y>", 'say "hi"']
    html = trace_heatmap(
        texts, [0.1, -0.2, 0.0], [{"sigma": 0.1}, {"sigma": -0.2}, {"<k>": 0.0}], answer_text="<b>7</b>"
    )
    assert html.count('class="rc-seg"') == 3
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=y&gt;" in html and "&amp;" in html and "&lt;k&gt; = +0.0000" in html
    assert "&lt;b&gt;7&lt;/b&gt;" in html


def test_long_segments_collapse_but_keep_all_text():
    long = "x" * 5000
    html = trace_heatmap([long, "short"], [1.0, -1.0], [{}, {}], collapse_chars=1000)
    assert "<details>" in html and "[… 4250 more characters]" in html
    assert html.count("x") >= 5000


def test_heatmap_carries_its_legend_counts_as_integers_and_no_tint_for_noise():
    html = trace_heatmap(["a", "b"], [0.0006, -0.3], [{"flags": 2}, {"flags": 0}])
    assert html.index('class="rc-legend"') < html.index('class="rc-trace"') and 'data-scale="absolute"' in html
    assert 'data-segment="1" style="background:rgba(0,0,0,0)"' in html  # |sigma| 0.0006: untinted
    assert 'data-segment="2" style="background:rgba(215,48,39,0.286)"' in html  # 0.10 + 0.62 * 0.3
    assert "flags = 2" in html and "flags = +2" not in html
    assert 'class="rc-legend"' not in trace_heatmap(["a"], [0.1], [{}], legend=False)


def test_a_segment_that_starts_a_line_has_its_number_on_that_line():
    """With the line segmenter the numbers sat on lines of their own above the text."""
    html = trace_heatmap(["First line.", "\nSecond line."], [0.1, -0.1], [{}, {}])
    assert '\n<span class="rc-seg" data-segment="2"' in html
    assert '<span class="rc-num">2</span>Second line.' in html
