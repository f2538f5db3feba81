"""The pre-commit hook, run for real by the `pre-commit` package as a user's repository would.

The hook repository is a temporary git repository holding this checkout's
files (uncommitted changes included), on a `main` branch, and the user
repository's `.pre-commit-config.yaml` is the snippet of docs/ci.md as written,
with the GitHub URL replaced by that repository's path: the instructions work
as they stand. (`pre-commit try-repo` cannot pass `args`, and the hook needs
`--policy`.) pre-commit installs the package into its own virtualenv, which
takes ~20 s.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "samples" / "kubernetes"
PRE_COMMIT = [sys.executable, "-m", "pre_commit"]



def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def hook_repository(path: Path) -> str:
    """A git repository with this checkout's package files; returns its commit."""
    listed = git(REPO, "ls-files", "--cached", "--others", "--exclude-standard").splitlines()
    for name in listed:
        if name.split("/", 1)[0] in {"tests", "samples", "bench"} or not (REPO / name).is_file():
            continue
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, path / name)
    git(path, "init", "-q")
    git(path, "checkout", "-q", "-b", "main")  # the branch the documented snippet names
    git(path, "add", ".")
    git(path, "commit", "-qm", "hook repository")
    return git(path, "rev-parse", "HEAD").strip()


def documented_config(hooks: Path) -> str:
    """The `.pre-commit-config.yaml` of docs/ci.md, as written, with the repository URL pointing at `hooks`."""
    page = (REPO / "docs" / "ci.md").read_text()
    snippet = page.split("## pre-commit", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    assert "repo: https://github.com/assertree/assertree" in snippet and "rev: main" in snippet
    return snippet.replace("https://github.com/assertree/assertree", str(hooks))


def test_hook_passes_good_files_and_fails_bad_ones(tmp_path):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    hook_repository(hooks)
    user = tmp_path / "user"
    shutil.copytree(SAMPLE / "policies", user / "policies")
    shutil.copy(SAMPLE / "deployment-good.yaml", user / "good.yaml")
    shutil.copy(SAMPLE / "deployment-bad.yaml", user / "bad.yaml")
    (user / ".pre-commit-config.yaml").write_text(documented_config(hooks))
    git(user, "init", "-q")
    git(user, "add", ".")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache")}

    def pre_commit(*files: str) -> subprocess.CompletedProcess:
        return subprocess.run([*PRE_COMMIT, "run", "--files", *files], cwd=user, env=env,
                              capture_output=True, text=True, timeout=600)

    passing = pre_commit("good.yaml")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "assertree" in passing.stdout and "Passed" in passing.stdout

    failing = pre_commit("good.yaml", "bad.yaml")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "FAILED (POLICY=no-privileged-containers, RULE=not-privileged, ID=legacy-batch, SOURCE=bad.yaml#0)" \
        in failing.stdout
    assert "good.yaml" not in failing.stdout  # --quiet: passing files print nothing
    assert "Traceback" not in failing.stdout + failing.stderr
