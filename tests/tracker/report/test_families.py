"""tracker.report.families: a report's charts per metric family and parameter axis, not per gate (issue 26). Pure
data: the gates and runs are built in memory, the charts checked as data (their drawing: test_charts.py; in a
browser: tests/tracker/e2e/test_report_browser.py)."""

from __future__ import annotations

import datetime
import math
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.tracker.report.test_charts import check_self_contained
from tracker.core.model import BenchGate, ResultCase, ResultRun
from tracker.report import charts
from tracker.report.charts import Chart
from tracker.report.families import MAX_RUNS_CHARTED, MAX_SERIES, Family, GateRef, families, family_charts

FF = "verify_attn.floor_fraction"
T = "verify_attn.time_us"
EMU = "verify_attn.emulated_sm120_time_us"
START = datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC)
SHAPES = ({"heads": 8, "nodes": 16, "batch": 1}, {"heads": 8, "nodes": 64, "batch": 1})
CTX = (5700, 23000, 91000)


def run(i: int, cases: list[ResultCase], commit: str | None = None) -> ResultRun:
    """The i-th run (an hour apart), at commit ``commit`` (default: one per run)."""
    when = START + datetime.timedelta(hours=i)
    commit = commit or f"{i + 1:07x}" + "0" * 33
    return ResultRun(f"bench/results/r{i:03d}.json", "0" * 64, "b", when, "vm", "H200", commit, False, {}, tuple(cases))


def case(metric: str, params: dict[str, Any], value: float, unit: str = "", direction: str = "higher") -> ResultCase:
    return ResultCase(metric, params, unit, direction, (value,) * 5)


def sweep(fraction: float = 0.0) -> list[ResultCase]:
    """floor_fraction and time_us for cuda and triton at every ctx and shape: the fraction grows with ctx."""
    out = []
    for shape in SHAPES:
        for ctx in CTX:
            params = {"impl": "cuda", "ctx": ctx, **shape}
            out.append(case(FF, params, round(0.1 + ctx / 200000 + fraction + shape["nodes"] / 1000, 4)))
            out.append(case(T, params, 100.0 + ctx / 1000, "us", "lower"))
            out.append(case(T, {**params, "impl": "triton"}, 3000.0 + ctx / 10, "us", "lower"))
            out.append(case(T, {**params, "impl": "flashinfer"}, 110.0 + ctx / 1000, "us", "lower"))
    return out


def gate(bench: str = FF, at_least: float | None = 0.5, **where: Any) -> BenchGate:
    baseline = where.pop("baseline", None)
    at_most = where.pop("at_most", None)
    return BenchGate(
        bench=bench, where={"impl": "cuda", **where}, baseline=baseline, at_least=at_least, at_most=at_most
    )


def ref(phase: str, number: int, g: BenchGate, newest: ResultRun | None) -> GateRef:
    return GateRef(phase, number, g, newest)


def by_kind(charts: list[Any], kind: str) -> list[Chart]:
    return [c.chart for c in charts if c.kind == kind]


# --- families -------------------------------------------------------------------------------------------------


def test_a_metric_s_value_is_one_family_and_a_benchmark_s_ratios_another_whatever_their_baseline() -> None:
    r = run(0, sweep())
    refs = [
        ref("0002/P7", 1, gate(ctx=91000, **SHAPES[0]), r),
        ref("0002/P8", 1, gate(at_least=0.75, ctx=91000, **SHAPES[0]), r),
        ref("0002/P6", 1, gate(T, None, at_most=135.0, ctx=91000, **SHAPES[0]), r),
        ref("0002/P6", 5, gate(T, 10.0, baseline={"impl": "triton"}, ctx=91000, **SHAPES[1]), r),
        ref("0002/P6", 6, gate(T, 1.0, baseline={"impl": "flashinfer"}, ctx=23000, **SHAPES[0]), r),
        ref("0002/P17", 7, gate(EMU, 1.0, baseline={"impl": "cuda_v30bulk"}, ctx=91000), r),
    ]
    got = families(refs)
    assert [(f.name, [(g.phase, g.number) for g in f.gates]) for f in got] == [
        ("verify_attn.floor_fraction: median", [("0002/P7", 1), ("0002/P8", 1)]),
        ("verify_attn.time_us: median", [("0002/P6", 1)]),
        ("verify_attn: median × vs baseline", [("0002/P6", 5), ("0002/P6", 6), ("0002/P17", 7)]),
    ]
    assert got[2].metrics == (T, EMU) and got[2].ratio
    one_metric = families(refs[3:5])
    assert [f.name for f in one_metric] == ["verify_attn.time_us: median × vs baseline"]  # one metric: named by it


