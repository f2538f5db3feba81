// The assertree playground: two editors, one request to /api/playground/scan, the verdict.
// Everything runs from this server: CodeMirror is vendored under static/vendor, share links are
// compressed with the browser's own CompressionStream (gzip), nothing is fetched from elsewhere.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const editorOptions = { lineNumbers: true, tabSize: 2, indentWithTabs: false, lineWrapping: false,
                          gutters: ["CodeMirror-linenumbers", "violations"],
                          extraKeys: { Tab: (cm) => cm.replaceSelection("  ") } };
  const policy = CodeMirror($("policy"), Object.assign({ mode: "yaml" }, editorOptions));
  const payload = CodeMirror($("payload"), Object.assign({ mode: "yaml" }, editorOptions));
  let languages = [];
  let examples = [];
  let marked = [];

  // -- languages ------------------------------------------------------------------------------

  function documentsOf(text) {
    const trimmed = text.trim();
    if (trimmed.startsWith("{")) {
      try { const value = JSON.parse(trimmed); return [{ apiVersion: value.apiVersion, kind: value.kind }]; }
      catch (e) { /* not JSON yet: read it as YAML */ }
    }
    return text.split(/^---.*$/m).map((part) => {
      const api = part.match(/^apiVersion:\s*["']?([^\s"'#]+)/m);
      const kind = part.match(/^kind:\s*["']?([^\s"'#]+)/m);
      return { apiVersion: api && api[1], kind: kind && kind[1] };
    }).filter((doc) => doc.apiVersion || doc.kind);
  }

  function showLanguage() {
    const badge = $("language");
    const docs = documentsOf(policy.getValue());
    if (!docs.length) { badge.textContent = "no policy"; badge.className = "badge muted"; return; }
    const names = new Set();
    let unknown = false;
    for (const doc of docs) {
      const group = (doc.apiVersion || "").split("/")[0];
      const known = languages.find((language) => language.group === group);
      if (!known) unknown = true;
      names.add(`${doc.kind || "?"} (${group || "no apiVersion"})`);
    }
    badge.textContent = Array.from(names).join(", ");
    badge.className = "badge" + (unknown && languages.length ? " unknown" : "");
    badge.title = unknown ? "assertree reads: " + languages.map((l) => l.description).join("; ") : "";
    const payloadText = payload.getValue().trimStart();
    payload.setOption("mode", payloadText.startsWith("{") || payloadText.startsWith("[")
      ? { name: "javascript", json: true } : "yaml");
  }

  // -- running --------------------------------------------------------------------------------

  function preprocessors() {
    return $("preprocessors").value.split(";").map((item) => item.trim()).filter(Boolean);
  }

  function clearMarks() {
    if (policyMark) { policy.removeLineClass(policyMark, "background", "cm-violation-line"); policyMark = null; }
    for (const line of marked) {
      payload.removeLineClass(line, "background", "cm-violation-line");
    }
    payload.clearGutter("violations");
    marked = [];
  }

  function markLine(line, title) {
    const handle = payload.addLineClass(line - 1, "background", "cm-violation-line");
    if (!handle) return;
    marked.push(handle);
    const marker = document.createElement("span");
    marker.className = "violation-marker";
    marker.textContent = "●";
    marker.title = title;
    payload.setGutterMarker(handle, "violations", marker);
  }

  function gotoLine(line) {
    payload.focus();
    payload.setCursor({ line: line - 1, ch: 0 });
    payload.scrollIntoView({ line: line - 1, ch: 0 }, 80);
    const handle = payload.addLineClass(line - 1, "background", "cm-flash-line");
    setTimeout(() => payload.removeLineClass(handle, "background", "cm-flash-line"), 900);
  }

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function lineButton(line) {
    const button = element("button", "goto", `line ${line}`);
    button.addEventListener("click", () => gotoLine(line));
    return button;
  }

  function showSummary(results) {
    const summary = $("summary");
    summary.replaceChildren();
    const counts = {};
    for (const result of results) counts[result.result] = (counts[result.result] || 0) + 1;
    const words = { pass: "passed", fail: "failed", error: "errors", skip: "skipped", warn: "warnings" };
    for (const status of ["fail", "error", "warn", "pass", "skip"]) {
      if (counts[status]) summary.append(element("span", `chip ${status}`, `${counts[status]} ${words[status]}`));
    }
  }

  function showResults(results) {
    const verdict = $("verdict");
    verdict.replaceChildren();
    clearMarks();
    showSummary(results);
    if (!results.length) {
      verdict.append(element("p", "muted no-results",
        "No rule applied to the payload: nothing was checked (look at the rules' match blocks)."));
      return;
    }
    for (const result of results) {
      const card = element("div", `result ${result.result}`);
      card.dataset.result = result.result;
      const head = element("div", "result-head");
      head.append(element("span", "status", result.result), element("span", "names", `${result.policy} / ${result.rule}`));
      if (result.identifier) head.append(element("span", "ident", `ID=${result.identifier}`));
      if (typeof result.resource === "number") head.append(element("span", "ident", `resource #${result.resource}`));
      card.append(head);
      let lines = 0;
      for (const violation of result.violations || []) {
        const block = element("div", "violation");
        block.append(element("div", "headline", (violation.message ? violation.message + " " : "") + `(CHECK=${violation.check})`));
        for (const error of violation.errors) {
          const row = element("div", "field-error");
          if (error.line) {
            row.append(lineButton(error.line));
            markLine(error.line, `${result.policy}/${result.rule}: ${error.body}`);
            lines += 1;
          } else {
            row.append(element("span"));
          }
          row.append(element("span", "body", error.body), element("span", "path", `PATH=${error.field}`));
          block.append(row);
        }
        card.append(block);
      }
      if (!(result.violations || []).length && result.message) {
        card.append(element("div", "message", result.message));
      }
      if (result.explanation && result.explanation.steps.length) card.append(explanationOf(result.explanation));
      if (result.result !== "pass" && !lines && result.line) {
        const row = element("div", "field-error");
        row.append(lineButton(result.line), element("span", "path", "the resource"));
        card.append(row);
        markLine(result.line, `${result.policy}/${result.rule}`);
      }
      verdict.append(card);
    }
  }

  // How a failing or erroring result was reached (?explain=true): one line per step, nested by depth;
  // a step that is a field of the payload has a button to its line.
  function explanationOf(explanation) {
    const how = element("details", "explanation");
    how.open = true;
    how.append(element("summary", "", "How it was reached"));
    for (const step of explanation.steps) {
      const row = element("div", `step ${step.outcome || ""}`);
      row.style.paddingLeft = `${step.depth * 14}px`;
      row.append(step.line ? lineButton(step.line) : element("span"), element("span", "text", step.text));
      how.append(row);
    }
    if (explanation.truncated) how.append(element("div", "muted", "... (more steps left out)"));
    return how;
  }

  let policyMark = null;

  function showError(text) {
    clearMarks();
    const where = text.match(/\bpolicy:(\d+):/);  // "invalid policy: policy:8:7: spec.rules[0]...": mark that line
    if (where) {
      policyMark = policy.addLineClass(Number(where[1]) - 1, "background", "cm-violation-line");
      policy.scrollIntoView({ line: Number(where[1]) - 1, ch: 0 }, 80);
    }
    $("summary").replaceChildren(element("span", "chip error", "request refused"));
    $("verdict").replaceChildren(element("div", "request-error", text));
  }

  async function run() {
    const button = $("run");
    button.disabled = true;
    $("verdict").classList.add("running");
    try {
      const response = await fetch("api/playground/scan?details=true&explain=true", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ policy: policy.getValue(), payload: payload.getValue(),
                               preprocessors: preprocessors(), terraform: $("terraform").checked }),
      });
      const body = await response.json();
      if (!response.ok) showError(body.error || `HTTP ${response.status}`);
      else showResults(body.results);
    } catch (error) {
      showError(`The server did not answer: ${error}`);
    } finally {
      button.disabled = false;
      $("verdict").classList.remove("running");
      document.body.dataset.runs = String(Number(document.body.dataset.runs || 0) + 1);
    }
  }

  // -- share links: {policy, payload, ...} as gzip, base64url, in the address's fragment ---------

  async function gzip(text) {
    const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  async function gunzip(bytes) {
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return await new Response(stream).text();
  }

  function toBase64Url(bytes) {
    let binary = "";
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function fromBase64(text) {
    let standard = text.replace(/-/g, "+").replace(/_/g, "/").replace(/\s/g, "+");
    while (standard.length % 4) standard += "=";
    return Uint8Array.from(atob(standard), (c) => c.charCodeAt(0));
  }

  async function share() {
    const state = { policy: policy.getValue(), payload: payload.getValue(), preprocessors: preprocessors(),
                    terraform: $("terraform").checked };
    const url = new URL(window.location.href);
    url.search = "";
    url.hash = "content=" + toBase64Url(await gzip(JSON.stringify(state)));
    window.history.replaceState({}, "", url.toString());
    $("share-box").hidden = false;
    $("share-url").value = url.toString();
  }

  async function loadShared() {
    // ours: #content=<base64url gzip JSON>; kyverno-json's playground: ?content=<base64 gzip JSON>
    const fromHash = new URLSearchParams(window.location.hash.slice(1)).get("content");
    const content = fromHash || new URLSearchParams(window.location.search).get("content");
    if (!content) return false;
    try {
      const state = JSON.parse(await gunzip(fromBase64(content)));
      setState(state);
      return true;
    } catch (error) {
      showError(`This share link cannot be read: ${error}`);
      return false;
    }
  }

  function setState(state) {
    policy.setValue(state.policy || "");
    payload.setValue(state.payload || "");
    $("preprocessors").value = (state.preprocessors || []).join("; ");
    $("terraform").checked = Boolean(state.terraform);
    clearMarks();
    showLanguage();
  }

  // -- examples -------------------------------------------------------------------------------

  async function loadExamples() {
    const response = await fetch("static/examples.json");
    examples = (await response.json()).examples;
    const select = $("examples");
    const groups = {};
    examples.forEach((example, index) => {
      if (!groups[example.category]) {
        groups[example.category] = element("optgroup");
        groups[example.category].label = example.category;
        select.append(groups[example.category]);
      }
      const option = element("option", "", `${example.name}${example.fails ? " (fails)" : " (passes)"}`);
      option.value = String(index);
      groups[example.category].append(option);
    });
  }

  function chooseExample(index) {
    const example = examples[Number(index)];
    if (!example) return;
    setState(example);
    $("verdict").replaceChildren(element("p", "muted", "Press Run to check this example."));
    $("summary").replaceChildren();
  }

  async function start() {
    try {
      const body = await (await fetch("api/languages")).json();
      languages = body.languages;
      $("languages").textContent = "Policy languages: " + languages.map((l) => l.description).join(" · ");
    } catch (error) { /* the badge then only names the kind */ }
    await loadExamples();
    const shared = await loadShared();
    if (!shared) {
      const first = examples.findIndex((example) => example.category === "Kubernetes" && example.fails);
      if (first >= 0) { $("examples").value = String(first); chooseExample(first); }
    }
    document.body.dataset.ready = "true";
  }

  $("run").addEventListener("click", run);
  $("share").addEventListener("click", share);
  $("copy").addEventListener("click", async () => {
    $("share-url").select();
    try { await navigator.clipboard.writeText($("share-url").value); } catch (e) { document.execCommand("copy"); }
    $("copied").hidden = false;
    setTimeout(() => { $("copied").hidden = true; }, 2000);
  });
  $("examples").addEventListener("change", (event) => chooseExample(event.target.value));
  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") { event.preventDefault(); run(); }
  });
  policy.on("change", showLanguage);
  payload.on("change", showLanguage);
  window.playground = { policy, payload, run, share };
  start();
})();
