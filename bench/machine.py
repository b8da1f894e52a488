"""What the benchmarks ran on, and where their raw numbers go (`bench/results/*.csv`)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

RESULTS = Path(__file__).parent / "results"


def machine_facts() -> dict[str, str]:
    """Core count and memory, written next to every raw number."""
    memory_kib = next(
        int(line.split()[1])
        for line in Path("/proc/meminfo").read_text().splitlines()
        if line.startswith("MemTotal:")
    )
    return {"cores": str(os.cpu_count()), "memory_gib": f"{memory_kib / 2**20:.1f}"}


def spark_line_suffix() -> str:
    """`` on the default Spark line (3.5), `_spark41` on 4.1: what results files end in."""
    import pyspark

    major, minor = pyspark.__version__.split(".")[:2]
    return "" if major == "3" else f"_spark{major}{minor}"


def write_csv(name: str, rows: list[dict[str, object]]) -> Path:
    """Writes `bench/results/<name>.csv` on Spark 3.5 (`<name>_spark41.csv` on 4.1), one
    line per measurement plus the machine's facts on each, replacing the previous run's
    file of that Spark line."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}{spark_line_suffix()}.csv"
    facts = machine_facts()
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=[*rows[0], *facts])
        writer.writeheader()
        for row in rows:
            writer.writerow({**row, **facts})
    return path
