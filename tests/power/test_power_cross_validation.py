"""Leave-one-processor-out cross-validation of the calibration (power.fit.cross_validate).

These tests check that the cross-validation does what it says (six held-out refits, each without its processor,
in-sample figures identical to the full fit); they deliberately assert no out-of-sample tolerance: the
out-of-sample errors are a measurement (see power.calibration's docstring), not a design target."""

import math

import pytest

from power import compare, fit, mcpat_reference as ref

from power_helpers import require_shared

METRICS = ("area_mm2", "peak_dynamic_W", "leakage_W")


@pytest.fixture(scope="module")
def raw():
    require_shared()
    return fit.raw_sums()


@pytest.fixture(scope="module")
def cv(raw):
    return fit.cross_validate(raw)


@pytest.mark.slow
def test_six_held_out_predictions(cv):
    tab = cv["table"]
    assert list(cv["folds"]) == list(ref.PROCESSORS)
    assert len(tab) == len(ref.PROCESSORS) * len(METRICS)
    for p in ref.PROCESSORS:
        rows = tab[tab.processor == p]
        assert sorted(rows.metric) == sorted(METRICS)
        for _, r in rows.iterrows():
            assert r.out_of_sample > 0 and math.isfinite(r.out_of_sample)
            assert r.out_error_pct == pytest.approx(100.0 * (r.out_of_sample / r.mcpat - 1.0))
            assert r.mcpat == pytest.approx(ref.totals(p)[r.metric])


@pytest.mark.slow
def test_held_out_processor_is_not_in_its_refit(cv):
    for p, fold in cv["folds"].items():
        for m, res in fold["fits"].items():
            assert set(res["errors_pct"]) == set(ref.PROCESSORS) - {p}, (p, m)


@pytest.mark.slow
def test_each_refit_differs_from_the_full_fit(cv):
    for p, fold in cv["folds"].items():
        for m, res in fold["fits"].items():
            full = cv["full"][m]["factors"]
            change = max(abs(math.log(res["factors"][g] / full[g])) for g in full)
            assert change > 1e-3, f"refit without {p} left the {m} factors unchanged"


@pytest.mark.slow
def test_in_sample_errors_are_the_full_fit_errors(raw, cv):
    """The fit-level in-sample errors equal an independent full fit's; the model-level ones equal the shipped
    model's totals up to the rounding of the factors in power.calibration (< 0.5 percentage points)."""
    full = {m: fit.fit(m, raw, node_baseline=fit.FOLDED_NODE_MULTIPLIERS.get(m)) for m in fit.FIT_SETTINGS}
    tab = cv["table"]
    shipped = compare.totals_table()
    for p in ref.PROCESSORS:
        mc = ref.totals(p)
        expect = {
            "area_mm2": full["area_mm2"]["errors_pct"][p],
            "peak_dynamic_W": full["peak_dynamic_W"]["errors_pct"][p],
            "leakage_W": 100.0 * (sum(mc[m] * (1 + full[m]["errors_pct"][p] / 100.0) for m in fit.LEAK_METRICS)
                                  / mc["leakage_W"] - 1.0),
        }
        for metric in METRICS:
            row = tab[(tab.processor == p) & (tab.metric == metric)].iloc[0]
            assert row.in_fit_error_pct == pytest.approx(expect[metric], rel=1e-9, abs=1e-9), (p, metric)
            s = shipped[(shipped.processor == p) & (shipped.metric == metric)].iloc[0]
            assert abs(row.in_error_pct - s.error_pct) < 0.5, (p, metric, row.in_error_pct, s.error_pct)


@pytest.mark.slow
def test_unseen_nodes_use_the_prior(raw, cv):
    """A held-out processor whose node no other example has gets the fit's prior (1); a shared node keeps the
    multiplier fitted on the processor that shares it."""
    for p, fold in cv["folds"].items():
        others = {raw[q][0] for q in raw if q != p}
        for m, mult in fold["leak_multipliers"].items():
            if fold["node"] in others:
                assert mult == fold["fits"][m]["node_multipliers"][fold["node"]]
            else:
                assert mult == 1.0
                assert "prior" in fold["node_note"]


@pytest.mark.slow
def test_full_fit_recovers_the_folded_node_multipliers(cv):
    """FOLDED_NODE_MULTIPLIERS (the two-digit figures documented in power.tech) agree with what the full fit
    re-derives from the uncalibrated baseline: rounding plus the weak prior stay within 5%."""
    for m in fit.LEAK_METRICS:
        got = cv["full"][m]["node_multipliers"]
        assert set(got) == set(fit.FOLDED_NODE_MULTIPLIERS[m])
        for node, v in fit.FOLDED_NODE_MULTIPLIERS[m].items():
            assert got[node] == pytest.approx(v, rel=0.05), (m, node)


def test_held_out_node_multiplier_rules():
    fitted = {"hp180": 4.0, "hp65": 2.0}
    assert fit.held_out_node_multiplier("hp65", fitted) == (2.0, "fitted on the other processors")
    assert fit.held_out_node_multiplier("hp90", fitted)[0] == 1.0
    w = math.log(180 / 90) / math.log(180 / 65)
    v, note = fit.held_out_node_multiplier("hp90", fitted, "neighbours")
    assert v == pytest.approx(math.exp((1 - w) * math.log(4.0) + w * math.log(2.0)))
    assert "interpolated" in note
    assert fit.held_out_node_multiplier("hp45", fitted, "neighbours")[0] == 2.0
    assert fit.held_out_node_multiplier("lop40", fitted, "neighbours")[0] == 1.0
    with pytest.raises(ValueError):
        fit.held_out_node_multiplier("hp90", fitted, "nearest")
