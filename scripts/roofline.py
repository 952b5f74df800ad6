#!/usr/bin/env python3
"""Roofline plot of a `tilegemm bench` report: roofline.png and roofline.svg.

usage: roofline.py REPORT.json OUT_DIR

x = arithmetic intensity (FLOPs / the ledger's minimum bytes), y = TFLOP/s, both log scale. The roofs are
min(peak, intensity x bandwidth) from the report's environment: the HardwareModel's bf16 tensor peak with
its HBM bandwidth (solid) and, when the report measured it, the copy-bandwidth ceiling (dashed). One marker
per shape for ours and one for the baseline, labelled MxNxK.

Exit status: 0 written; 2 bad input (unreadable report, no rows to plot); 3 matplotlib missing.
"""
import json
import os
import sys


def fail(status, message):
    print(f"roofline.py: {message}", file=sys.stderr)
    sys.exit(status)


def shape_label(row):
    # Same as BenchRow::shape_label: dense MxNxK, grouped GxMxNxK with M per group.
    if row["kind"] == "dense":
        return f'{row["m"]}x{row["n"]}x{row["k"]}'
    groups = row["groups"] or 1
    return f'{groups}x{row["m"] // groups}x{row["n"]}x{row["k"]}'


def tflops(row, who):
    stats = row.get(who) or {}
    if stats.get("samples", 0) <= 0 or stats.get("median_us", 0) <= 0:
        return None
    if who == "ours" and row.get("error"):
        return None  # a failed sanity check makes the number untrustworthy
    return row["flops"] / stats["median_us"] * 1e-6


def points(report):
    out = []
    for row in report["rows"]:
        if row.get("min_bytes", 0) <= 0 or row.get("flops", 0) <= 0:
            continue
        out.append((shape_label(row), row["flops"] / row["min_bytes"], tflops(row, "ours"), tflops(row, "cublas")))
    return out


def roof(xs, peak_tflops, gbps):
    # intensity [FLOP/B] x bandwidth [GB/s] = GFLOP/s; / 1000 = TFLOP/s.
    return [min(peak_tflops, x * gbps / 1000.0) for x in xs]


def place_labels(fig, ax, labelled, fontsize=6.5):
    """Labels beside their markers without overlapping each other: shapes of one (N, K) pair at large M
    sit close together, so each label takes the nearest free slot above or below, with a leader line
    when it had to move."""
    px_per_pt = fig.dpi / 72.0
    height = fontsize * 1.25 * px_per_pt
    placed = []  # boxes in display pixels: (x0, y0, x1, y1)

    def free(box):
        return all(box[2] <= b[0] or box[0] >= b[2] or box[3] <= b[1] or box[1] >= b[3] for b in placed)

    order = sorted(labelled, key=lambda t: -t[2])
    for label, x, y in order:
        px, py = ax.transData.transform((x, y))
        width = 0.62 * fontsize * px_per_pt * len(label)
        choice = None
        for step in range(0, 40):
            dy = (step + 1) // 2 * (1 if step % 2 else -1) * height
            for side in (1, -1):
                x0 = px + side * 6 * px_per_pt - (width if side < 0 else 0)
                box = (x0, py + dy - height / 2, x0 + width, py + dy + height / 2)
                if free(box):
                    choice = (side, dy, box)
                    break
            if choice:
                break
        if choice is None:
            choice = (1, 0.0, (px, py, px + width, py + height))
        side, dy, box = choice
        placed.append(box)
        ax.annotate(label, (x, y), xytext=(side * 6, dy / px_per_pt), textcoords="offset points",
                    ha="left" if side > 0 else "right", va="center", fontsize=fontsize, color="dimgray",
                    arrowprops=dict(arrowstyle="-", color="lightgray", linewidth=0.6) if abs(dy) > height else None)


def main(argv):
    if len(argv) != 3:
        fail(2, "usage: roofline.py REPORT.json OUT_DIR")
    report_path, out_dir = argv[1], argv[2]
    try:
        with open(report_path, encoding="utf-8") as f:
            report = json.load(f)
        env = report["environment"]
        peak, hbm = float(env["peak_tflops"]), float(env["hbm_gbps"])
        pts = points(report)
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(2, f"cannot read a bench report from '{report_path}': {e!r}")
    if peak <= 0 or hbm <= 0:
        fail(2, f"the report's peak_tflops ({peak}) and hbm_gbps ({hbm}) must be positive")
    if not pts:
        fail(2, "the report has no rows with FLOPs and minimum bytes to plot")
    try:
        import matplotlib
        matplotlib.use("Agg")  # files only, no display
        matplotlib.rcParams["svg.fonttype"] = "none"  # SVG text stays text: searchable and smaller
        import matplotlib.pyplot as plt
    except ImportError as e:
        fail(3, f"matplotlib is not available to {sys.executable} ({e}): pip install matplotlib for it, or point "
                f"TILEGEMM_PYTHON at an interpreter that has it (Debian's python3-matplotlib, which scripts/install-deps "
                f"installs, is /usr/bin/python3's)")

    copy = float(env.get("copy_gbps") or 0)
    xs_data = [p[1] for p in pts]
    ys_data = [y for p in pts for y in p[2:] if y]
    ridge = peak * 1000.0 / hbm
    x_lo = min(min(xs_data), ridge) / 3
    x_hi = max(max(xs_data), ridge) * 3
    xs = [x_lo * (x_hi / x_lo) ** (i / 200) for i in range(201)]

    fig, ax = plt.subplots(figsize=(11, 7), dpi=120)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.plot(xs, roof(xs, peak, hbm), color="black", linewidth=1.5,
            label=f"roof: {peak:.0f} TFLOP/s bf16, HBM {hbm:.0f} GB/s")
    if copy > 0:
        ax.plot(xs, roof(xs, peak, copy), color="gray", linestyle="--", linewidth=1.2,
                label=f"copy ceiling {copy:.0f} GB/s (measured)")
    ax.axvline(ridge, color="lightgray", linewidth=0.8, zorder=0)

    ours = [(p[1], p[2]) for p in pts if p[2]]
    base = [(p[1], p[3]) for p in pts if p[3]]
    if base:
        ax.scatter([p[0] for p in base], [p[1] for p in base], marker="x", s=40, color="tab:orange",
                   label="baseline (cuBLASLt)", zorder=3)
    if ours:
        ax.scatter([p[0] for p in ours], [p[1] for p in ours], marker="o", s=28, facecolors="none",
                   edgecolors="tab:blue", linewidths=1.4, label="tilegemm", zorder=4)
    y_lo = min(ys_data + [peak]) / 3 if ys_data else peak / 1000
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, peak * 2)
    place_labels(fig, ax, [(p[0], p[1], p[2] or p[3]) for p in pts if p[2] or p[3]])

    ax.set_xlabel("arithmetic intensity (FLOP / minimum byte)")
    ax.set_ylabel("TFLOP/s")
    title = f'tilegemm bench: {report.get("suite", "?")} on {env.get("gpu_name", "?")}'
    subtitle = (f'commit {env.get("commit", "?")}, timer {env.get("timer", "?")}, '
                f'{env.get("date_utc", "")}')
    ax.set_title(f"{title}\n{subtitle}", fontsize=10)
    ax.grid(True, which="both", linewidth=0.3, alpha=0.5)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    os.makedirs(out_dir, exist_ok=True)
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out_dir, f"roofline.{ext}"))
    plt.close(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
