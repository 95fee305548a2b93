#!/usr/bin/python3
"""prom_check.py FILE: parse FILE with Debian's python3-prometheus-client
text parser (prometheus_client.parser.text_string_to_metric_families) and
print one line per sample, "name{k="v",...} value", labels sorted; exit 1
with the parser's complaint when the text does not parse, when a family has
no HELP text or no type, or when a name lacks the ibsmd_ prefix.

Run with Debian's /usr/bin/python3: the package installs the module there."""
import sys

from prometheus_client.parser import text_string_to_metric_families


def main():
    if len(sys.argv) != 2:
        print("usage: prom_check.py FILE", file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as fp:
        text = fp.read()
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser raises ValueError and others
        print(f"{sys.argv[1]}: does not parse: {e!r}", file=sys.stderr)
        return 1
    if not families:
        print(f"{sys.argv[1]}: no metrics", file=sys.stderr)
        return 1
    for f in families:
        if not f.name.startswith("ibsmd_") or not f.documentation or f.type == "unknown":
            print(f"{sys.argv[1]}: family {f.name}: type {f.type}, help {f.documentation!r}",
                  file=sys.stderr)
            return 1
        for s in f.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
            print(f"{s.name}{{{labels}}} {s.value:.15g}" if labels else f"{s.name} {s.value:.15g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
