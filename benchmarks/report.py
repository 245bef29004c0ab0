"""Print medians, throughputs and ratios from a pytest-benchmark JSON file.

    python -m pytest benchmarks/ --benchmark-only --benchmark-json=bench.json
    python benchmarks/report.py bench.json

For every group: each benchmark's median; GB/s where the benchmark recorded
``extra_info["bytes"]``; and when the group holds a kafkapy benchmark beside others (the
kafka-python or crc32c-package twin of the same work), the ratio other/kafkapy of the medians
(> 1 means kafkapy is faster).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict


def main(path: str) -> None:
    with open(path) as f:
        benchmarks = json.load(f)["benchmarks"]
    groups: dict[str, list[dict]] = defaultdict(list)
    for bench in benchmarks:
        groups[bench["group"] or bench["name"]].append(bench)
    for group, items in sorted(groups.items()):
        print(group)
        ours = next((b for b in items if "kafkapy" in b["name"]), None)
        for bench in items:
            median = bench["stats"]["median"]
            line = f"  {bench['name']:<60} median {median * 1e6:12.1f} us"
            size = bench.get("extra_info", {}).get("bytes")
            if size:
                line += f"  {size / median / 1e9:8.2f} GB/s"
            if ours is not None and bench is not ours:
                line += f"  ratio vs kafkapy: {median / ours['stats']['median']:.1f}x"
            print(line)


if __name__ == "__main__":
    main(sys.argv[1])
