#!/usr/bin/env python3
"""One Markdown row per config-sweep JSON under the given directories (failed sanity checks included: the ablation
variants compute wrong results on purpose). Usage: json-table.py SWEEP_DIR... (variant names from each dir's logs)."""
import json, pathlib, re, sys
print("| sweep | run | shape | config | ours µs | cuBLAS µs | read B µs | error |")
print("|---|---:|---|---|---:|---:|---:|---|")
for d in sys.argv[1:]:
    for f in sorted(pathlib.Path(d).glob("*.json"), key=lambda p: int(p.stem)):
        r = json.load(open(f))["rows"][0]
        rb = r.get("b_read") or {}
        err = (r.get("error") or "")[:40]
        print(f"| {pathlib.Path(d).name} | {f.stem} | {r['shape']} | `{r['config']}` | {r['ours']['median_us']:.2f} | "
              f"{r['cublas']['median_us']:.2f} | {rb.get('median_us', 0):.2f} | {err} |")
