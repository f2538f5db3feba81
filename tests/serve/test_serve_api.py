"""``assertree serve``'s API, against a real server process over HTTP.

The answers are checked against the library run on the same input (kyverno-json's
response is a re-shaping of the scan: `message` holds the text report's violation
lines with one leading space fewer), never against hard-coded verdicts.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import socket
import subprocess
import xml.etree.ElementTree as ElementTree

import httpx
import pytest
import yaml
from serve_support import REPO, call_app, running_server, start_command, wait_for

import assertree
from assertree.inputs.payload import Payload
from assertree.report.text import rule_lines
from assertree.report.wording import rule_error
from assertree.serve import create_app

SAMPLES = REPO / "samples" / "kubernetes"
STATUS = {"pass": "PASSED", "fail": "FAILED", "error": "ERROR"}


@pytest.fixture(scope="module")
def policy_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("policies")
    for file in (SAMPLES / "policies").iterdir():
        shutil.copy(file, folder / file.name)
    return folder


@pytest.fixture(scope="module")
def server(policy_dir):
    with running_server("--policy", str(policy_dir)) as running:
        yield running


def bad_payload():
    return list(yaml.safe_load_all((SAMPLES / "deployment-bad.yaml").read_text()))


def library_results(payload, policy_paths):
    """The library's scan of a JSON payload, read as the server promises: one resource per item of a
    list, the payload named ``payload`` in reports."""
    resources = assertree.resources_from(Payload("payload", payload))
    return assertree.scan(resources, assertree.load_policies(*policy_paths))


def expected_entries(result):
    entries = []
    for rule_result in result.results:
        entry = {"policy": rule_result.policy.name, "rule": rule_result.rule.name}
        if rule_result.identifier:
            entry["identifier"] = rule_result.identifier
        entry["result"] = str(rule_result.status)
        entry["message"] = "\n".join(line[1:] for line in rule_lines(rule_result, kyverno_json=True)[1:])
        if rule_result.status == "error":
            entry["message"] = rule_error(rule_result.error, kyverno_json=True)
        entries.append(entry)
    return entries


def test_scan_answers_as_the_library_scans(server, policy_dir):
    payload = bad_payload()
    response = server.client().post("/api/scan", json={"payload": payload})
    assert response.status_code == 200
    body = response.json()
    assert list(body) == ["results"]
    want = expected_entries(library_results(payload, [policy_dir]))
    assert body["results"] == want
    assert {entry["result"] for entry in want} == {"pass", "fail"}  # the sample exercises both


def test_scan_applies_preprocessors_in_order(server, policy_dir):
    wrapped = {"items": {"list": bad_payload()}}
    response = server.client().post("/api/scan", json={"payload": wrapped, "preprocessors": ["items", "list"]})
    assert response.status_code == 200
    assert response.json()["results"] == expected_entries(library_results(bad_payload(), [policy_dir]))


@pytest.mark.parametrize("report_format", ["text", "json", "sarif", "junit", "github"])
def test_report_formats(server, policy_dir, report_format):
    payload = bad_payload()
    response = server.client().post(f"/api/scan?format={report_format}", json={"payload": payload})
    assert response.status_code == 200
    want = assertree.render(report_format, library_results(payload, [policy_dir]))
    assert response.text == want
    if report_format == "sarif":
        assert response.headers["content-type"] == "application/sarif+json"
        assert json.loads(response.text)["version"] == "2.1.0"
    if report_format == "junit":
        assert ElementTree.fromstring(response.text).tag in ("testsuites", "testsuite")


def test_health(server):
    body = server.client().get("/api/health").json()
    assert body["status"] == "ok"
    assert body["policies"]["policies"] == len(list((SAMPLES / "policies").iterdir()))
    assert body["policies"]["reload_error"] is None


MALFORMED = [
    (b"", "empty request body"),
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "must be a JSON object, not array"),
    (b'"text"', "must be a JSON object, not str"),
    (b"null", "must be a JSON object, not null"),
    (b"{}", "input payload is null"),
    (b'{"payload": null}', "input payload is null"),
    (b'{"payload": {}, "preprocessors": "a.b"}', "'preprocessors' must be a list of strings"),
    (b'{"payload": {}, "preprocessors": [1]}', "'preprocessors' must be a list of strings"),
    (b'{"payload": {}, "preprocessors": ["foo[["]}', "invalid preprocessor 'foo[['"),
    (b'{"payload": {"a": 1}, "preprocessors": ["b"]}', "returned null"),
    (b'{"payload": "just text"}', "payload must be an object or a list"),
    (b'{"payload": {}, "bindings": [1]}', "'bindings' must be an object"),
    (b"\xff\xfe\x00garbage", "not valid JSON"),
    (b"[" * 5000 + b"]" * 5000, "not valid JSON"),
]


@pytest.mark.parametrize(("body", "error"), MALFORMED, ids=[repr(b[:20]) for b, _ in MALFORMED])
def test_malformed_bodies_get_a_clear_400(server, body, error):
    response = server.client().post("/api/scan", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert error in response.json()["error"]


PLAYGROUND_MALFORMED = [
    ({"policy": "x"}, "input payload is null"),
    ({"payload": "a: 1"}, "input policy is null"),
    ({"payload": "a: 1", "policy": ""}, "input policy is null"),
    ({"payload": {"a": 1}, "policy": "x"}, "'payload' must be a string"),
    ({"payload": "a: [1", "policy": "kind: x"}, "failed to parse payload"),
    ({"payload": "a: 1", "policy": "a: [1"}, "failed to parse policies"),
    ({"payload": "a: 1", "policy": "kind: Deployment\napiVersion: apps/v1"}, "unsupported document"),
    ({"payload": "a: 1", "policy": "apiVersion: json.kyverno.io/v1alpha1\nkind: ValidatingPolicy\n"
                                    "metadata: {name: p}\nspec:\n  rules:\n  - name: r\n    assert: {all: [{}]}\n"},
     "policy:"),
    ({"payload": "a: 1", "policy": "x: 1", "terraform": "yes"}, "'terraform' must be true or false"),
    ({"payload": "a: 1", "policy": "x: 1", "terraform": True, "preprocessors": ["a"]}, "do not go together"),
]


@pytest.mark.parametrize(("body", "error"), PLAYGROUND_MALFORMED, ids=[e for _, e in PLAYGROUND_MALFORMED])
def test_playground_malformed_bodies_get_a_clear_400(server, body, error):
    response = server.client().post("/api/playground/scan", json=body)
    assert response.status_code == 400
    assert error in response.json()["error"]


def test_wrong_routes_methods_and_formats_answer_json(server):
    client = server.client()
    assert client.get("/api/nope").json() == {"error": "not found"}
    assert client.get("/api/nope").status_code == 404
    response = client.get("/api/scan")
    assert response.status_code == 405 and "not allowed" in response.json()["error"]
    response = client.post("/api/scan?format=pdf", json={"payload": {}})
    assert response.status_code == 400 and "unknown format 'pdf'" in response.json()["error"]


def test_body_over_the_limit_is_refused_and_the_server_keeps_serving(server):
    client = server.client()
    big = b'{"payload": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    json_type = {"Content-Type": "application/json"}
    response = client.post("/api/scan", content=big, headers=json_type)
    assert response.status_code == 413
    assert "larger than 2097152 bytes" in response.json()["error"]

    def chunks():  # no Content-Length: the limit is enforced while reading
        for _ in range(300):
            yield b"x" * 10_000

    response = client.post("/api/scan", content=chunks(), headers=json_type)
    assert response.status_code == 413
    assert client.get("/api/health").status_code == 200


def test_a_foreign_host_header_is_refused(server):
    response = server.client().get("/api/health", headers={"Host": "attacker.example"})
    assert response.status_code == 400


# What a page on another site can make a browser send without asking first (a "simple" request: no CORS
# preflight), and what a browser says about where a request comes from: the server does none of that work.
SIMPLE_TYPES = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None]


@pytest.mark.parametrize("content_type", SIMPLE_TYPES)
@pytest.mark.parametrize("route", ["/api/scan", "/api/playground/scan"])
def test_a_body_not_declared_json_is_refused(server, route, content_type):
    headers = {"Content-Type": content_type} if content_type else {}
    body = json.dumps({"payload": bad_payload(), "policy": "x"}).encode()
    response = server.client().post(route, content=body, headers=headers)
    assert response.status_code == 415
    assert response.json()["error"].startswith("send the request body as JSON with 'Content-Type: application/json'")


@pytest.mark.parametrize(("headers", "status"), [
    ({"Origin": "https://attacker.example"}, 403),
    ({"Origin": "null"}, 403),  # a sandboxed frame, a file:// page
    ({"Origin": "http://127.0.0.1:1"}, 403),  # another port of this machine: another origin
    ({"Sec-Fetch-Site": "cross-site"}, 403),
    ({"Sec-Fetch-Site": "same-site"}, 403),
    ({"Sec-Fetch-Site": "same-origin"}, 200),
    ({"Sec-Fetch-Site": "none"}, 200),  # typed into the address bar
    ({}, 200),  # curl, scripts, CI: no browser headers at all
], ids=lambda value: "-".join(f"{k}={v}" for k, v in value.items()) or "none" if isinstance(value, dict) else None)
def test_requests_from_other_origins_are_refused(server, headers, status):
    response = server.client().post("/api/scan", json={"payload": bad_payload()}, headers=headers)
    assert response.status_code == status, response.text
    if status == 403:
        assert "refused" in response.json()["error"]


def test_the_server_s_own_page_may_call_it(server):
    own = server.url.rstrip("/")
    response = server.client().post("/api/scan", json={"payload": bad_payload()},
                                    headers={"Origin": own, "Sec-Fetch-Site": "same-origin"})
    assert response.status_code == 200
    localhost = own.replace("127.0.0.1", "localhost")  # reached by another loopback name: that name's origin
    response = server.client().post(localhost.replace(own, "") + "/api/scan", json={"payload": bad_payload()},
                                    headers={"Origin": localhost, "Host": localhost.split("//", 1)[1]})
    assert response.status_code == 200


def test_a_cors_origin_may_call_it():
    app = create_app([SAMPLES / "policies"], cors_origins=["https://dashboard.example"])
    allowed = call_app(app, "POST", "/api/scan", json={"payload": bad_payload()},
                       headers={"Origin": "https://dashboard.example", "Sec-Fetch-Site": "cross-site"})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://dashboard.example"
    other = call_app(app, "POST", "/api/scan", json={"payload": bad_payload()},
                     headers={"Origin": "https://attacker.example"})
    assert other.status_code == 403


def test_100_concurrent_requests_with_malformed_ones_among_them(server, policy_dir):
    payload = bad_payload()
    want = expected_entries(library_results(payload, [policy_dir]))

    async def burst():
        limits = httpx.Limits(max_connections=100)
        async with httpx.AsyncClient(base_url=server.url, timeout=60, limits=limits) as client:
            requests = []
            for index in range(100):
                if index % 10 == 9:
                    requests.append(client.post("/api/scan", content=b"{broken",
                                                headers={"Content-Type": "application/json"}))
                elif index % 10 == 8:
                    requests.append(client.post("/api/playground/scan", json={
                        "payload": (SAMPLES / "deployment-bad.yaml").read_text(),
                        "policy": (SAMPLES / "policies" / "no-latest-tag.yaml").read_text()}))
                else:
                    requests.append(client.post("/api/scan", json={"payload": payload}))
            return await asyncio.wait_for(asyncio.gather(*requests), timeout=60)

    responses = asyncio.run(burst())
    for index, response in enumerate(responses):
        if index % 10 == 9:
            assert response.status_code == 400 and "not valid JSON" in response.json()["error"]
        elif index % 10 == 8:
            assert response.status_code == 200
            assert [r["policy"] for r in response.json()["results"]] == ["no-latest-tag", "no-latest-tag"]
        else:
            assert response.status_code == 200
            assert response.json()["results"] == want
    assert server.client().get("/api/health").json()["status"] == "ok"


NEW_POLICY = """\
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata:
  name: added-later
