"""The figures' shared style (analysis/style.py) as the studies apply it: rate axes from zero, capacity intervals,
reference lines (1 billion requests/s, the Xeon baseline), the paper's design points, legends outside the data,
and the conditions under each figure."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import style
from drivers.studies import core_weight, llc, scaling


@pytest.fixture
def drawn(monkeypatch, tmp_path):
    """The figures the studies draw, kept open instead of written."""
    figures = []

    def keep(fig, path, caption=""):
        if caption:
            fig.text(0, 0, caption)
        fig.canvas.draw()
        figures.append(fig)
        return path

    monkeypatch.setattr(style, "save", keep)
    return figures


def legend_outside_data(fig, ax) -> bool:
    legend = fig.legends[0] if fig.legends else ax.get_legend()
    box, area = legend.get_window_extent(), ax.get_window_extent()
    return box.x0 >= area.x1 - 1 or box.y1 <= area.y0 + 1


def llc_frame() -> pd.DataFrame:
    kb = [256, 512, 768, 1024, 2048]
    tp = np.array([40.0, 55.0, 62.0, 63.0, 64.0])
    return pd.DataFrame({"llc_per_core_kb": kb, "throughput_mrps": tp, "throughput_upper_mrps": tp * 1.05,
                         "llc_mpki": [9.0, 5.0, 3.0, 2.5, 2.0], "items": 65536, "requests": 8000})


def test_the_llc_figure_has_zero_based_axes_intervals_the_design_point_and_an_outside_legend(drawn, tmp_path):
    llc.plot(llc_frame(), tmp_path / "llc.png", style.conditions_of(llc_frame(), full=False, cores=4))
    (fig,) = drawn
    ax, ax2 = fig.axes
    assert ax.get_ylim()[0] == 0 and ax2.get_ylim()[0] == 0, "rates from zero"
    stars = [line for line in ax.lines if line.get_marker() == "*"]
    assert len(stars) == 1 and list(stars[0].get_xdata()) == [2] and list(stars[0].get_ydata()) == [62.0]
    assert ax.containers and any(type(c).__name__ == "ErrorbarContainer" for c in ax.containers)
    assert legend_outside_data(fig, ax)
    caption = " ".join(t.get_text() for t in fig.texts)
    assert "reduced scale" in caption and "65,536 items" in caption and "8,000 requests" in caption


def test_core_weight_marks_three_issue_rob_64(drawn, tmp_path):
    rows = [{"dataset": ds, "issue_width": w, "rob": r, "throughput_mrps": float(w * r ** 0.3),
             "throughput_upper_mrps": float(w * r ** 0.3) * 1.02}
            for ds in core_weight.DATASETS for w in core_weight.WIDTHS for r in core_weight.ROBS]
    df = pd.DataFrame(rows)
    df["normalized"] = df.throughput_mrps
    core_weight.plot(df, tmp_path / "cw.png")
    (fig,) = drawn
    for ax in fig.axes:
        assert ax.get_ylim()[0] == 0
        stars = [line for line in ax.lines if line.get_marker() == "*"]
        assert len(stars) == 1 and list(stars[0].get_xdata()) == [core_weight.ROBS.index(64)]
        assert list(stars[0].get_ydata()) == pytest.approx([3 * 64 ** 0.3])


def test_server_throughput_figures_carry_the_goal_and_the_xeon_baseline(drawn, tmp_path):
    df = pd.DataFrame({"sockets": [1, 2, 4], "throughput_mrps": [240.0, 470.0, 900.0],
                       "linear_mrps": [240.0, 480.0, 960.0]})
    scaling.plot(df, tmp_path / "scaling.png")
    (fig,) = drawn
    (ax,) = fig.axes
    levels = {round(float(line.get_ydata()[0]), 4) for line in ax.lines if len(set(line.get_ydata())) == 1}
    assert 1.0 in levels and 0.1205 in levels, "1 billion requests/s and 120.5 M requests/s (billions on the axis)"
    assert ax.get_ylim()[0] == 0 and legend_outside_data(fig, ax)


def test_capacity_interval_is_the_first_failing_probe_in_throughput_units():
    assert style.capacity_upper(50.0, 10.0, 11.0) == pytest.approx(55.0)
    assert np.isnan(style.capacity_upper(50.0, 10.0, -1.0)), "line limited: no upper probe"
    assert style.conditions(full=True, cores=60) == "Conditions: full 60-core socket; 60 cores."


def test_a_caption_names_the_steady_state_window_its_values_come_from():
    """The values of a steady-state study come from its windows, not its capacity probes: the caption said
    'measured window 30,000 requests per run' (the probes') under the 60,000-request windows (session 24)."""
    df = pd.DataFrame({"items": [1 << 20] * 2, "requests": [30_000] * 2, "window_requests": [60_000, 120_000]})
    text = style.conditions_of(df, full=True, cores=60)
    assert "steady-state window 60,000 to 120,000 requests (capacity probes 30,000 requests per run)" in text
    assert "measured window" in style.conditions_of(df.drop(columns="window_requests"))