def test_against_ctx_one_line_per_shape_and_each_phase_s_threshold_only_over_its_gates_cases() -> None:
    r = run(0, sweep())
    refs = [
        ref("0002/P7", 1, gate(ctx=91000, **SHAPES[0]), r),
        ref("0002/P7", 2, gate(ctx=91000, **SHAPES[1]), r),
        ref("0002/P8", 1, gate(at_least=0.3, ctx=5700, **SHAPES[0]), r),
        ref("0002/P8", 2, gate(at_least=0.75, ctx=91000, **SHAPES[0]), r),
        ref("0002/P8", 3, gate(at_least=0.75, ctx=23000, **SHAPES[0]), r),
    ]
    charts = family_charts(refs, [r])
    assert [(c.id, c.kind) for c in charts] == [("chart1", "parameter")]  # one run: no chart across runs
    (chart,) = by_kind(charts, "parameter")
    assert chart.title == "verify_attn.floor_fraction: median against ctx" and chart.x_label == "ctx" and chart.x_log
    assert [s.label for s in chart.series] == ["nodes=16", "nodes=64"]  # heads, batch, impl: the same for all
    assert chart.series[0].xs == (5700.0, 23000.0, 91000.0)
    assert chart.series[0].ys == tuple(round(0.1 + c / 200000 + 0.016, 4) for c in CTX)
    assert [(b.label, b.value, b.xs) for b in chart.bands] == [
        ("0002/P7 gates 1-2: ≥ 0.5", 0.5, (91000.0,)),  # a dash at 91k, never across the chart
        ("0002/P8 gate 1: ≥ 0.3", 0.3, (5700.0,)),
        ("0002/P8 gates 2-3: ≥ 0.75", 0.75, (91000.0, 23000.0)),
    ]
    assert charts[0].gates_text == "0002/P7 gates 1-2, 0002/P8 gates 1-3"
    assert charts[0].phases == ["0002/P7", "0002/P8"]


def test_a_gate_that_leaves_the_axis_free_covers_every_value_of_it() -> None:
    r = run(0, sweep())
    (c,) = family_charts([ref("0001/P1", 1, gate(**SHAPES[0]), r)], [r])
    assert [(b.label, b.xs) for b in c.chart.bands] == [("0001/P1 gate 1: ≥ 0.5", (5700.0, 23000.0, 91000.0))]


def test_across_runs_only_with_two_runs_one_line_per_case_in_time_order_regressions_marked() -> None:
    runs = [run(0, sweep(0.5)), run(1, sweep(-0.3)), run(2, sweep(0.5), commit="0000001" + "0" * 33)]
    refs = [
        ref("0002/P7", 1, gate(ctx=91000, **SHAPES[0]), runs[-1]),
        ref("0002/P7", 2, gate(ctx=5700, **SHAPES[0]), runs[-1]),
    ]
    assert by_kind(family_charts(refs, runs[:1]), "runs") == []
    (chart,) = by_kind(family_charts(refs, runs), "runs")
    assert chart.x_categorical and chart.categories == (
        "0000001",
        "0000002",
        "0000001 (2)",
    )  # a repeated commit numbered
    assert [s.label for s in chart.series] == ["ctx=91000", "ctx=5700"]
    first = chart.series[0]
    assert first.xs == chart.categories and first.marked == (1,)  # met, then confidently missed: regressed
    assert [(b.label, b.xs) for b in chart.bands] == [("0002/P7 gates 1-2: ≥ 0.5", ())]  # across: x is time


