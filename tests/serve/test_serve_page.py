"""The playground page's files: served from assertree itself, vendored files listed with their
licence, examples up to date and each giving its verdict (no browser here; see test_serve_browser)."""

from __future__ import annotations

import hashlib
import json
import re
from html.parser import HTMLParser

import pytest
import yaml
from serve_support import call_app

from assertree.languages.load import LANGUAGES
from assertree.serve import create_app
from assertree.serve.app import STATIC
from assertree.serve.examples import build_examples, render_examples

ALLOWED_LICENCES = {"MIT", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0", "ISC"}
# languages whose examples ship before their registration in LANGUAGES lands (then this is unused)
LANGUAGE_MODULES = {"kyverno.io": "assertree.languages.kyverno.language"}


def licence_rows():
    rows = []
    for line in (STATIC / "LICENSES").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            path, package, origin, licence, digest = line.split()
            rows.append({"path": path, "package": package, "origin": origin, "licence": licence, "sha256": digest})
    return rows


def test_every_vendored_file_is_listed_with_its_licence_version_and_digest():
    rows = {row["path"]: row for row in licence_rows()}
    vendored = {p.relative_to(STATIC).as_posix() for p in (STATIC / "vendor").rglob("*") if p.is_file()}
    assert vendored == set(rows)
    for path, row in rows.items():
        assert row["licence"] in ALLOWED_LICENCES
        assert hashlib.sha256((STATIC / path).read_bytes()).hexdigest() == row["sha256"], path
        licence_file = (STATIC / path).parent / "LICENSE"
        assert row["licence"].split("-")[0] in licence_file.read_text()
    version = rows["vendor/codemirror/codemirror.js"]["package"].split("@")[1]
    assert f'CodeMirror.version = "{version}"' in (STATIC / "vendor/codemirror/codemirror.js").read_text()


class _References(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "href") and value:
                self.found.append((tag, value))


def test_the_page_loads_only_files_this_server_serves():
    parser = _References()
    parser.feed((STATIC / "index.html").read_text())
    assert parser.found
    for _tag, reference in parser.found:
        if reference.startswith("data:"):
            continue
        assert not re.match(r"^([a-z]+:)?//", reference), reference
        assert reference.startswith("static/"), reference
        assert (STATIC / reference.removeprefix("static/")).is_file(), reference
    for script in ("playground.js", "vendor/codemirror/codemirror.js"):
        assert not re.search(r"""fetch\(\s*["'`]https?:""", (STATIC / script).read_text())


def test_the_page_is_served_with_a_policy_that_forbids_other_origins():
    app = create_app()
    page = call_app(app, "GET", "/")
    assert page.status_code == 200 and "<title>assertree playground</title>" in page.text
    policy = page.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "connect-src 'self'" in policy and "script-src 'self'" in policy
    for path in ("static/playground.js", "static/vendor/codemirror/codemirror.js", "static/examples.json"):
        assert call_app(app, "GET", "/" + path).status_code == 200


def test_examples_json_is_up_to_date():
    assert (STATIC / "examples.json").read_text() == render_examples(build_examples()), (
        "run: python -m assertree.serve.examples")


EXAMPLES = json.loads((STATIC / "examples.json").read_text())["examples"]


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["name"] for e in EXAMPLES])
def test_each_example_gives_its_verdict(example, monkeypatch):
    groups = {document["apiVersion"].split("/")[0] for document in yaml.safe_load_all(example["policy"])}
    for group in groups - set(LANGUAGES):
        monkeypatch.setitem(LANGUAGES, group, LANGUAGE_MODULES[group])
    body = {key: example[key] for key in ("policy", "payload", "preprocessors", "terraform")}
    response = call_app(create_app(), "POST", "/api/playground/scan?details=true", json=body)
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert results, "an example must check something"
    statuses = {result["result"] for result in results}
    if example["fails"]:
        assert "fail" in statuses
        failing = [r for r in results if r["result"] == "fail"]
        assert all(r.get("line") for r in failing)  # the page can point into the payload
    else:
        assert statuses == {"pass"}


def test_languages_route_lists_what_the_loader_reads():
    body = call_app(create_app(), "GET", "/api/languages").json()
    assert [language["group"] for language in body["languages"]] == list(LANGUAGES)
