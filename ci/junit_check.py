"""Reads mediacheck's JUnit report with junitparser (a JUnit consumer) and checks it against the JSON
report of the same run: one testsuite per SPEC section, every case once, failures and skips where the
JSON has them, and every message readable. Usage: junit_check.py REPORT.xml REPORT.json"""
import json
import sys

from junitparser import Failure, JUnitXml, Skipped

xml_path, json_path = sys.argv[1], sys.argv[2]
report = json.load(open(json_path))
verdicts = {v["id"]: v["outcome"] for v in report["verdicts"]}
xml = JUnitXml.fromfile(xml_path)
seen = {}
for suite in xml:
    assert suite.name.startswith("spec."), f"a testsuite named {suite.name!r}"
    for case in suite:
        case_id = case.name.split(" [")[0]
        kinds = {type(r).__name__ for r in case.result}
        seen[case_id] = "fail" if Failure.__name__ in kinds else "not-run" if Skipped.__name__ in kinds else "pass"
        for result in case.result:
            assert result.message is not None, f"{case_id}: a {type(result).__name__} without a message"
expected = {k: ("pass" if v in ("pass", "warn") else v) for k, v in verdicts.items()}
assert seen == expected, f"the JUnit report and the JSON report disagree: {set(seen.items()) ^ set(expected.items())}"
print(f"junit_check: {len(seen)} cases in {len(list(xml))} testsuites agree with the JSON report")
