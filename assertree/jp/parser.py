"""A Pratt parser for the dialect: tokens in, `ast.Node` tree out.

The grammar lives in `BINDING_POWER` (go-jmespath's powers, DIALECT.md a.3)
and in one small `_nud_<token>` / `_led_<token>` method per token, as in
jmespath.py. Two go-jmespath choices worth knowing: ASCII ``*`` binds tighter
than the other multiplicative operators (``a / b * c`` is ``a / (b * c)``),
and commas are optional between ``let`` bindings, function arguments and
multi-select-hash pairs. There is no ternary operator and no bare number.
"""

from __future__ import annotations

from typing import NoReturn

from assertree.jp.ast import Node, node
from assertree.jp.errors import ParseError
from assertree.jp.lexer import Token, iter_tokens
from assertree.jp.limits import MAX_EXPRESSION_DEPTH

BINDING_POWER: dict[str, int] = {
    "eof": 0,
    "unquoted_identifier": 0,
    "quoted_identifier": 0,
    "literal": 0,
    "rbracket": 0,
    "rparen": 0,
    "comma": 0,
    "rbrace": 0,
    "number": 0,
    "current": 0,
    "expref": 0,
    "colon": 0,
    "variable": 0,
    "root": 0,
    "assign": 0,
    "pipe": 1,
    "or": 2,
    "and": 3,
    "eq": 5,
    "ne": 5,
    "lt": 5,
    "lte": 5,
    "gt": 5,
    "gte": 5,
    "plus": 6,
    "minus": 6,
    "divide": 7,
    "div": 7,
    "modulo": 7,
    "multiply": 7,
    "flatten": 9,
    "star": 20,
    "filter": 21,
    "dot": 40,
    "not": 45,
    "lbrace": 50,
    "lbracket": 55,
    "lparen": 60,
}

# Tokens whose binding power is below this end a projection's right-hand side.
_PROJECTION_STOP = 10
_UNARY_POWER = 6

_COMPARATORS = {"eq": "==", "ne": "!=", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}
_ARITHMETIC = {"plus": "+", "minus": "-", "divide": "/", "div": "//", "modulo": "%", "multiply": "*", "star": "*"}

_DESCRIPTIONS = {
    "eof": "end of expression",
    "rbracket": "']'",
    "rparen": "')'",
    "rbrace": "'}'",
    "colon": "':'",
    "comma": "','",
    "assign": "'='",
}

IDENTITY = node("identity")


def parse(expression: str) -> Node:
    """The syntax tree of `expression`; raises ParseError pointing at the offending column.

    Nesting is bounded while parsing, before anything recurses past the limit:
    the parser counts its own recursion (``((((a))))``, ``abs(abs(...))``) plus
    the nodes its loop wraps around the left side (``a.a.a...``, ``a || a ||
    ...``, ``a[0][0]...``: parsed in a loop, but compiled and evaluated
    recursively), and stops at `MAX_EXPRESSION_DEPTH` with a ParseError
    pointing at the column, having read no further. The finished tree's
    height is then measured again, without recursion, as a backstop.
    """
    try:
        tree = _Parser(expression).parse()
    except RecursionError:  # a backstop: the depth count below stops nesting long before this
        raise _too_deep(expression, 0) from None
    _check_height(tree, expression)
    return tree


def _too_deep(expression: str, position: int) -> ParseError:
    return ParseError(f"nested too deeply (over {MAX_EXPRESSION_DEPTH} levels)",
                      expression, position)


def _check_height(tree: Node, expression: str) -> None:
    """Raise ParseError when `tree` is more than MAX_EXPRESSION_DEPTH nodes tall (measured iteratively)."""
    stack = [(tree, 1)]
    while stack:
        current, height = stack.pop()
        if height > MAX_EXPRESSION_DEPTH:
            raise _too_deep(expression, 0)
        stack.extend((child, height + 1) for child in current.children)


