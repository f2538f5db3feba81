"""`assertree.records`: written-out classes behave as the dataclasses they replace (repr, equality, hash,
fields in declaration order), and survive pickling (worker processes) and deep copies."""

from __future__ import annotations

import copy
import pickle

import pytest

from assertree.errors import Location, Problem, Severity
from assertree.languages.base import ScanContext
from assertree.records import Record, ValueRecord
from assertree.report.options import ReportOptions
from assertree.report.totals import Totals
from assertree.results import Resource, RuleError


class Point(ValueRecord, hidden=("note",), uncompared=("note",)):
    x: int
    y: int
    note: str  # neither shown nor compared

    __slots__ = ("note", "x", "y")  # kept sorted: the order of the fields is the annotations'

    def __init__(self, x: int, y: int, note: str = "") -> None:
        self.x = x
        self.y = y
        self.note = note


class Labelled(Point):
    label: str

    __slots__ = ("label",)

    def __init__(self, x: int, y: int, label: str) -> None:
        super().__init__(x, y)
        self.label = label


class Box(Record):
    items: list

    __slots__ = ("items",)

    def __init__(self, items: list) -> None:
        self.items = items


def test_fields_follow_the_annotations_and_the_bases_come_first():
    assert Point._fields == ("x", "y", "note")
    assert Labelled._fields == ("x", "y", "note", "label")
    assert Labelled(1, 2, "a").as_dict() == {"x": 1, "y": 2, "note": "", "label": "a"}
    assert list(Totals(*range(11)).as_dict())[:3] == ["resources", "policies", "rules"]  # the JSON report's order


def test_repr_names_the_shown_fields():
    assert repr(Point(1, 2, "secret")) == "Point(x=1, y=2)"
    assert repr(Labelled(1, 2, "a")) == "Labelled(x=1, y=2, label='a')"
    assert repr(Box([1])) == "Box(items=[1])"


def test_values_compare_and_hash_by_their_compared_fields():
    assert Point(1, 2, "a") == Point(1, 2, "b") and hash(Point(1, 2, "a")) == hash(Point(1, 2, "b"))
    assert Point(1, 2) != Point(2, 1)
    assert Labelled(1, 2, "a") != Point(1, 2)  # another class is never equal, as with dataclasses
    assert Labelled(1, 2, "a") != Labelled(1, 2, "b")
    assert RuleError("m", (1,)) == RuleError("m", (1,)) and RuleError("m") != RuleError("n")


def test_records_compare_by_identity():
    box = Box([1])
    assert box == box and box != Box([1])


def test_an_unhashable_field_makes_the_value_unhashable():
    with pytest.raises(TypeError):
        hash(Resource({"a": 1}))


def test_slots_refuse_a_field_that_is_not_declared():
    with pytest.raises(AttributeError):
        Point(1, 2).z = 3  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", [Point(1, 2, "n"), Labelled(1, 2, "a"), Resource({"a": [1]}, "f.yaml", 0)])
def test_pickling_and_deep_copies_keep_every_field(value):
    for again in (pickle.loads(pickle.dumps(value)), copy.deepcopy(value), copy.copy(value)):
        assert type(again) is type(value)
        assert {name: getattr(again, name) for name in value._fields} == value.as_dict()


def test_with_value_keeps_where_a_resource_was_read():
    resource = Resource({"a": 1}, "f.yaml", 2, root={"r": 1}, origin=("x",), default_identifier="id", file="F")
    again = resource.with_value({"a": 2})
    assert again.value == {"a": 2} and resource.value == {"a": 1}
    assert {**again.as_dict(), "value": None} == {**resource.as_dict(), "value": None}


def test_replace_makes_another_with_the_other_fields_kept():
    point = Point(1, 2, "a")
    again = point.replace(y=5)
    assert type(again) is Point and again.as_dict() == {"x": 1, "y": 5, "note": "a"}
    assert point.y == 2  # the original is unchanged
    with pytest.raises(TypeError, match="no field 'z'"):
        point.replace(z=3)


def test_the_classes_callers_rebuild_keep_what_dataclasses_gave_them():
    problem = Problem("bad", Location("f.yaml", 3), ("spec", 0))
    assert problem.replace(severity=Severity.WARNING) == Problem("bad", Location("f.yaml", 3), ("spec", 0),
                                                                 Severity.WARNING)
    assert problem.located(Location("g.yaml", 9, 2)).location == Location("f.yaml", 3, 2)
    assert hash(problem) == hash(Problem("bad", Location("f.yaml", 3), ("spec", 0)))  # in sets of problems
    assert repr(Location("f", 1)) == "Location(source='f', line=1, column=None)"
    context = ScanContext(operation="UPDATE")
    assert context.bindings == {} and context.memo == {} and context.memo is not ScanContext().memo
    changed = context.replace(explain=True)
    assert changed.explain and changed.operation == "UPDATE" and not context.explain
    assert changed.memo is context.memo  # as dataclasses.replace: the same memo unless a new one is given
    assert context == ScanContext(operation="UPDATE", memo={"cached": 1})  # the memo is not compared
    with pytest.raises(TypeError):
        hash(context)  # changed in place by callers: no hash, as a dataclass that is not frozen
    options = ReportOptions(quiet=True)
    assert options.replace(problems=(problem,)) == ReportOptions(quiet=True, problems=(problem,))
    assert pickle.loads(pickle.dumps(problem)) == problem and copy.deepcopy(context) == context