def test_across_more_runs_than_a_chart_holds_the_newest_are_drawn_so_history_adds_no_bytes() -> None:
    """A report's size must not grow with the evidence history: past MAX_RUNS_CHARTED runs (each commit then
    labelled, MAX_TICK_LABELS) a chart across runs shows the newest ones, and one more run moves the window."""
    many = [run(i, sweep(0.01 * i)) for i in range(MAX_RUNS_CHARTED + 5)]
    refs = [ref("0002/P7", 1, gate(ctx=91000, **SHAPES[0]), many[-1])]
    (chart,) = by_kind(family_charts(refs, many), "runs")
    assert MAX_RUNS_CHARTED == charts.MAX_TICK_LABELS
    assert chart.categories == tuple(f"{i + 1:07x}" for i in range(5, MAX_RUNS_CHARTED + 5))
    assert len(chart.series[0].xs) == MAX_RUNS_CHARTED
    (later,) = by_kind(family_charts(refs, [*many, run(len(many), sweep())]), "runs")
    assert later.categories == (*chart.categories[1:], f"{len(many) + 1:07x}")


def test_a_case_measured_only_before_the_window_is_not_drawn_banded_or_claimed_and_the_note_says_so() -> None:
    """A case whose runs are all older than the newest MAX_RUNS_CHARTED: no series, no band (its threshold drawn
    over the other cases would read as theirs), not among the gates the chart draws; the note counts both."""
    early = {"ctx": 5700, **SHAPES[1]}
    mine = {"impl": "cuda", **early}
    many = [run(i, [c for c in sweep(0.01 * i) if (c.params == mine) == (i < 5)]) for i in range(MAX_RUNS_CHARTED + 10)]
    refs = [
        ref("0002/P7", 1, gate(ctx=91000, **SHAPES[0]), many[-1]),
        ref("0002/P8", 1, gate(at_least=0.9, **early), many[4]),
    ]
    (chart, gates) = next((c.chart, c.gates) for c in family_charts(refs, many) if c.kind == "runs")
    assert [s.label for s in chart.series] == ["impl=cuda ctx=91000 heads=8 nodes=16 batch=1"]
    assert [b.label for b in chart.bands] == ["0002/P7 gate 1: ≥ 0.5"]
    assert list(gates) == [("0002/P7", 1)]
    assert chart.note == "10 older runs, and 1 case only they measured, not drawn"


def test_runs_only_undrawn_cases_measured_take_no_place_in_the_window_and_unmeasured_cases_are_not_older() -> None:
    """The window is made of the drawn cases' runs: a run that measured only a case past MAX_SERIES is not a
    category (a drawn line would join across it with no gap to show), and a gated case no run measured is not
    counted among those "only older runs measured"."""
    params = [{"impl": "cuda", "ctx": 1000 + k, **SHAPES[0]} for k in range(MAX_SERIES + 1)]
    runs = [run(i, [case(FF, p, 1.0) for p in (params[:MAX_SERIES] if i % 2 else params[MAX_SERIES:])])
            for i in range(8)]  # fmt: skip
    refs = [ref("0002/P7", k + 1, gate(**{k: v for k, v in p.items() if k != "impl"}), runs[-1])
            for k, p in enumerate(params)]  # fmt: skip
    refs.append(ref("0002/P9", 1, gate(ctx=77, **SHAPES[0]), None))  # gated, never measured
    (chart,) = by_kind(family_charts(refs, runs), "runs")
    assert chart.categories == ("0000002", "0000004", "0000006", "0000008")
    assert chart.note.startswith("1 more case not drawn")


def test_a_regression_is_marked_where_it_happened_not_on_every_run_that_stays_below() -> None:
    """Met, missed three times, met, missed: two marks (the report's size must not grow with a regression's age)."""
    fractions = [0.5, -0.3, -0.3, -0.3, 0.5, -0.3]
    runs = [run(i, sweep(f)) for i, f in enumerate(fractions)]
    refs = [ref("0002/P7", 1, gate(ctx=91000, **SHAPES[0]), runs[-1])]
    (chart,) = by_kind(family_charts(refs, runs), "runs")
    assert chart.series[0].marked == (1, 5)


