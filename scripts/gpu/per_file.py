"""Pass/fail/skip counts per test file from pytest's JUnit XML files (scripts/gpu/run.sh's suites).

Usage: python3 scripts/gpu/per_file.py results-1.xml [results-2.xml ...]
Prints a Markdown table (file, passed, failed, skipped) and the failed tests' names.
"""

import collections
import sys
import xml.etree.ElementTree as ElementTree


def main(paths):
    counts = collections.defaultdict(collections.Counter)
    failed = []
    for path in paths:
        for case in ElementTree.parse(path).iter("testcase"):
            file = case.get("file") or case.get("classname", "").replace(".", "/") + ".py"
            outcome = "passed"
            for child in case:
                if child.tag in ("failure", "error"):
                    outcome = "failed"
                elif child.tag == "skipped":
                    outcome = "skipped"
            counts[file][outcome] += 1
            if outcome == "failed":
                failed.append(f"{case.get('classname')}::{case.get('name')}")
    print("| file | passed | failed | skipped |")
    print("| --- | ---: | ---: | ---: |")
    total = collections.Counter()
    for file in sorted(counts):
        c = counts[file]
        total.update(c)
        print(f"| {file} | {c['passed']} | {c['failed']} | {c['skipped']} |")
    print(f"| all | {total['passed']} | {total['failed']} | {total['skipped']} |")
    for name in failed:
        print("FAILED", name)


if __name__ == "__main__":
    main(sys.argv[1:])
