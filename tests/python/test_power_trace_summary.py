"""scripts/power_trace_summary.py on the trace recorded in session 4 and on small hand-made traces."""
import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("power_trace_summary", ROOT / "scripts" / "power_trace_summary.py")
summary = importlib.util.module_from_spec(spec)
spec.loader.exec_module(summary)

HEADER = ("timestamp, clocks.current.sm [MHz], power.draw [W], power.draw.instant [W], "
          "clocks_event_reasons.sw_power_cap, clocks_event_reasons.hw_slowdown, temperature.gpu\n")


def row(t, mhz, watts, capped):
    cap = "Active" if capped else "Not Active"
    return f"2026/11/30 12:00:{t}, {mhz} MHz, {watts} W, {watts} W, {cap}, Not Active, 50\n"


def test_recorded_h200_trace_is_power_capped_in_every_busy_phase():
    trace = ROOT / "tests" / "python" / "fixtures" / "h200-power-trace.csv"  # nvidia-smi samples of a bench run
    phases = summary.busy_phases(summary.read_trace(str(trace)), 300.0)
    # Three runs of the grouped suite (4 shapes each; ours and cuBLASLt back to back in a shape's phase).
    assert len(phases) == 12
    for p in phases:
        assert 1400 < p.mean_sm_mhz < 1700, p
        assert p.mean_watts > 680, p
        assert p.capped_share >= 0.75, p  # the first ~0.1 s of a phase runs before the cap engages


def test_phases_split_on_idle_samples(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text(HEADER + row("00.00", 1980, 120, False) + row("00.02", 1980, 700, False) +
                     row("00.04", 1980, 700, False) + row("00.06", 1500, 720, True) +
                     row("00.08", 1980, 118, False) + row("00.10", 1600, 710, True))
    phases = summary.busy_phases(summary.read_trace(str(trace)), 300.0)
    assert [(round(p.mean_sm_mhz), round(p.mean_watts), round(p.capped_share, 2)) for p in phases] == [
        (1820, 707, 0.33), (1600, 710, 1.0)]
    assert phases[0].seconds == pytest.approx(0.04)


def test_a_trace_without_the_cap_column_names_it(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("timestamp, clocks.current.sm [MHz], power.draw [W]\n" + "2026/11/30 12:00:00.00, 1980 MHz, 100 W\n")
    with pytest.raises(ValueError, match="clocks_event_reasons.sw_power_cap"):
        summary.read_trace(str(trace))