def test_ratio_series_are_named_by_metric_and_baseline_and_far_apart_ratios_get_a_log_axis() -> None:
    r = run(0, sweep() + [case(EMU, {"impl": i, "ctx": c}, v, "us", "lower") for c in CTX
                          for i, v in (("cuda", 100.0), ("cuda_v30bulk", 101.0))])  # fmt: skip
    refs = [
        ref("0002/P6", 5, gate(T, 10.0, baseline={"impl": "triton"}, ctx=91000, **SHAPES[1]), r),
        ref("0002/P6", 6, gate(T, 1.0, baseline={"impl": "flashinfer"}, ctx=23000, **SHAPES[1]), r),
        ref("0002/P17", 7, gate(EMU, 1.0, baseline={"impl": "cuda_v30bulk"}, ctx=91000), r),
    ]
    (c,) = family_charts(refs, [r])
    assert c.family == "verify_attn: median × vs baseline" and c.chart.y_log
    assert [s.label for s in c.chart.series] == [
        "time_us heads=8 nodes=64 batch=1 vs triton",
        "time_us heads=8 nodes=64 batch=1 vs flashinfer",
        "emulated_sm120_time_us vs cuda_v30bulk",
    ]
    assert c.chart.y_label == "median, × vs baseline"


def test_more_series_than_a_chart_draws_are_counted_in_its_note() -> None:
    shapes = [f"shape{h}" for h in range(MAX_SERIES + 3)]  # text: ctx stays the one numeric axis
    r = run(0, [case(FF, {"impl": "cuda", "ctx": c, "shape": s}, 0.5) for c in CTX for s in shapes])
    refs = [ref("0001/P1", h + 1, gate(ctx=91000, shape=s), r) for h, s in enumerate(shapes)]
    (c,) = family_charts(refs, [r])
    assert len(c.chart.series) == MAX_SERIES and c.chart.note.startswith("3 more series not drawn")


def test_a_gate_without_a_deciding_run_or_a_second_value_draws_no_chart() -> None:
    r = run(0, [case(FF, {"impl": "cuda", "ctx": 91000}, 0.4)])
    assert family_charts([ref("0001/P1", 1, gate(ctx=91000), None)], [r]) == []
    assert family_charts([ref("0001/P1", 1, gate(ctx=91000), r)], [r]) == []  # one point, one run: nothing to chart


# --- hostile input --------------------------------------------------------------------------------------------

KEYS = st.sampled_from(["ctx", "heads", "nodes", "impl", "x" * 80, "$k$", "<b>"])
VALUES = st.one_of(
    st.sampled_from([1, 8, 64, 5700, 91000]),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["cuda", "triton", "<script>", "{{ 7*7 }}", "91000", ""]),
    st.booleans(),
)
METRICS = st.one_of(st.sampled_from([FF, T, EMU, "a.b", "nodot"]), st.text(max_size=30))
SAMPLE = st.one_of(st.floats(min_value=-1e300, max_value=1e300), st.sampled_from([0.0, 1e-300, 1e300, -1.0]))


