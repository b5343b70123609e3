"""Regex patterns that cannot backtrack catastrophically, checked before they reach the store.

The embedded store (SecantusDB) matches ``$regex`` with Python's backtracking ``re`` in its
request thread, and ``maxTimeMS`` does not stop it: ``(a+)+$`` against 28 × "a" + "!" ran 55 s
and stalled every workspace. So a where-clause ``regex`` must belong to a subset whose matching
time is bounded by construction:

- plain syntax only: literals, ``.``, classes ``[...]``, ``\\d \\w \\s`` (and negations),
  ``\\b``, escaped punctuation, anchors ``^ $``, groups ``(...)``/``(?:...)``, alternation and
  the quantifiers ``* + ? {m} {m,} {m,n}`` (lazy too). No backreferences, lookaround, atomic or
  named groups, inline flags or possessive quantifiers (the parser accepts nothing else);
- no quantifier inside a quantified group, and no alternation inside a repeated group
  (``(a+)+``, ``(a|aa)+``: the exponential shapes);
- at most one unbounded quantifier (``*``, ``+``, ``{m,}``) per alternative (``.*.*.*=`` and
  ``\\d+\\d+x`` are polynomial of a degree the pattern chooses); bounded ranges and alternation
  groups together offer at most ``MAX_CHOICES`` ways to match at one position (``a?a?a?…``), and
  at most ``MAX_CHOICES_WITH_UNBOUNDED`` beside an unbounded quantifier;
- an unbounded quantifier only at the end of its alternative (``coffee.*``: reaching it is a
  match) or in an alternative anchored at the start (``^INV-\\d+$``: tried from one position).
  Anywhere else it rescans the rest of the field from every start: ``a?[a-z]*!`` took 53 ms on
  one 1,000-character summary, and one ``documents.count`` ran 180 s (issue 35, M3).

Within the subset a pattern costs at most about field length × pattern length × 16 steps per
document, whatever the data (measured in ``bench/attacks.py``: under a millisecond on a
1,000-character summary); exponential and quadratic blow-ups are impossible. On the embedded
store fincap matches a where-clause's regex itself, with RE2, linear whatever the pattern
(``persistence.documents.regex_reads``, ``persistence.documents.matching``), so every pattern
must also be one RE2 reads (``persistence.where``); the store's ``re``, which cannot be
interrupted, still sees a caller's pattern where fincap cannot read the clause in memory (an
array on a path), and this bound is what holds there.

Everyday patterns fit: prefixes (``^star``), contains (``coffee``, ``coffee.{0,15}shop``),
alternation of words (``starbucks|costa``), ids (``^INV-\\d+$``), whole words (``\\bltd\\b``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

# a?a?a?a?a?a?x (64 choices) took 5.5 ms on a 1,000-character field, [a-z]{0,15}! 0.8 ms.
MAX_CHOICES = 16
# With an unbounded quantifier each choice multiplies a scan of the field (a?a?a?a?a?a?[a-z]*!
# took 260 ms on a 1000-character field): two choices at most then (colou?r.*, (tea|coffee).*).
MAX_CHOICES_WITH_UNBOUNDED = 2
MAX_REPEAT = 1000
_LITERAL_ESCAPES = frozenset("tnrfv")
_CLASS_ESCAPES = frozenset("dDwWsS")


class UnsafePattern(ValueError):
    """The pattern is outside the safe subset; the message says what to change."""


@dataclass(frozen=True)
class _Char:
    """Matches one character (literal, ``.``, class or class escape)."""


@dataclass(frozen=True)
class _Anchor:
    """Matches a position (``^ $ \\b \\B``); ``start``: it is ``^``."""

    start: bool = False


@dataclass(frozen=True)
class _Group:
    branches: tuple[tuple[_Node, ...], ...]


@dataclass(frozen=True)
class _Repeat:
    node: _Char | _Group
    low: int
    high: int | None  # None: unbounded

    @property
    def variable(self) -> bool:
        return self.high != self.low


_Node = _Char | _Anchor | _Group | _Repeat


def check_pattern(pattern: str) -> None:
    """Raise ``UnsafePattern`` unless ``pattern`` belongs to the safe subset."""
    for branch in _Parser(pattern).parse():
        _check_alternative(branch)
        anchored = bool(branch) and isinstance(branch[0], _Anchor) and branch[0].start
        if not anchored and not _unbounded_at_end_only(branch):
            raise UnsafePattern(
                "an unbounded quantifier (*, + or {n,}) only at the end of the pattern or of an "
                "alternative, or after a leading ^ (elsewhere it rescans the field from every "
                "position); bound it instead, e.g. coffee.{0,15}shop"
            )


def _unbounded(node: _Node) -> bool:
    return any(isinstance(n, _Repeat) and n.high is None for n in _walk((node,)))


def _unbounded_at_end_only(sequence: tuple[_Node, ...]) -> bool:
    """Whether every unbounded quantifier of ``sequence`` is in its tail: nothing follows it."""
    *leading, last = sequence or (_Anchor(),)
    if any(_unbounded(node) for node in leading):
        return False
    if isinstance(last, _Group):
        return all(_unbounded_at_end_only(branch) for branch in last.branches)
    if isinstance(last, _Repeat) and isinstance(last.node, _Group):
        # A repeated group is matched again after its own end: nothing inside may be unbounded.
        return last.high is not None and not _unbounded(last.node)
    return True


def _walk(nodes: tuple[_Node, ...]) -> Iterator[_Node]:
    for node in nodes:
        yield node
        if isinstance(node, _Repeat):
            yield from _walk((node.node,))
        elif isinstance(node, _Group):
            for branch in node.branches:
                yield from _walk(branch)


def _check_alternative(branch: tuple[_Node, ...]) -> None:
    unbounded = 0
    choices = 1
    for node in _walk(branch):
        if isinstance(node, _Repeat):
            if node.high is None:
                unbounded += 1
            elif node.variable:
                choices *= node.high - node.low + 1
            if isinstance(node.node, _Group):
                _check_quantified_group(node)
        elif isinstance(node, _Group) and len(node.branches) > 1:
            choices *= len(node.branches)
    if unbounded > 1:
        raise UnsafePattern(
            "at most one unbounded quantifier (*, + or {n,}) per alternative; "
            "bound the others, e.g. {1,20}"
        )
    limit = MAX_CHOICES_WITH_UNBOUNDED if unbounded else MAX_CHOICES
    if choices > limit:
        raise UnsafePattern(
            f"the optional parts, ranges and alternatives combine into more than {limit} "
            "ways to match"
            + (" beside an unbounded quantifier" if unbounded else "")
            + "; simplify the pattern"
        )


def _check_quantified_group(repeat: _Repeat) -> None:
    assert isinstance(repeat.node, _Group)
    inner = [node for branch in repeat.node.branches for node in _walk(branch)]
    if any(isinstance(node, _Repeat) and node.variable for node in inner):
        raise UnsafePattern(
            "no quantifier inside a quantified group (shapes like (a+)+ take exponential time); "
            "quantify single characters or fixed text"
        )
    repeated = repeat.high is None or repeat.high > 1
    groups = [repeat.node, *(node for node in inner if isinstance(node, _Group))]
    if repeated and any(len(group.branches) > 1 for group in groups):
        raise UnsafePattern(
            "no alternation inside a repeated group (shapes like (a|aa)+ take exponential "
            "time); use a character class such as [ab]+"
        )


class _Parser:
    """Recursive descent over the subset's grammar; anything else is an ``UnsafePattern``."""

    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.at = 0

    def parse(self) -> tuple[tuple[_Node, ...], ...]:
        branches = self._alternation()
        if self.at < len(self.text):
            raise UnsafePattern("unbalanced ')'")
        return branches

    def _peek(self, offset: int = 0) -> str | None:
        index = self.at + offset
        return self.text[index] if index < len(self.text) else None

    def _alternation(self) -> tuple[tuple[_Node, ...], ...]:
        branches = [self._sequence()]
        while self._peek() == "|":
            self.at += 1
            branches.append(self._sequence())
        return tuple(branches)

    def _sequence(self) -> tuple[_Node, ...]:
        items: list[_Node] = []
        while (char := self._peek()) is not None and char not in "|)":
            atom = self._atom()
            bounds = self._quantifier()
            if bounds is None:
                items.append(atom)
            elif isinstance(atom, _Char | _Group):
                items.append(_Repeat(atom, *bounds))
            else:
                raise UnsafePattern("an anchor (^, $, \\b) cannot be repeated")
        return tuple(items)

    def _atom(self) -> _Node:
        char = self.text[self.at]
        if char == "(":
            return self._group()
        if char == "[":
            return self._class()
        if char == "\\":
            return self._escape(in_class=False)
        if char in "*+?":
            raise UnsafePattern(f"'{char}' at position {self.at} has nothing to repeat")
        if char == "{":
            raise UnsafePattern("write a literal '{' as '\\{'")
        self.at += 1
        return _Anchor(start=char == "^") if char in "^$" else _Char()

    def _group(self) -> _Group:
        self.at += 1
        if self.text.startswith("?:", self.at):
            self.at += 2
        elif self._peek() == "?":
            raise UnsafePattern(
                "only (...) and (?:...) groups are supported: no lookaround, named or atomic "
                "groups, inline flags or conditionals"
            )
        branches = self._alternation()
        if self._peek() != ")":
            raise UnsafePattern("missing ')'")
        self.at += 1
        return _Group(branches)

    def _class(self) -> _Char:
        self.at += 1
        if self._peek() == "^":
            self.at += 1
        first = True
        while True:
            char = self._peek()
            if char is None:
                raise UnsafePattern("missing ']'")
            if char == "]" and not first:
                self.at += 1
                return _Char()
            if char == "[":
                raise UnsafePattern("write a '[' inside a character class as '\\['")
            if char == "\\":
                self._escape(in_class=True)
            else:
                self.at += 1
            first = False

    def _escape(self, *, in_class: bool) -> _Node:
        escaped = self._peek(1)
        if escaped is None:
            raise UnsafePattern("the pattern ends with a lone backslash")
        self.at += 2
        if escaped in _CLASS_ESCAPES or escaped in _LITERAL_ESCAPES:
            return _Char()
        if escaped in "bB" and not in_class:
            return _Anchor()
        if escaped.isascii() and not escaped.isalnum():
            return _Char()  # escaped punctuation: a literal
        raise UnsafePattern(
            f"the escape '\\{escaped}' is not supported (no backreferences, \\x, \\u, \\p, \\A)"
        )

    def _quantifier(self) -> tuple[int, int | None] | None:
        char = self._peek()
        if char == "*":
            bounds: tuple[int, int | None] = (0, None)
            self.at += 1
        elif char == "+":
            bounds = (1, None)
            self.at += 1
        elif char == "?":
            bounds = (0, 1)
            self.at += 1
        elif char == "{":
            bounds = self._counted()
        else:
            return None
        if self._peek() == "?":
            self.at += 1  # lazy: same cost
        elif self._peek() == "+":
            raise UnsafePattern("possessive quantifiers (*+, ++) are not supported")
        return bounds

    def _counted(self) -> tuple[int, int | None]:
        end = self.text.find("}", self.at)
        body = self.text[self.at + 1 : end] if end > 0 else ""
        low_text, comma, high_text = body.partition(",")
        if end < 0 or not low_text.isdigit() or not (high_text.isdigit() or not high_text):
            raise UnsafePattern("write a literal '{' as '\\{'; counts are {m}, {m,} or {m,n}")
        low = int(low_text)
        high = int(high_text) if high_text else (None if comma else low)
        if high is not None and high < low:
            raise UnsafePattern(f"the count {{{body}}} has its bounds the wrong way round")
        if max(low, high or 0) > MAX_REPEAT:
            raise UnsafePattern(f"counts are at most {MAX_REPEAT}")
        self.at = end + 1
        return low, high
