"""memory-compare.py ZERO.json REFERENCE.json: prints the table comparing
two `mcpbench.mjs --json` runs of one plan, zero's and the reference's.
Used by memory.sh and memory-large.sh."""
import json, sys

z, r = (json.load(open(p))["median"] for p in sys.argv[1:3])
print("| phase (sequential calls) | zero | reference | calls/s, zero / reference |")
print("|---|---|---|---|")
for zp, rp in zip(z["phases"], r["phases"]):
    print(f"| {zp['name']} ({zp['n']} calls) | {zp['calls_per_s']:,.0f}/s, p50 {zp['p50_ms']:.2f} ms | "
          f"{rp['calls_per_s']:,.1f}/s, p50 {rp['p50_ms']:.2f} ms | **{zp['calls_per_s'] / rp['calls_per_s']:.1f}x** |")
print(f"| spawn to initialized | {z['init_ms']:.1f} ms | {r['init_ms']:.1f} ms | |")
print(f"| peak RSS | {z['server_peak_rss_mb']:.1f} MB | {r['server_peak_rss_mb']:.1f} MB | |")
