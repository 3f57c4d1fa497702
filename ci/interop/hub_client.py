"""The reference server's MCP hub as the client under test of the official MCP conformance suite.

The suite (`conformance client --command "python3 ci/interop/hub_client.py"`) starts an MCP server of
its own, appends that server's URL to the command and names the scenario in MCP_CONFORMANCE_SCENARIO.
This script starts `reference-server` with that URL as a Streamable HTTP entry of `mcp_servers` and a
mock-engine script that makes the model call the scenario's tool, sends one real chat request with
`"strata_mcp": true`, and checks that the result event carries the suite's answer. It exits 0 when the
turn went as the scenario expects, 1 otherwise (the suite judges what it saw on its side either way).

Usage: hub_client.py SERVER_URL   (REFERENCE_SERVER names the binary; default target/debug/reference-server)
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = "conformance"
API_KEY = "conformance-hub-key"

# Tools whose x-mcp-header annotation is invalid (SEP-2243): the hub must leave them out, so the model's
# call is answered by the hub ("there is no tool named …") and never reaches the suite's server.
INVALID_HEADER_TOOLS = [
    "invalid_empty_header", "invalid_object_header", "invalid_array_header", "invalid_null_header",
    "invalid_number_header", "invalid_duplicate_same_case", "invalid_duplicate_diff_case",
    "invalid_space_in_name", "invalid_colon_in_name", "invalid_non_ascii_name", "invalid_control_char_name",
]  # fmt: skip
REFUSED = None  # in place of a text: the result must be the hub's own "there is no tool named" error

# scenario -> the calls the model makes in one pass, each (tool, arguments, text its result must contain).
# A scenario whose MCP_CONFORMANCE_CONTEXT lists `toolCalls` makes those calls instead.
CALLS = {
    "tools_call": [("add_numbers", {"a": 2, "b": 3}, "The sum of 2 and 3 is 5")],
    "sse-retry": [("test_reconnection", {}, "Reconnection test completed successfully")],
    "elicitation-sep1034-client-defaults": [("test_client_elicitation_defaults", {}, "Elicitation completed")],
    "http-invalid-tool-headers": [("valid_tool", {}, "")] + [(t, {}, REFUSED) for t in INVALID_HEADER_TOOLS],
}


def scenario_calls(scenario):
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if context.get("toolCalls"):
        return [(c["name"], c.get("arguments") or {}, "") for c in context["toolCalls"]]
    return CALLS.get(scenario, [])


def call_script(calls):
    """A Strata-format mock-engine pass that calls each `<server>__<tool>` (strata-wire C-M2); a
    non-string value is written as JSON, which the hub reads back for non-string parameters (SPEC 6.4)."""
    script = "</think>\n\nLet me check.\n"
    for tool, arguments, _ in calls:
        script += f"\n<tool_call>\n<function={SERVER}__{tool}>\n"
        for key, value in arguments.items():
            text = value if isinstance(value, str) else json.dumps(value)
            script += f"<parameter={key}>\n{text}\n</parameter>\n"
        script += "</function>\n</tool_call>"
    return script


def expected(result, want):
    if want is REFUSED:
        return result.get("ok") is False and "there is no tool named" in result.get("text", "")
    return bool(result.get("ok")) and want in result.get("text", "")


def post(base, path, body):
    request = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + API_KEY, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


def get(base, path):
    request = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + API_KEY})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def main():
    url = sys.argv[1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    calls = scenario_calls(scenario)
    scripts = ([call_script(calls)] if calls else []) + ["</think>\n\nDone."]
    binary = os.environ.get("REFERENCE_SERVER", os.path.join(ROOT, "target", "debug", "reference-server"))
    with tempfile.TemporaryDirectory() as work:
        config = os.path.join(work, "run.json")
        with open(config, "w") as f:
            json.dump(
                {
                    "api_key": API_KEY,
                    "mcp_servers": {SERVER: {"url": url}},
                    "mcp": {"timeout_s": 20, "start_timeout_s": 20},
                    "engine": {"scripts": scripts, "restart_per_request": True},
                },
                f,
            )
        server = subprocess.Popen(
            [binary, "--config", config, "--port", "0"], stdout=subprocess.PIPE, stderr=sys.stderr, text=True
        )
        try:
            line = server.stdout.readline().strip()
            if not line.startswith("listening on "):
                print(f"hub_client: reference-server did not start ({line!r})", file=sys.stderr)
                return 1
            base = line.removeprefix("listening on ")
            # As a person would: the chat is sent once the hub has connected (the server waits up to
            # 10 s for servers still starting anyway, SPEC 6.1).
            for _ in range(200):
                if all(s["status"] != "starting" for s in get(base, "/mcp")["servers"]):
                    break
                time.sleep(0.05)
            answer = post(
                base,
                "/v1/chat/completions",
                {"model": "mock", "strata_mcp": True, "messages": [{"role": "user", "content": "Use the tool."}]},
            )
            hub = get(base, "/mcp")
            entry = next((s for s in hub["servers"] if s["name"] == SERVER), None)
            print(f"hub_client: {scenario}: server status {entry and entry['status']}, error {entry and entry['error']}")
            if entry is None or entry["status"] != "ready":
                return 1
            if not calls:
                return 0
            events = answer["choices"][0]["message"].get("strata_mcp") or []
            results = [e for e in events if e.get("event") == "result"]
            print(f"hub_client: {scenario}: events {[e.get('event') for e in events]}")
            for result in results:
                print(f"hub_client: {scenario}: result ok={result.get('ok')} text={result.get('text')!r}")
            ok = len(results) == len(calls) and all(
                expected(result, want) for result, (_, _, want) in zip(results, calls)
            )
            return 0 if ok else 1
        finally:
            server.terminate()
            server.wait(timeout=20)


if __name__ == "__main__":
    sys.exit(main())
