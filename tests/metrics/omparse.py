# SPDX-License-Identifier: MIT
"""Parses an exposition from stdin with the Prometheus project's own Python parsers (Debian's
python3-prometheus-client) and prints its samples as JSON: [[family, type, name, labels, value]].
argv[1]: "openmetrics" (the strict OpenMetrics 1.0 parser: # EOF, family names, escapes) or
"text" (the text format 0.0.4). Run by Debian's /usr/bin/python3, where that package lives, from
the metrics suite's tests (which may run under another python3). Exits 1 with the parser's
message when the exposition is invalid."""
import json
import sys

try:
    if sys.argv[1] == "openmetrics":
        from prometheus_client.openmetrics.parser import text_string_to_metric_families
    else:
        from prometheus_client.parser import text_string_to_metric_families
except ImportError as e:
    print(f"no prometheus_client: {e}", file=sys.stderr)
    sys.exit(77)
try:
    out = [[f.name, f.type, s.name, s.labels, s.value]
           for f in text_string_to_metric_families(sys.stdin.read()) for s in f.samples]
except Exception as e:  # the parsers raise ValueError and friends: any is "invalid"
    print(f"invalid exposition: {type(e).__name__}: {e}", file=sys.stderr)
    sys.exit(1)
json.dump(out, sys.stdout)
