"""The playground page in a real headless browser (Debian's Chromium, driven by Playwright).

A person's session: the page opens with an example, a policy and a payload are pasted into the
editors, Ctrl+Enter runs them, the verdict is read off the page and compared with what the API
answers for the same request; violations are marked on their payload lines; a share link
reopens the same policy and payload (and kyverno-json's ``?content=`` links open too); a broken
policy shows the server's error; a CEL policy runs from the examples. Every request the
page makes goes to the server itself.

Skipped, with the reason shown, only where no Chromium is installed
(``apt-get install chromium chromium-driver``). Playwright never downloads a browser here: it
drives /usr/bin/chromium. Set ASSERTREE_SCREENSHOTS=DIR to keep the screenshots it takes.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import shutil
from pathlib import Path

import pytest
from serve_support import REPO, running_server

CHROMIUM = next((path for path in (shutil.which("chromium"), "/usr/bin/chromium") if path and Path(path).is_file()),
                None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no browser installed: the playground page test needs "
                                "Chromium (apt-get install -y chromium chromium-driver)")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
KUBERNETES = REPO / "samples" / "kubernetes"


@pytest.fixture(scope="module")
def server():
    with running_server("--policy", str(KUBERNETES / "policies")) as running:
        yield running


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def shots(tmp_path):
    folder = Path(os.environ.get("ASSERTREE_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1500, "height": 900})
    opened = context.new_page()
    opened.requests = []
    opened.errors = []
    opened.on("request", lambda request: opened.requests.append(request.url))
    opened.on("pageerror", lambda error: opened.errors.append(str(error)))
    yield opened
    assert opened.errors == []
    assert [url for url in opened.requests if not url.startswith((server.url, "data:"))] == []
    context.close()


def open_page(page, url):
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]", timeout=15000)


def paste(page, pane, text):
    """Click into an editor, select everything, and paste `text` (one input event, as a paste is)."""
    page.click(f"#{pane} .CodeMirror-lines")
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(text)
    assert page.evaluate(f"window.playground.{pane}.getValue()") == text


def run(page):
    runs = int(page.evaluate("document.body.dataset.runs || '0'"))
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(f'body[data-runs="{runs + 1}"]', timeout=15000)


def cards(page):
    return page.eval_on_selector_all(".result", """nodes => nodes.map(n => ({
        result: n.dataset.result, names: n.querySelector('.names').textContent}))""")


def test_paste_run_and_read_the_verdict(page, server, shots):
    open_page(page, server.url)
    policy = (KUBERNETES / "policies" / "no-privileged.yaml").read_text()
    payload = (KUBERNETES / "deployment-bad.yaml").read_text()
    paste(page, "policy", policy)
    paste(page, "payload", payload)
    assert "ValidatingPolicy (json.kyverno.io)" in page.text_content("#language")
    run(page)

    api = server.client().post("/api/playground/scan?details=true", json={"policy": policy, "payload": payload})
    answered = api.json()["results"]
    shown = cards(page)
    assert [c["result"] for c in shown] == [r["result"] for r in answered]
    assert [c["names"] for c in shown] == [f"{r['policy']} / {r['rule']}" for r in answered]
    assert {"fail", "pass"} <= {c["result"] for c in shown}
    assert "1 failed" in page.text_content("#summary") and "1 passed" in page.text_content("#summary")

    error_lines = sorted({e["line"] for r in answered for v in r.get("violations", []) for e in v["errors"]})
    marked = page.evaluate("""() => { const cm = window.playground.payload, lines = [];
        cm.eachLine(h => { if ((h.bgClass || '').includes('cm-violation-line')) lines.push(cm.getLineNumber(h) + 1); });
        return lines; }""")
    assert marked == error_lines and marked
    texts = [payload.splitlines()[line - 1] for line in marked]
    assert any("name: worker" in text for text in texts)  # the privileged container of legacy-batch
    page.screenshot(path=str(shots / "playground-verdict.png"))

    page.click(".goto >> nth=0")
    assert page.evaluate("window.playground.payload.getCursor().line") + 1 == error_lines[0]


def test_share_links_reopen_policy_and_payload(page, server):
    open_page(page, server.url)
    policy = (KUBERNETES / "policies" / "required-labels.yaml").read_text()
    payload = (KUBERNETES / "deployment-good.yaml").read_text()
    paste(page, "policy", policy)
    paste(page, "payload", payload)
    page.fill("#preprocessors", "@")
    page.click("#share")
    link = ""
    for _ in range(200):  # compressing is asynchronous; polled from here (the page's CSP forbids eval'd waits)
        link = page.input_value("#share-url")
        if link:
            break
        page.wait_for_timeout(50)
    assert link.startswith(server.url) and "#content=" in link and len(link) < len(policy) + len(payload)

    page.goto("about:blank")
    open_page(page, link)
    assert page.evaluate("window.playground.policy.getValue()") == policy
    assert page.evaluate("window.playground.payload.getValue()") == payload
    assert page.input_value("#preprocessors") == "@"
    run(page)
    assert {c["result"] for c in cards(page)} == {"pass"}

    # kyverno-json's playground writes ?content=<base64 of pako.gzip(JSON)>: those links open too
    content = base64.b64encode(gzip.compress(json.dumps({"policy": policy, "payload": "a: 1"}).encode())).decode()
    open_page(page, f"{server.url}?content={content}")
    assert page.evaluate("window.playground.policy.getValue()") == policy
    assert page.evaluate("window.playground.payload.getValue()") == "a: 1"


def test_a_broken_policy_shows_the_servers_error(page, server, shots):
    open_page(page, server.url)
    paste(page, "policy", "apiVersion: json.kyverno.io/v1alpha1\nkind: ValidatingPolicy\nmetadata:\n  name: x\n"
                          "spec:\n  rules:\n    - name: r\n      asert: {}\n")
    run(page)
    error = page.text_content(".request-error")
    assert "invalid policy: policy:8:" in error and "asert" in error
    marked = page.evaluate("""() => { const cm = window.playground.policy, lines = [];
        cm.eachLine(h => { if ((h.bgClass || '').includes('cm-violation-line')) lines.push(cm.getLineNumber(h) + 1); });
        return lines; }""")
    assert marked == [8]  # the policy line the error names
    page.screenshot(path=str(shots / "playground-error.png"))


def test_a_cel_policy_from_the_examples_runs(page, server, shots):
    open_page(page, server.url)
    options = page.eval_on_selector_all("#examples optgroup", """groups => groups.map(g => ({label: g.label,
        values: Array.from(g.querySelectorAll('option')).map(o => o.value)}))""")
    value = next(group["values"][0] for group in options if group["label"] == "Kyverno CEL ValidatingPolicy")
    page.select_option("#examples", value)
    assert "ValidatingPolicy (policies.kyverno.io)" in page.text_content("#language")
    run(page)
    shown = cards(page)
    assert [c["result"] for c in shown] == ["fail"]
    assert "Pods must not use the host network." in page.text_content(".result")
    page.screenshot(path=str(shots / "playground-cel.png"))


def test_a_failing_result_shows_how_it_was_reached(page, server, shots):
    examples = REPO / "assertree" / "serve" / "examples" / "kyverno-clusterpolicy"
    open_page(page, server.url)
    payload = (examples / "payload-bad.yaml").read_text()
    paste(page, "policy", (examples / "policy.yaml").read_text())
    paste(page, "payload", payload)
    run(page)
    steps = page.eval_on_selector_all(".result.fail .explanation .step", """rows => rows.map(r => ({
        text: r.querySelector('.text').textContent, line: (r.querySelector('.goto') || {}).textContent}))""")
    assert steps == [
        {"text": "pattern -> fail (resource value 'false' does not match 'true' at path "
                 "/spec/securityContext/runAsNonRoot/)", "line": None},
        {"text": "spec.securityContext.runAsNonRoot = false, expected true -> fail (at "
                 "/spec/securityContext/runAsNonRoot/)", "line": "line 9"},
    ]
    assert payload.splitlines()[8].strip() == "runAsNonRoot: false"
    page.click(".explanation .goto")
    assert page.evaluate("window.playground.payload.getCursor().line") == 8
    page.screenshot(path=str(shots / "playground-explain.png"))
