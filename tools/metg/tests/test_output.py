import csv
import json
from pathlib import Path

from taskgrid_metg import output
from taskgrid_metg.peak import Peak
from taskgrid_metg.plot import write_png
from taskgrid_metg.results import evaluate
from taskgrid_metg.runner import Report
from taskgrid_metg.sweep import RunRecord, plan_sweep
from taskgrid_metg.systems import SYSTEMS, make_launch

OVERHEAD, RATE = 1e-6, 1e9  # seconds per task, FLOP/s per core


def synthetic_results(calibrated=True):
    """Two single-core systems; 'serial' with the synthetic cost model, 'mpi' 2x slower."""
    launches = {"serial": make_launch(SYSTEMS["serial"], Path("build"), 1, ["mpiexec.mpich"]),
                "mpi": make_launch(SYSTEMS["mpi"], Path("build"), 1, ["mpiexec.mpich"])}
    records = []
    for planned in plan_sweep(["serial", "mpi"], 0, 6, reps=1):
        tasks = 100
        flops = tasks * (128 * planned.iterations + 64)
        elapsed = OVERHEAD * tasks * (1 if planned.system == "serial" else 2) + flops / RATE
        records.append(RunRecord(planned, ["cmd"], Report(elapsed, tasks, flops, 0, "json"), elapsed))
    calibration = (Peak("calibrated", "FLOP/s", "fake", {1: RATE}, {1: [RATE]}) if calibrated
                   else Peak("calibrated", "FLOP/s", "not built"))
    machine = {"hostname": "h", "cpu_model": "cpu", "cores": 1,
               "loadavg_start": [0.1, 0, 0], "loadavg_end": [0.2, 0, 0]}
    return evaluate(records, launches, calibration, "auto", 2e9, 1, 0.5, "linear",
                    {"graph_flags": ["-steps", "100"]}, machine)


def test_csv_json_png_are_written(tmp_path):
    results = synthetic_results()
    output.write_csv(results, tmp_path / "metg.csv")
    output.write_json(results, tmp_path / "metg.json")
    write_png(results, tmp_path / "metg.png")

    rows = list(csv.DictReader(open(tmp_path / "metg.csv")))
    assert len(rows) == 14 and list(rows[0]) == output.CSV_COLUMNS
    assert rows[0]["system"] == "serial" and rows[0]["iterations"] == "64"
    assert rows[0]["efficiency_pct"] == rows[0]["efficiency_calibrated_pct"]
    assert rows[0]["efficiency_sweep_pct"] == "100.0000"  # best point of the sweep

    doc = json.loads((tmp_path / "metg.json").read_text())
    assert doc["complete"] is True
    assert doc["peaks"]["calibrated"]["per_core"] == {"1": 1e9}
    assert doc["peaks"]["calibrated"]["node"] == 1e9  # the machine has 1 core here
    assert doc["peaks"]["sweep"]["available"] and doc["peaks"]["given"]["per_core"] == {"1": 2e9}
    assert doc["headline"]["peak"] == "calibrated" and doc["headline"]["interp"] == "linear"
    for peak in ("calibrated", "sweep", "given"):
        assert set(doc["metg"]["serial"][peak]) == {"linear", "log"}
    assert doc["metg"]["serial"]["headline"]["status"] == "ok"
    assert doc["systems"]["mpi"]["command"][:3] == ["mpiexec.mpich", "-n", "1"]
    assert "-iter" in doc["systems"]["mpi"]["command"]
    assert len(doc["runs"]) == 14 and len(doc["points"]) == 14

    png = (tmp_path / "metg.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000


def test_table_shows_metg_and_refusals():
    results = synthetic_results()
    table = output.format_table(results)
    assert "METG(50%) on h, cpu, 1 cores, load avg 0.10 -> 0.20" in table
    assert "serial         METG(50%) = " in table and " µs" in table
    assert "Headline: peak = calibrated, linear interpolation" in table
    assert "2^6" in table and "*" in table


def test_auto_falls_back_to_sweep_peak_without_calibration():
    results = synthetic_results(calibrated=False)
    assert results.headline_peak == "sweep"
    assert "no calibration (not built)" in results.headline_reason
    assert "calibrated" not in results.metg["serial"]
