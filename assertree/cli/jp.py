"""``assertree jp``: evaluate, parse and look up JMESPath expressions of the dialect."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from assertree.cli.help import Command

HELP = ("Evaluate, parse and look up JMESPath expressions of the dialect policies use (kyverno-json's, "
        "with Kyverno's functions).")
app = typer.Typer(help=HELP, invoke_without_command=True, add_completion=False)

QUERY_EXAMPLES = """Examples:

  assertree jp query -i plan.json "length(resource_changes[?change.actions[0] == 'delete'])"

  echo '{"a": "10Mi"}' | assertree jp query "add(a, '512Ki')"
"""
PARSE_EXAMPLES = r"""Examples:

  assertree jp parse "a.b[?c > \`1\`]"

  assertree jp parse -f expression.txt
"""
FUNCTION_EXAMPLES = """Examples:

  assertree jp function

  assertree jp function regex_match divide
"""


def read_expression_file(file: Path) -> str:
    """The expression a file holds (UTF-8, -16 or -32); a one-line error naming the file otherwise."""
    from assertree.documents.reader import read_text
    from assertree.errors import DocumentError, UsageError

    try:
        return read_text(file).strip()
    except DocumentError as error:
        raise UsageError.of(error.problem) from None


@app.callback()
def jp_group(context: typer.Context) -> None:
    """Evaluate, parse and look up JMESPath expressions of the dialect policies use (kyverno-json's, with
    Kyverno's functions)."""
    if context.invoked_subcommand is None:
        typer.echo(context.get_help())


@app.command("query", cls=Command, epilog=QUERY_EXAMPLES)
def query(
    expressions: Annotated[list[str] | None, typer.Argument(
        metavar="EXPR", help="Expressions to evaluate, each printed as JSON.", show_default=False)] = None,
    input_file: Annotated[Path | None, typer.Option(
        "--input", "-i", metavar="FILE", help="JSON or YAML document to search (default: stdin).",
        show_default=False)] = None,
    query_files: Annotated[list[Path] | None, typer.Option(
        "--query", "-q", metavar="FILE", help="File holding an expression. Repeatable.", show_default=False)] = None,
    compact: Annotated[bool, typer.Option("--compact", "-c", metavar="", help="Print JSON on one line.")] = False,
    unquoted: Annotated[bool, typer.Option(
        "--unquoted", "-u", metavar="", help="Print string results without quotes.")] = False,
) -> None:
    """Evaluate expressions against a JSON/YAML document and print each result as JSON."""
    from assertree import jp
    from assertree.errors import AssertreeError, UsageError
    from assertree.inputs.payload import read_payload

    texts = list(expressions or [])
    for file in query_files or []:
        texts.append(read_expression_file(file))
    if not texts and input_file is None:
        raise UsageError("at least one query or input object is required")
    compiled = []
    for text in texts:
        try:
            compiled.append(jp.compile(text))
        except jp.ParseError as error:
            raise UsageError(f"invalid expression:\n{error.pretty()}") from None
    document = read_payload(str(input_file) if input_file else "-").value
    for expression in compiled:
        try:
            result = expression.search(document)
        except jp.JMESPathError as error:
            raise AssertreeError(f"{expression.text}: {error}") from None
        sys.stdout.write(_format(result, compact=compact, unquoted=unquoted) + "\n")


def _format(value, *, compact: bool, unquoted: bool) -> str:
    import json

    from assertree.jp.values import go_float_word

    if unquoted and isinstance(value, str):
        return value
    try:
        return json.dumps(_printable(value), indent=None if compact else 2, ensure_ascii=False,
                          separators=(",", ":") if compact else None)
    except ValueError:
        return go_float_word(value) if isinstance(value, float) else repr(value)


def _printable(value):
    """Integral floats as integers, as go-jmespath prints its float64 results."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, list):
        return [_printable(item) for item in value]
    if isinstance(value, dict):
        return {key: _printable(item) for key, item in value.items()}
    return value


@app.command("parse", cls=Command, epilog=PARSE_EXAMPLES)
def parse(
    expressions: Annotated[list[str] | None, typer.Argument(
        metavar="EXPR", help="Expressions to parse (default: one read from stdin).", show_default=False)] = None,
    files: Annotated[list[Path] | None, typer.Option(
        "--file", "-f", metavar="FILE", help="File holding an expression. Repeatable.", show_default=False)] = None,
) -> None:
    """Print the syntax tree of expressions, as JSON."""
    import json

    from assertree import jp
    from assertree.errors import UsageError
    from assertree.jp.parser import parse as parse_expression

    texts = list(expressions or [])
    for file in files or []:
        texts.append(read_expression_file(file))
    if not texts:
        from assertree.documents.reader import read_stdin_text

        texts.append(read_stdin_text().strip())  # capped, as payloads are
    for text in texts:
        try:
            tree = parse_expression(text)
        except jp.ParseError as error:
            raise UsageError(f"invalid expression:\n{error.pretty()}") from None
        sys.stdout.write(f"# {text}\n{json.dumps(tree.to_dict(), indent=2, ensure_ascii=False)}\n")


# Section titles of `jp function --markdown`, in the order of the reference (docs/functions.md).
GROUP_TITLES = {
    "builtin": "JMESPath", "community": "JMESPath Community Edition", "kyverno_json": "kyverno-json",
    "strings": "Strings", "regex": "Regular expressions and wildcards", "encoding": "Encoding and parsing",
    "objects": "Objects and arrays", "arithmetic": "Arithmetic, quantities and durations", "times": "Time",
    "semver": "Versions", "x509": "Certificates", "images": "Images", "urls": "URLs", "randomness": "Random",
}


def markdown_reference(functions) -> str:
    """The function reference (docs/functions.md): one table per group, rows sorted by name."""
    groups: dict[str, list] = {}
    for item in functions:
        groups.setdefault(item.group, []).append(item)
    order = list(GROUP_TITLES) + sorted(set(groups) - set(GROUP_TITLES))
    out = []
    for group in order:
        if group not in groups:
            continue
        out.append(f"## {GROUP_TITLES.get(group, group)}\n\n| function | description |\n|---|---|\n")
        for item in sorted(groups[group], key=lambda f: f.name):
            signature, description = (text.replace("|", "\\|") for text in (item.signature, item.description))
            out.append(f"| `{signature}` | {description} |\n")
        out.append("\n")
    return "".join(out).rstrip("\n") + "\n"


@app.command("function", cls=Command, epilog=FUNCTION_EXAMPLES)
def function(
    names: Annotated[list[str] | None, typer.Argument(
        metavar="NAME", help="Functions to describe (default: all).", show_default=False)] = None,
    markdown: Annotated[bool, typer.Option(
        "--markdown", metavar="", help="Print the reference as Markdown tables.")] = False,
) -> None:
    """Describe the functions expressions can call: name, signature, group and what each does."""
    from assertree.errors import UsageError
    from assertree.jp.registry import all_functions, lookup

    if names:
        chosen = []
        for name in names:
            found = lookup(name)
            if found is None:
                raise UsageError(f"unknown function {name!r} (run 'assertree jp function' to list them)")
            chosen.append(found)
    else:
        chosen = all_functions()
    if markdown:
        sys.stdout.write(markdown_reference(chosen))
        return
    for item in chosen:
        sys.stdout.write(f"Name: {item.name}\n  Signature: {item.signature}\n  Group: {item.group}\n"
                         f"  Description: {item.description}\n\n")
