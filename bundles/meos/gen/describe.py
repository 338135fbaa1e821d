"""Plain-word descriptions of the generated MEOS tools, from their names.

A name is read part by part (words.py): the longest run of parts that names
an operation or a type wins, so tfloat_max_value is a temporal float and
max_value. The operation's sentence takes the types around it: those before
it are what it acts on ({a}), those after what it acts with ({b}); a name
that starts with its operation (left_stbox_stbox) acts on its first type
with the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

from words import AGGREGATES, CATEGORIES, OPS, TYPES, Kind, Op, rank

# The most parts an operation or a type spans (split_each_n_stboxes).
MAX_PARTS = 4
# Operations that read "the part of a temporal value before a timestamp" only
# after a type; first in a name they are the position words (before_timestamptz_set).
NOT_FIRST = {"after_timestamptz", "before_timestamptz"}


@dataclass
class Reading:
    """A name read as words: its operation, the types before and after it, and the parts
    read as neither."""

    op: Op | None
    before: list[Kind]
    after: list[Kind]
    unknown: list[str]


def read(name: str) -> Reading:
    """The parts of a function's name, read as an operation and its types."""
    parts = name.split("_")
    r = Reading(None, [], [], [])
    i = 0
    while i < len(parts):
        op_len = type_len = 0
        for n in range(min(MAX_PARTS, len(parts) - i), 0, -1):
            key = "_".join(parts[i:i + n])
            if not op_len and key in OPS and not (i == 0 and key in NOT_FIRST):
                op_len = n
            if not type_len and key in TYPES:
                type_len = n
        seen_type = bool(r.before or r.after)
        if op_len and r.op is None and (op_len > type_len or (op_len == type_len and seen_type)):
            r.op = OPS["_".join(parts[i:i + op_len])]
            i += op_len
        elif type_len:
            (r.after if r.op else r.before).append(TYPES["_".join(parts[i:i + type_len])])
            i += type_len
        else:
            r.unknown.append(parts[i])
            i += 1
    return r


def _join(kinds: list[Kind]) -> str:
    return " and ".join(k.noun for k in kinds)


def _another(kind: Kind) -> str:
    return "another " + kind.noun.split(" ", 1)[1]


def sentence(template: str, before: list[Kind], after: list[Kind]) -> str:
    """The template with {a} (what the operation acts on) and {b} (what with) filled."""
    if before:
        a, rest = _join(before), after
    elif after:
        a, rest = after[0].noun, after[1:]
    else:
        a, rest = "a value", []
    if rest:
        b = _join(rest)
        if len(rest) == 1 and before and len(before) == 1 and rest[0] == before[0]:
            b = _another(rest[0])
        elif not before and after and len(rest) == 1 and rest[0] == after[0]:
            b = _another(rest[0])
    elif "{b}" in template:
        first = before[0] if before else after[0] if after else None
        b = _another(first) if first and (before or after) and len(before or after) == 1 \
            else "another value"
    else:
        b = ""
    return template.format(a=a, b=b)


def glosses(kinds: list[Kind]) -> str:
    """What each type named is, once each, as sentences."""
    out: list[str] = []
    seen: set[str] = set()
    for k in kinds:
        if k.gloss and k.noun not in seen:
            seen.add(k.noun)
            noun = k.noun[0].upper() + k.noun[1:]
            out.append(f"{noun} is {k.gloss}.")
    return " ".join(out)


def _main(name: str) -> tuple[str, str, list[Kind]]:
    """What a tool computes in a phrase, the other words for it, and the types it names."""
    if name.endswith("_agg"):
        of, op = name[: -len("_agg")].rsplit("_", 1)
        agg = AGGREGATES[op]
        kinds = read(of).before
        values = " and ".join(k.noun.split(" ", 1)[1] for k in kinds) or "value"
        return agg.template.format(a=values + " values"), agg.synonyms, kinds
    r = read(name)
    kinds = r.before + r.after
    if r.op is None:
        what = " and ".join(k.noun for k in kinds) or "a value"
        return f"Computes {' '.join(r.unknown) or 'with'} for {what}", "", kinds
    main = sentence(r.op.template, r.before, r.after)
    if r.unknown:
        main += " (" + " ".join(r.unknown) + ")"
    return main, r.op.synonyms, kinds


def title(name: str) -> str:
    """A tool's title: what it computes, in a few words ("Maximum value of a temporal
    float")."""
    main = _main(name)[0]
    main = main.removeprefix("the ").removeprefix("The ")
    return main[0].upper() + main[1:]


def variant_of(name: str, names: set[str]) -> str:
    """The tool that does what name does with its last two types the other way round, when
    there is one and it takes the more specific value first (a temporal value before a set,
    span or box; those before a single value): ever_gt_float_tfloat is a variant of
    ever_gt_tfloat_float. "" when name is no variant."""
    parts = name.split("_")
    for i in range(1, len(parts) - 1):
        a, b = "_".join(parts[i:i + 1]), "_".join(parts[i + 1:])
        if a in TYPES and b in TYPES:
            other = "_".join(parts[:i] + [b, a])
            if other in names and rank(b) > rank(a):
                return other
    return ""


def describe(name: str, category: str) -> str:
    """The plain-word opening of a generated tool's description: what it computes, the other
    words for it, what its types are and what its category answers."""
    main, synonyms, kinds = _main(name)
    text = main[0].upper() + main[1:] + "."
    if synonyms:
        text += f" In other words: {synonyms}."
    if g := glosses(kinds):
        text += " " + g
    if c := CATEGORIES.get(category):
        text += " " + c
    return text


def describe_aggregate(name: str) -> str:
    """The plain-word opening of an aggregate tool's description (name: TYPE_OP_agg)."""
    return describe(name, "aggregates")


def unknown_parts(name: str) -> list[str]:
    """The parts of a name read as neither an operation nor a type: words.py lacks them."""
    if name.endswith("_agg"):
        return []
    return read(name).unknown
