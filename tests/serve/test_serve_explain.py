"""``?explain=true``: the API's answers carry how each failing or erroring result was reached."""

from __future__ import annotations

import json

from serve_support import REPO, call_app

from assertree.serve import create_app

EXAMPLE = REPO / "assertree" / "serve" / "examples" / "kyverno-clusterpolicy"


def play(query: str) -> dict:
    body = {"policy": (EXAMPLE / "policy.yaml").read_text(), "payload": (EXAMPLE / "payload-bad.yaml").read_text()}
    response = call_app(create_app(), "POST", f"/api/playground/scan{query}", json=body)
    assert response.status_code == 200
    return response.json()


def test_the_playground_answer_has_the_explanation_with_payload_lines():
    [result] = play("?details=true&explain=true")["results"]
    assert result["result"] == "fail"
    steps = result["explanation"]["steps"]
    assert [(step["what"], step["outcome"], step.get("line")) for step in steps] == [
        ("pattern", "fail", None), ("spec.securityContext.runAsNonRoot", "fail", 9)]
    assert steps[1]["text"] == ("spec.securityContext.runAsNonRoot = false, expected true -> fail "
                                "(at /spec/securityContext/runAsNonRoot/)")
    assert result["explanation"]["truncated"] is False


def test_without_explain_the_answer_is_as_it_was():
    plain = play("?details=true")["results"]
    explained = play("?details=true&explain=true")["results"]
    assert "explanation" not in plain[0]
    assert [{key: value for key, value in entry.items() if key != "explanation"} for entry in explained] == plain
    assert play("")["results"] == play("?explain=true")["results"]  # kyverno-json's shape has no room for it


def test_a_report_format_carries_the_explanation_too():
    body = {"policy": (EXAMPLE / "policy.yaml").read_text(), "payload": (EXAMPLE / "payload-bad.yaml").read_text()}
    response = call_app(create_app(), "POST", "/api/playground/scan?format=json&explain=true", json=body)
    [rule] = json.loads(response.text)["reports"][0]["results"][0]["rules"]
    assert [step["what"] for step in rule["explanation"]["steps"]] == ["pattern", "spec.securityContext.runAsNonRoot"]
