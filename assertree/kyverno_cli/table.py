"""The Kyverno CLI's result tables, as ``kyverno test`` and ``kyverno apply --table`` print them.

The CLI prints rows through lensesio/tableprinter over kataras/tablewriter
(``output/table/printer.go``): a ``│────│`` rule above and below the header and
under the last row, ``│ cell │`` rows, every column left-aligned and as wide as
its widest line, headers upper-cased (``ID``, ``POLICY``, ...). Past ten rows
the first header carries the count (``ID (11)``). A cell longer than 300 bytes
is broken between words (tableprinter's ``cellText``, including its
arithmetic), and a cell of several lines makes its row that many lines tall.

Colours are the CLI's (fatih/color: bold green ``Pass``, bold red ``Fail``,
bold cyan names; a black-and-green header) and only on a terminal: the CLI
colours the header even in a CI log, assertree never writes escape codes where
no terminal reads them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Paint", "render"]

_ANSI = re.compile("\033\\[(?:[0-9]{1,3}(?:;[0-9]{1,3})*)?[mK]")
ROW_CHAR_LIMIT = 300  # tableprinter's RowCharLimit as the CLI sets it
_HEADER = "\033[40;32m"  # tablewriter.Color(BgBlackColor, FgGreenColor)


@dataclass(frozen=True)
class Paint:
    """fatih/color's sequences, or nothing: how a cell's words are coloured (``Paint(False)`` leaves them)."""

    enabled: bool = False

    def _wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled and text else text

    def green(self, text: str) -> str:
        return self._wrap("32;1", text)

    def red(self, text: str) -> str:
        return self._wrap("31;1", text)

    def yellow(self, text: str) -> str:
        return self._wrap("33;1", text)

    def cyan(self, text: str) -> str:
        return self._wrap("36;1", text)

    def policy(self, namespace: str, name: str) -> str:
        """``color.Policy``: ``ns/name`` (a name with a slash is split there), each part cyan."""
        if "/" in name:
            namespace, name = name.split("/")[0], name.split("/")[1]
        return self.cyan(name) if not namespace else f"{self.cyan(namespace)}/{self.cyan(name)}"

    def resource(self, kind: str, namespace: str, name: str) -> str:
        """``color.Resource``: ``ns/Kind/name`` or ``Kind/name``."""
        if "/" in name:
            namespace, name = name.split("/")[0], name.split("/")[1]
        if not namespace:
            return f"{self.cyan(kind)}/{self.cyan(name)}"
        return f"{self.cyan(namespace)}/{self.cyan(kind)}/{self.cyan(name)}"

    def result(self, word: str) -> str:
        """``Pass`` green, ``Fail``/``Error`` red, ``Warn`` yellow, ``Skip`` cyan."""
        return {"Pass": self.green, "Fail": self.red, "Error": self.red, "Warn": self.yellow,
                "Skip": self.cyan}.get(word, str)(word)


def width(text: str) -> int:
    """How many terminal columns `text` takes (go-runewidth's count, escape sequences left out)."""
    total = 0
    for char in _ANSI.sub("", text):
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
            continue
        total += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return total


def cell_text(cell: str, limit: int = ROW_CHAR_LIMIT) -> str:
    """tableprinter's ``cellText``: a cell over `limit` bytes broken into lines between words."""
    data = cell.encode("utf-8")
    if "\n" in cell:
        if cell.endswith("\n"):
            trimmed = data[:-2].decode("utf-8", "ignore")  # the library drops two bytes here, not one
            if len(trimmed.encode("utf-8")) > limit:
                return cell_text(trimmed, limit)
            return trimmed
        return cell
    words = cell.strip().split()
    if not words:
        return cell
    out = words[0]
    remaining = limit - len(words[0].encode("utf-8"))
    for word in words[1:]:
        size = len(word.encode("utf-8"))
        if size + 1 <= remaining:
            out += " " + word
            remaining -= size + 2  # the library counts the space twice
            continue
        out += "\n" + word
        remaining = limit - size
    return out


def render(headers: Sequence[str], rows: Sequence[Sequence[str]], *, color: bool = False) -> str:
    """The table, each line ending with a line break; nothing at all when there is no row (as the CLI)."""
    if not rows:
        return ""
    headers = list(headers)
    if len(rows) > 10:
        headers[0] = f"{headers[0]} ({len(rows)}) "
    cells = [[cell_text(cell) if len(cell.encode("utf-8")) > ROW_CHAR_LIMIT else cell for cell in row]
             for row in rows]
    widths = [max(width(line) for line in header.split("\n")) for header in headers]
    for row in cells:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], *(width(line) for line in cell.split("\n")))
    rule = "│" + "".join("─" * (size + 2) + "│" for size in widths) + "\n"
    out = [rule, "│"]
    for header, size in zip(headers, widths, strict=True):
        title = _pad(header.strip().upper(), size)
        out.append(f" {_HEADER}{title}\033[0m │" if color else f" {title} │")
    out.append("\n")
    out.append(rule)
    for row in cells:
        split = [cell.split("\n") for cell in row]
        height = max(len(parts) for parts in split)
        for line in range(height):
            out.append("│")
            for parts, size in zip(split, widths, strict=True):
                out.append(f" {_pad(parts[line] if line < len(parts) else '', size)} │")
            out.append("\n")
    out.append(rule)
    return "".join(out)


def _pad(text: str, size: int) -> str:
    return text + " " * max(0, size - width(text))
