"""Turn pydantic's validation errors into one message that names each field and reason."""

from __future__ import annotations

from pydantic import BaseModel, ValidationError

from resolvers.framework.errors import BadRequest

MAX_REPORTED = 5


def field_path(location: tuple[int | str, ...]) -> str:
    """``("where", "conditions", 0, "op")`` → ``where.conditions[0].op``."""
    path = ""
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path or "body"


def describe_validation_error(
    exc: ValidationError,
    model: type[BaseModel] | None = None,
    *,
    opening: str = "Invalid request: ",
) -> str:
    """``Invalid request: limit: …; where.conditions[0].op: …`` (``validation_problems``)."""
    problems, more = validation_problems(exc, model)
    return str(BadRequest.naming(problems, more=more, opening=opening))


def validation_problems(
    exc: ValidationError, model: type[BaseModel] | None = None
) -> tuple[list[tuple[str, str]], int]:
    """(each field refused with why, up to ``MAX_REPORTED``; how many more). With ``model``
    (the input validated), an unknown top-level property lists the known ones, so a caller (an
    assistant guessing a name, a typo) can fix the call from the message alone."""
    problems = []
    for error in exc.errors(include_url=False)[:MAX_REPORTED]:
        location = tuple(
            part
            for part in error["loc"]
            # pydantic names union branches and function validators in the location; users
            # know only their own field names.
            if not (isinstance(part, str) and ("[" in part or part.startswith("function-")))
        )
        reason = error["msg"]
        if error["type"] == "extra_forbidden":
            reason = "unknown property"
            if model is not None and len(location) == 1:
                known = [info.alias or name for name, info in model.model_fields.items()]
                reason += f" (known: {', '.join(known)})" if known else " (it takes none)"
        problems.append((field_path(location), reason))
    return problems, max(0, exc.error_count() - MAX_REPORTED)


def unpaired_surrogate(value: object) -> str | None:
    """The path of the first string in ``value`` holding a lone UTF-16 surrogate, or None.

    JSON allows ``"\\ud800"`` (an escape of half a pair), which decodes to a Python string that
    cannot be encoded as UTF-8: storing it, or echoing it, would fail. Iterative, and ASCII
    strings (almost all) are skipped in constant time.
    """
    stack: list[tuple[tuple[int | str, ...], object]] = [((), value)]
    while stack:
        location, item = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return field_path(location)
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and not key.isascii():
                    stack.append((location, key))
                stack.append(((*location, str(key)), child))
        elif isinstance(item, list):
            stack.extend(((*location, index), child) for index, child in enumerate(item))
    return None
