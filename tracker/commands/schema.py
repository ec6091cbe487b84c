"""``tracker schema [--results]``: JSON Schema of plan blocks (or of benchmark result files)."""

from __future__ import annotations

import json
import sys
from typing import TextIO


def run(results: bool = False, out: TextIO | None = None) -> int:
    """Print the schema as JSON; exit 0."""
    out = out or sys.stdout
    if results:
        from tracker.store.result_files import results_json_schema

        data = results_json_schema()
    else:
        from tracker.plans.schema import json_schema

        data = json_schema()
    out.write(json.dumps(data, indent=2) + "\n")
    return 0