spec:
  rules:
    - name: has-kind
      assert:
        all:
          - check:
              kind: Deployment
"""


def test_policies_reload_when_files_change_and_a_broken_edit_keeps_the_old_ones(server, policy_dir):
    client = server.client()
    before = client.get("/api/health").json()["policies"]
    (policy_dir / "added.yaml").write_text(NEW_POLICY)
    assert wait_for(lambda: "added-later" in client.get("/api/health").json()["policies"]["names"])
    results = client.post("/api/scan", json={"payload": bad_payload()}).json()["results"]
    assert [r["result"] for r in results if r["policy"] == "added-later"] == ["pass", "fail"]

    (policy_dir / "added.yaml").write_text(NEW_POLICY.replace("assert:", "asert:"))
    assert wait_for(lambda: client.get("/api/health").json()["policies"]["reload_error"] is not None)
    health = client.get("/api/health").json()["policies"]
    assert "added.yaml" in health["reload_error"] and "added-later" in health["names"]
    assert client.post("/api/scan", json={"payload": bad_payload()}).status_code == 200

    (policy_dir / "added.yaml").unlink()
    assert wait_for(lambda: client.get("/api/health").json()["policies"]["names"] == before["names"])


def test_sighup_reloads_the_policies(server):
    client = server.client()
    before = client.get("/api/health").json()["policies"]
    server.process.send_signal(signal.SIGHUP)  # no file changed: only the signal can cause this reload
    assert wait_for(lambda: client.get("/api/health").json()["policies"]["reloads"] == before["reloads"] + 1)
    assert client.get("/api/health").json()["policies"]["names"] == before["names"]


def test_playground_only_server_refuses_api_scan_clearly():
    app = create_app()
    response = call_app(app, "POST", "/api/scan", json={"payload": {}})
    assert response.status_code == 400 and "--policy" in response.json()["error"]
    assert call_app(app, "GET", "/api/health").json()["policies"] is None


def test_bad_policies_or_a_busy_port_stop_the_start_with_exit_2(tmp_path):
    (tmp_path / "bad.yaml").write_text(NEW_POLICY.replace("assert:", "asert:"))
    done = subprocess.run(start_command("--policy", str(tmp_path)), capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "bad.yaml" in done.stderr and done.stderr.count("\n") == 1

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        command = start_command()
        command[command.index("--port") + 1] = str(port)
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