class _Parser:
    def __init__(self, expression: str) -> None:
        self.expression = expression
        self._stream = iter_tokens(expression)
        self.tokens: list[Token] = [next(self._stream)]  # read so far; ends with eof once the text is read
        self.index = 0
        self.depth = 0  # how many _expression calls are open

    # -- driving ---------------------------------------------------------------

    def parse(self) -> Node:
        if self._current.type == "eof":
            raise ParseError("empty expression", self.expression, 0)
        tree = self._expression(0)
        if self._current.type != "eof":
            self._fail(self._current, "unexpected")
        return tree

    @property
    def _current(self) -> Token:
        return self.tokens[self.index]

    def _peek(self, offset: int = 1) -> Token:
        while len(self.tokens) <= self.index + offset and self.tokens[-1].type != "eof":
            self.tokens.append(next(self._stream))
        return self.tokens[min(self.index + offset, len(self.tokens) - 1)]

    def _advance(self) -> Token:
        token = self.tokens[self.index]
        if token.type != "eof":
            self.index += 1
            if self.index == len(self.tokens):
                self.tokens.append(next(self._stream))
        return token

    def _match(self, *types: str) -> Token:
        token = self._current
        if token.type not in types:
            self._fail(token, "expected " + " or ".join(_describe_type(t) for t in types) + ", got")
        return self._advance()

    def _fail(self, token: Token, what: str) -> NoReturn:
        raise ParseError(f"{what} {_describe(token)}", self.expression, token.start)

    def _expression(self, binding_power: int = 0) -> Node:
        self.depth += 1
        try:
            if self.depth > MAX_EXPRESSION_DEPTH:
                raise _too_deep(self.expression, self._current.start)
            return self._expression_body(binding_power)
        finally:
            self.depth -= 1

    def _expression_body(self, binding_power: int) -> Node:
        token = self._advance()
        nud = getattr(self, "_nud_" + token.type, None)
        if nud is None:
            self._fail(token, "unexpected")
        left = nud(token)
        height = self.depth  # each led below wraps `left` in one more node
        while binding_power < BINDING_POWER[self._current.type]:
            height += 1
            if height > MAX_EXPRESSION_DEPTH:  # `a.a.a...`: a loop here, but recursion when compiled
                raise _too_deep(self.expression, self._current.start)
            token = self._current
            led = getattr(self, "_led_" + token.type, None)
            if led is None:
                self._fail(token, "unexpected")
            self._advance()
            left = led(token, left)
        return left

    # -- nud: tokens that start an expression ------------------------------------

    def _nud_literal(self, token: Token) -> Node:
        return node("literal", value=token.value)

    def _nud_unquoted_identifier(self, token: Token) -> Node:
        if token.value == "let" and self._current.type == "variable":
            return self._let_expression()
        return node("field", value=token.value)

    def _nud_quoted_identifier(self, token: Token) -> Node:
        if self._current.type == "lparen":
            self._fail(self._current, "a quoted identifier cannot name a function: unexpected")
        return node("field", value=token.value)

    def _nud_variable(self, token: Token) -> Node:
        return node("variable_ref", value=token.value)

    def _nud_root(self, token: Token) -> Node:
        return node("root")

    def _nud_current(self, token: Token) -> Node:
        return node("current")

    def _nud_star(self, token: Token) -> Node:
        return node("value_projection", IDENTITY, self._projection_rhs(BINDING_POWER["star"]))

    def _nud_filter(self, token: Token) -> Node:
        return self._led_filter(token, IDENTITY)

    def _nud_flatten(self, token: Token) -> Node:
        return self._led_flatten(token, IDENTITY)

    def _nud_lbrace(self, token: Token) -> Node:
        return self._multi_select_hash()

    def _nud_lparen(self, token: Token) -> Node:
        inner = self._expression(0)
        self._match("rparen")
        return inner

    def _nud_not(self, token: Token) -> Node:
        return node("not_expression", self._expression(BINDING_POWER["not"]))

    def _nud_expref(self, token: Token) -> Node:
        return node("expref", self._expression(BINDING_POWER["expref"]))

    def _nud_plus(self, token: Token) -> Node:
        return node("arithmetic_unary", self._expression(_UNARY_POWER), value="+")

    def _nud_minus(self, token: Token) -> Node:
        return node("arithmetic_unary", self._expression(_UNARY_POWER), value="-")

    def _nud_lbracket(self, token: Token) -> Node:
        current = self._current.type
        if current in ("number", "colon"):
            return self._project_if_slice(IDENTITY, self._index_expression())
        if current == "star" and self._peek().type == "rbracket":
            self._advance()
            self._advance()
            return node("projection", IDENTITY, self._projection_rhs(BINDING_POWER["star"]))
        return self._multi_select_list()

    # -- led: tokens that continue an expression ---------------------------------

    def _led_dot(self, token: Token, left: Node) -> Node:
        if self._current.type == "star":
            self._advance()
            return node("value_projection", left, self._projection_rhs(BINDING_POWER["dot"]))
        return node("subexpression", left, self._dot_rhs(BINDING_POWER["dot"]))

    def _led_pipe(self, token: Token, left: Node) -> Node:
        return node("pipe", left, self._expression(BINDING_POWER["pipe"]))

    def _led_or(self, token: Token, left: Node) -> Node:
        return node("or_expression", left, self._expression(BINDING_POWER["or"]))

    def _led_and(self, token: Token, left: Node) -> Node:
        return node("and_expression", left, self._expression(BINDING_POWER["and"]))

    def _led_comparator(self, token: Token, left: Node) -> Node:
        right = self._expression(BINDING_POWER[token.type])
        return node("comparator", left, right, value=_COMPARATORS[token.type])

    _led_eq = _led_ne = _led_lt = _led_lte = _led_gt = _led_gte = _led_comparator

    def _led_arithmetic(self, token: Token, left: Node) -> Node:
        right = self._expression(BINDING_POWER[token.type])
        return node("arithmetic", left, right, value=_ARITHMETIC[token.type])

    _led_plus = _led_minus = _led_divide = _led_div = _led_modulo = _led_multiply = _led_star = _led_arithmetic

    def _led_lparen(self, token: Token, left: Node) -> Node:
        if left.type != "field":
            raise ParseError("only a name can be called as a function", self.expression, token.start)
        args: list[Node] = []
        while self._current.type != "rparen":
            if self._current.type == "eof":
                self._fail(self._current, "expected ')' to close the call, got")
            args.append(self._expression(0))
            if self._current.type == "comma":
                self._advance()
        self._match("rparen")
        return node("function_expression", *args, value=left.value)

    def _led_filter(self, token: Token, left: Node) -> Node:
        condition = self._expression(0)
        self._match("rbracket")
        if self._current.type == "flatten":
            right = IDENTITY
        else:
            right = self._projection_rhs(BINDING_POWER["filter"])
        return node("filter_projection", left, right, condition)

    def _led_flatten(self, token: Token, left: Node) -> Node:
        return node("projection", node("flatten", left), self._projection_rhs(BINDING_POWER["flatten"]))

    def _led_lbracket(self, token: Token, left: Node) -> Node:
        if self._current.type in ("number", "colon"):
            right = self._index_expression()
            if left.type == "index_expression":
                # `a[0][1][2]` is one flat node; the following indexes are taken here, in a loop, so that a
                # long chain costs linear time rather than one copy of the children per index.
                steps = [*left.children, right]
                while self._current.type == "lbracket" and self._peek().type in ("number", "colon"):
                    if len(steps) > MAX_EXPRESSION_DEPTH:  # each index counts as a level, as when not flat
                        raise _too_deep(self.expression, self._current.start)
                    self._advance()
                    steps.append(self._index_expression())
                return Node("index_expression", tuple(steps))
            return self._project_if_slice(left, right)
        if self._current.type != "star":
            self._fail(self._current, "expected an index, a slice or '*' after '[', got")
        self._advance()
        self._match("rbracket")
        return node("projection", left, self._projection_rhs(BINDING_POWER["star"]))

    # -- pieces ------------------------------------------------------------------

    def _projection_rhs(self, binding_power: int) -> Node:
        current = self._current.type
        if BINDING_POWER[current] < _PROJECTION_STOP:
            return IDENTITY
        if current in ("lbracket", "filter"):
            return self._expression(binding_power)
        if current == "dot":
            self._advance()
            return self._dot_rhs(binding_power)
        self._fail(self._current, "unexpected")
        raise AssertionError  # unreachable

    def _dot_rhs(self, binding_power: int) -> Node:
        current = self._current.type
        if current in ("quoted_identifier", "unquoted_identifier", "star"):
            return self._expression(binding_power)
        if current == "lbracket":
            self._advance()
            return self._multi_select_list()
        if current == "lbrace":
            self._advance()
            return self._multi_select_hash()
        self._fail(self._current, "expected a name, '*', '[' or '{' after '.', got")
        raise AssertionError  # unreachable

    def _index_expression(self) -> Node:
        if self._current.type == "colon" or self._peek().type == "colon":
            return self._slice_expression()
        value = self._match("number").value
        self._match("rbracket")
        return node("index", value=value)

    def _slice_expression(self) -> Node:
        parts: list[int | None] = [None, None, None]
        position = 0
        while self._current.type != "rbracket":
            token = self._current
            if token.type == "colon":
                position += 1
                if position == 3:
                    self._fail(token, "a slice has at most two ':', unexpected")
            elif token.type == "number" and parts[position] is None:
                parts[position] = token.value
            else:
                self._fail(token, "expected a number or ':' in the slice, got")
            self._advance()
        self._match("rbracket")
        return node("slice", value=tuple(parts))

    def _project_if_slice(self, left: Node, right: Node) -> Node:
        index_expression = node("index_expression", left, right)
        if right.type == "slice":
            return node("projection", index_expression, self._projection_rhs(BINDING_POWER["star"]))
        return index_expression

    def _multi_select_list(self) -> Node:
        items: list[Node] = []
        while True:
            items.append(self._expression(0))
            if self._current.type == "rbracket":
                break
            self._match("comma")
        self._match("rbracket")
        return node("multi_select_list", *items)

    def _multi_select_hash(self) -> Node:
        pairs: list[Node] = []
        while True:
            key = self._match("quoted_identifier", "unquoted_identifier").value
            self._match("colon")
            pairs.append(node("key_val_pair", self._expression(0), value=key))
            if self._current.type == "comma":
                self._advance()
            elif self._current.type == "rbrace":
                self._advance()
                break
        return node("multi_select_dict", *pairs)

    def _let_expression(self) -> Node:
        bindings: list[Node] = []
        while self._current.type == "variable":
            name = self._advance().value
            self._match("assign")
            bindings.append(node("binding", self._expression(0), value=name))
            if self._current.type == "comma":
                self._advance()
        token = self._current
        if token.type != "unquoted_identifier" or token.value != "in":
            self._fail(token, "expected 'in' after the let bindings, got")
        self._advance()
        body = self._expression(0)
        return node("let_expression", *bindings, body)


def _describe_type(token_type: str) -> str:
    if token_type in _DESCRIPTIONS:
        return _DESCRIPTIONS[token_type]
    return token_type.replace("_", " ")


def _describe(token: Token) -> str:
    if token.type == "eof":
        return "end of expression"
    if token.type in ("literal", "quoted_identifier", "unquoted_identifier", "number", "variable"):
        text = {"variable": "$" + str(token.value)}.get(token.type)
        if text is None:
            text = str(token.value) if token.type in ("unquoted_identifier", "number") else repr(token.value)
        return f"{token.type.replace('_', ' ')} {text}"
    return repr(token.value)
