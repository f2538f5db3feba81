"""Cron schedules as Kyverno checks them: robfig/cron v3's ``ParseStandard``.

A CleanupPolicy's ``schedule`` is parsed by ``cron.ParseStandard`` when the
policy is admitted (``api/kyverno/v2``, ``ValidateSchedule``); a schedule it
rejects makes Kyverno refuse the policy. The standard parser takes

- five fields (minute 0-59, hour 0-23, day of month 1-31, month 1-12 or
  ``jan``-``dec``, day of week 0-6 or ``sun``-``sat``; names in any case), each a
  comma-separated list of ``*`` or ``?``, ``N``, ``N-M``, each with an optional
  ``/step`` (``N/step`` runs from N to the field's maximum);
- or a descriptor: ``@yearly``, ``@annually``, ``@monthly``, ``@weekly``,
  ``@daily``, ``@midnight``, ``@hourly``, ``@every <Go duration>``;
- optionally preceded by ``TZ=<zone>`` or ``CRON_TZ=<zone>``.

`schedule_problem` says what is wrong with a schedule, in robfig's words, or
None. Nothing here computes when a schedule fires: offline, assertree only
says what would be deleted. Written by hand rather than with a cron library
(croniter, ...): those accept other grammars (a seconds field, ``7`` for
Sunday, ``L``/``W``/``#``), and what matters here is exactly what robfig
refuses.
"""

from __future__ import annotations

__all__ = ["schedule_problem"]

_BOUNDS = ((0, 59, None), (0, 23, None), (1, 31, None),
           (1, 12, ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")),
           (0, 6, ("sun", "mon", "tue", "wed", "thu", "fri", "sat")))
_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")


class _Invalid(Exception):
    pass


def schedule_problem(spec: object) -> str | None:
    """Why robfig/cron's ``ParseStandard`` rejects `spec`, or None when it parses."""
    try:
        _parse(spec if isinstance(spec, str) else "")
    except _Invalid as problem:
        return str(problem)
    return None


def _parse(spec: str) -> None:
    if not spec:
        raise _Invalid("empty spec string")
    if spec.startswith(("TZ=", "CRON_TZ=")):
        zone, _, spec = spec.partition(" ")
        _check_zone(zone.split("=", 1)[1])
        spec = spec.strip()
    if spec.startswith("@"):
        _descriptor(spec)
        return
    fields = spec.split()
    if len(fields) != 5:
        raise _Invalid(f"expected exactly 5 fields, found {len(fields)}: {spec}")
    for text, (low, high, names) in zip(fields, _BOUNDS, strict=True):
        for part in text.split(","):
            _range(part, low, high, names)


def _descriptor(spec: str) -> None:
    if spec in _DESCRIPTORS:
        return
    if spec.startswith("@every "):
        from assertree.languages.kyverno.operators import parse_duration_text

        text = spec[len("@every "):]
        if parse_duration_text(text) is None:
            raise _Invalid(f"failed to parse duration {spec}: time: invalid duration {_quote(text)}")
        return
    raise _Invalid(f"unrecognized descriptor: {spec}")


def _range(expression: str, low: int, high: int, names: tuple[str, ...] | None) -> None:
    range_and_step = expression.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    if low_and_high[0] in ("*", "?"):
        start, end = low, high
    else:
        start = _number(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _number(low_and_high[1], names)
        else:
            raise _Invalid(f"too many hyphens: {expression}")
    step = 1
    if len(range_and_step) == 2:
        step = _integer(range_and_step[1])
        if single:
            end = high  # N/step: from N to the maximum
    elif len(range_and_step) > 2:
        raise _Invalid(f"too many slashes: {expression}")
    if start < low:
        raise _Invalid(f"beginning of range ({start}) below minimum ({low}): {expression}")
    if end > high:
        raise _Invalid(f"end of range ({end}) above maximum ({high}): {expression}")
    if start > end:
        raise _Invalid(f"beginning of range ({start}) beyond end of range ({end}): {expression}")
    if step == 0:
        raise _Invalid(f"step of range should be a positive number: {expression}")


def _number(text: str, names: tuple[str, ...] | None) -> int:
    if names is not None and text.lower() in names:
        return names.index(text.lower()) + (1 if len(names) == 12 else 0)
    return _integer(text)


def _integer(text: str) -> int:
    """Go's ``strconv.Atoi`` (an optional sign, ASCII digits), and no negative numbers."""
    digits = text[1:] if text[:1] in "+-" else text
    if not digits or not digits.isascii() or not digits.isdigit():
        raise _Invalid(f"failed to parse int from {text}: strconv.Atoi: parsing {_quote(text)}: invalid syntax")
    number = int(text)
    if number < 0:
        raise _Invalid(f"negative number ({number}) not allowed: {text}")
    return number


def _check_zone(name: str) -> None:
    """A zone Go's ``time.LoadLocation`` would load (when this Python has the zone data to tell)."""
    import zoneinfo

    if name in ("", "UTC", "Local"):
        return
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        if zoneinfo.available_timezones():  # without zone data, nothing can be said
            raise _Invalid(f"provided bad location {name}: unknown time zone {name}") from None


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
