#!/usr/bin/env python3
"""Summarises an nvidia-smi trace written by scripts/power-trace: one line per busy phase.

A phase is a run of samples drawing more than --busy-watts. For each phase it prints the start time, the
length, the mean SM clock, the mean power and the share of samples with the software power cap active, which
tells whether a benchmark ran at full clock or at the card's power limit (700 W on the H200).
Samples come at a fixed interval, so plain means are time-weighted (nvidia-smi repeats a sensor's value until
the sensor updates, about every 0.1 s).
"""
import argparse
import csv
import sys
from dataclasses import dataclass


@dataclass
class Sample:
    time: str  # hh:mm:ss.ss
    seconds: float
    sm_mhz: float
    watts: float
    capped: bool


@dataclass
class Phase:
    start: str
    seconds: float
    mean_sm_mhz: float
    mean_watts: float
    capped_share: float


def number(field: str) -> float:
    """'1980 MHz' or '740.55 W' -> the number."""
    return float(field.strip().split()[0])


def read_trace(path: str) -> list:
    """Samples of a CSV with the columns power-trace asks for (header line first)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise ValueError(f"{path}: empty trace")
    header = [h.strip() for h in rows[0]]

    def column(prefix: str) -> int:
        for i, name in enumerate(header):
            if name.startswith(prefix):
                return i
        raise ValueError(f"{path}: no column starting with '{prefix}' in {header}")

    t, clk = column("timestamp"), column("clocks.current.sm")
    power = next((i for i, h in enumerate(header) if h.startswith("power.draw.instant")), None)
    power = column("power.draw") if power is None else power
    cap = column("clocks_event_reasons.sw_power_cap")
    samples = []
    for row in rows[1:]:
        if len(row) < len(header):
            continue  # a line cut off when the sampler was stopped
        clock = row[t].split()[1]
        h, m, s = clock.split(":")
        samples.append(Sample(clock, int(h) * 3600 + int(m) * 60 + float(s), number(row[clk]), number(row[power]),
                              row[cap].strip() == "Active"))
    return samples


def busy_phases(samples: list, busy_watts: float) -> list:
    phases, current = [], []
    for s in samples + [None]:
        if s is not None and s.watts > busy_watts:
            current.append(s)
            continue
        if current:
            n = len(current)
            phases.append(Phase(current[0].time, current[-1].seconds - current[0].seconds,
                                sum(x.sm_mhz for x in current) / n, sum(x.watts for x in current) / n,
                                sum(x.capped for x in current) / n))
            current = []
    return phases


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", help="CSV written by scripts/power-trace")
    parser.add_argument("--busy-watts", type=float, default=300.0, help="a sample above this is busy (default 300)")
    args = parser.parse_args(argv)
    phases = busy_phases(read_trace(args.trace), args.busy_watts)
    print("| start | s | mean SM MHz | mean W | power-capped |")
    print("|---|---:|---:|---:|---:|")
    for p in phases:
        print(f"| {p.start} | {p.seconds:.2f} | {p.mean_sm_mhz:.0f} | {p.mean_watts:.0f} | {100 * p.capped_share:.0f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
