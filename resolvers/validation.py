"""Turn pydantic's validation errors into one message that names each field and reason."""

from __future__ import annotations

from pydantic import ValidationError

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


def describe_validation_error(exc: ValidationError) -> str:
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
        problems.append(f"{field_path(location)}: {reason}")
    extra = exc.error_count() - MAX_REPORTED
    suffix = f" (and {extra} more)" if extra > 0 else ""
    return "Invalid request: " + "; ".join(problems) + suffix