@st.composite
def reports(draw: st.DrawFn) -> tuple[list[GateRef], list[ResultRun]]:
    """Runs of hostile cases (many parameters, odd names, huge and zero values) and gates over them."""
    metrics = draw(st.lists(METRICS, min_size=1, max_size=3))
    runs = []
    for i in range(draw(st.integers(1, 4))):
        cases = []
        base = draw(st.dictionaries(KEYS, VALUES, max_size=4))
        for _ in range(draw(st.integers(0, 12))):
            # a sweep: the run's parameters with ctx (and now and then another key) varied, or anything at all
            swept = {**base, "ctx": draw(st.one_of(st.sampled_from(CTX), VALUES))}
            swept.update(draw(st.dictionaries(KEYS, VALUES, max_size=1)))
            params = draw(st.one_of(st.just(swept), st.dictionaries(KEYS, VALUES, max_size=6)))
            samples = tuple(draw(st.lists(SAMPLE, min_size=1, max_size=6)))
            direction = draw(st.sampled_from(["lower", "higher"]))
            cases.append(ResultCase(draw(st.sampled_from(metrics)), params, "us", direction, samples))
        runs.append(run(i, cases, commit=draw(st.sampled_from([None, "abcdef0" + "0" * 33]))))
    every = [c for r in runs for c in r.cases]
    refs = []
    for n in range(draw(st.integers(1, 8))):
        metric = draw(st.sampled_from(metrics))
        where = draw(st.dictionaries(KEYS, VALUES, max_size=4))
        baseline = draw(st.one_of(st.none(), st.dictionaries(KEYS, VALUES, min_size=1, max_size=2)))
        if every and draw(st.booleans()):  # most often a gate that selects a case the runs hold
            picked = draw(st.sampled_from(every))
            metric = picked.metric
            where = {k: v for k, v in picked.params.items() if draw(st.booleans())}
            others = [c.params for c in every if c.metric == metric and c.params.keys() == picked.params.keys()]
            changed = {k: v for k, v in draw(st.sampled_from(others)).items() if k not in where}
            baseline = changed if changed and draw(st.booleans()) else None
        threshold = draw(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-(10**30), 10**30)))
        lower = draw(st.booleans())
        g = BenchGate(metric, where, baseline, None if lower else threshold, threshold if lower else None,
                      min_samples=draw(st.sampled_from([None, 1, 50])))  # fmt: skip
        refs.append(GateRef(draw(st.sampled_from(["0001/P1", "0002/P7", "<i>/P{{1}}"])), n + 1, g,
                            draw(st.one_of(st.none(), st.sampled_from(runs)))))  # fmt: skip
    return refs, runs


def check_charts(refs: list[GateRef], runs: list[ResultRun]) -> None:
    fams = families(refs)
    assert sorted((g.phase, g.number) for f in fams for g in f.gates) == sorted((r.phase, r.number) for r in refs)
    assert all(
        isinstance(f, Family) and len({(g.gate.stat, bool(g.gate.baseline)) for g in f.gates}) == 1 for f in fams
    )
    charts = family_charts(refs, runs)
    assert len({c.id for c in charts}) == len(charts)
    names = {f.name for f in fams}
    for c in charts:
        assert c.family in names and c.gates and set(c.gates) <= {(r.phase, r.number) for r in refs}
        assert len(c.chart.series) <= MAX_SERIES
        assert all(b.label.split(" ")[0] in c.phases for b in c.chart.bands)
        if c.kind == "runs":
            assert len(c.chart.categories) >= 2 and c.chart.x_categorical
            assert all(set(s.xs) <= set(c.chart.categories) for s in c.chart.series)
        else:
            assert any(len(s.xs) >= 2 for s in c.chart.series)
            assert all(math.isfinite(x) for s in c.chart.series for x in s.xs)  # type: ignore[arg-type]
        c.as_json()  # JSON-safe numbers
    assert sum(c.kind == "runs" for c in charts) <= len(fams)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(reports())
@example(([GateRef("0001/P1", 1, gate(ctx=91000), None)], [run(0, [])]))
def test_any_gates_and_runs_give_charts_that_hold_together(drawn: tuple[list[GateRef], list[ResultRun]]) -> None:
    check_charts(*drawn)


def test_one_line_per_shape_even_when_its_gates_were_decided_by_different_runs() -> None:
    """The newest run measured ctx 23000 and 91000 only; the gate at 5700 was decided by an older run: one line, each
    point from the newest run that holds it, the note naming both runs."""
    old = run(0, sweep(0.2))
    new = run(1, [c for c in sweep() if c.params["ctx"] != 5700])
    refs = [ref("0002/P7", 1, gate(ctx=91000, **SHAPES[0]), new), ref("0002/P8", 11, gate(ctx=5700, **SHAPES[0]), old)]
    (chart,) = by_kind(family_charts(refs, [old, new]), "parameter")
    (line,) = chart.series
    assert line.xs == (5700.0, 23000.0, 91000.0)
    assert line.ys == (
        round(0.1 + 5700 / 200000 + 0.2 + 0.016, 4),
        *(round(0.1 + c / 200000 + 0.016, 4) for c in CTX[1:]),
    )
    assert chart.note == "points from the newest run holding each: 0000002, 0000001"


def test_a_gate_whose_newest_run_swept_shapes_at_one_ctx_is_a_point_on_its_family_s_ctx_axis() -> None:
    """Two gates decided by a context sweep, one (at 5.7k) by a newer short run of two shapes: one chart against ctx,
    its line through all three points, not a second chart against nodes (our own report had 25 charts, its budget 24,
    when plan 0002's P19 gained such a run)."""
    old = run(0, sweep(0.2))
    short = run(1, [c for c in sweep() if c.params["ctx"] == 5700])
    refs = [
        ref("0002/P7", 1, gate(ctx=91000, **SHAPES[0]), old),
        ref("0002/P7", 2, gate(ctx=23000, **SHAPES[0]), old),
        ref("0002/P19", 3, gate(ctx=5700, **SHAPES[0]), short),
    ]
    charts = by_kind(family_charts(refs, [old, short]), "parameter")
    assert [c.x_label for c in charts] == ["ctx"]
    (line,) = charts[0].series
    assert line.xs == (5700.0, 23000.0, 91000.0)
    assert line.ys[0] == round(0.1 + 5700 / 200000 + 0.016, 4)  # from the short run, the newest holding it
    # Alone, the short run's gate still charts against what its run varies.
    (alone,) = by_kind(family_charts([refs[2]], [short]), "parameter")
    assert alone.x_label == "nodes"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(reports())
def test_any_family_chart_draws_as_one_self_contained_svg(drawn: tuple[list[GateRef], list[ResultRun]]) -> None:
    from tracker.report import charts

    if not charts.available():
        return  # the data is checked above; drawing needs the [report] extra
    for c in family_charts(*drawn):
        check_self_contained(charts.render_svg(c.chart, id_prefix=c.id), c.id)


def test_the_charts_across_runs_are_the_same_from_a_memo_of_each_gate_on_each_run() -> None:
    runs = [run(0, sweep(0.5)), run(1, sweep(-0.3)), run(2, sweep(0.5))]
    refs = [ref("0002/P7", 1, gate(ctx=91000, **SHAPES[0]), runs[-1]), ref("0002/P8", 1, gate(at_least=0.75), runs[-1])]
    memo: dict[str, Any] = {}
    fresh = family_charts(refs, runs, {}, memo)
    assert memo and all(isinstance(v, list) and len(v) == 4 for v in memo.values())
    assert family_charts(refs, runs, {}, memo) == fresh == family_charts(refs, runs)


hostile_entries = st.one_of(
    st.none(),
    st.integers(),
    st.text(max_size=5),
    st.lists(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=3)), max_size=5),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bad=hostile_entries)
def test_a_memo_entry_that_is_no_outcome_is_evaluated_again(bad: object) -> None:
    runs = [run(0, sweep(0.5)), run(1, sweep(-0.3))]
    refs = [ref("0002/P7", 1, gate(ctx=91000, **SHAPES[0]), runs[-1])]
    memo: dict[str, Any] = {}
    fresh = family_charts(refs, runs, {}, memo)
    well_formed = isinstance(bad, list) and len(bad) == 4 and type(bad[2]) is bool and type(bad[3]) is bool
    well_formed = well_formed and (bad[0] is None or type(bad[0]) in (int, float))  # type: ignore[index]
    well_formed = well_formed and (bad[1] is None or isinstance(bad[1], str))  # type: ignore[index]
    spoiled = {k: bad for k in memo}
    if not well_formed:
        assert family_charts(refs, runs, {}, spoiled) == fresh


def test_a_gate_no_run_measured_draws_no_band_and_is_not_named_across_runs() -> None:
    runs = [run(0, sweep(0.5)), run(1, sweep(-0.3))]
    unmeasured = gate(T, at_least=None, at_most=200.0, ctx=91000, kv="fp8", **SHAPES[1])  # no case has kv=fp8
    refs = [ref("0002/P6", 1, gate(T, at_least=None, at_most=135.0, ctx=91000, **SHAPES[0]), runs[-1])]
    refs.append(ref("0002/P18", 7, unmeasured, None))
    charts = family_charts(refs, runs)
    (across,) = [c for c in charts if c.kind == "runs" and c.chart.title.startswith(T)]
    assert [b.label for b in across.chart.bands] == ["0002/P6 gate 1: ≤ 135"]
    assert across.gates == (("0002/P6", 1),)
