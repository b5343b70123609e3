"""Secret fields: values shown at most once and never copied into another record.

A field typed ``SecretText`` is a secret: a webhook signing key, an API key, an invitation code,
a password. On the wire it is a plain string (its JSON Schema and GraphQL type do not change);
the marker lets the code that copies a call's input or result somewhere else (approval requests,
their descriptions and results, activity, errors) find the secrets in it by the model alone:
``redact`` hides them, ``map_secrets`` transforms them (the approval gate seals a stored call's
secrets with the keyring and opens them again when the approved call runs).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel

REDACTED = "[redacted]"


class _SecretMarker:
    """Metadata of ``SecretText``; compared by identity."""

    def __repr__(self) -> str:
        return "SECRET"


SECRET = _SecretMarker()
SecretText = Annotated[str, SECRET]


def _is_secret(annotation: Any, metadata: list[Any] | None = None) -> bool:
    if metadata and any(item is SECRET for item in metadata):
        return True
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        _, *extra = typing.get_args(annotation)
        return any(item is SECRET for item in extra)
    if origin in (typing.Union, types.UnionType):
        return any(_is_secret(arg) for arg in typing.get_args(annotation))
    return False


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The models a field's value may hold: itself, in a list or dict, optional or a union."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found.extend(_models_in(arg))
    return found


def map_secrets(model: type[BaseModel], data: Any, change: Callable[[Any], Any]) -> Any:
    """A copy of ``data`` (``model`` dumped as JSON) with ``change`` applied to every secret
    value that is set (None and absent fields stay as they are). Nested models, lists and
    dicts of them are followed."""
    if not isinstance(data, dict):
        return data
    copied = dict(data)
    for name, info in model.model_fields.items():
        if name not in copied or copied[name] is None:
            continue
        value = copied[name]
        if _is_secret(info.annotation, info.metadata):
            copied[name] = change(value)
            continue
        for nested in _models_in(info.annotation):
            copied[name] = _follow(nested, copied[name], change)
    return copied


def _follow(model: type[BaseModel], value: Any, change: Callable[[Any], Any]) -> Any:
    if isinstance(value, list):
        return [_follow(model, item, change) for item in value]
    if isinstance(value, dict) and not (value.keys() & model.model_fields.keys()):
        # A mapping of models (dict[str, Model]): follow each value.
        return {key: _follow(model, item, change) for key, item in value.items()}
    return map_secrets(model, value, change)


def redact(model: type[BaseModel], data: Any) -> Any:
    """``data`` with every secret value replaced by ``[redacted]``."""
    return map_secrets(model, data, lambda _: REDACTED)


def has_secrets(model: type[BaseModel]) -> bool:
    """Whether ``model`` (or a model nested in it) declares a secret field."""
    seen: set[type[BaseModel]] = set()

    def walk(current: type[BaseModel]) -> bool:
        if current in seen:
            return False
        seen.add(current)
        for info in current.model_fields.values():
            if _is_secret(info.annotation, info.metadata):
                return True
            if any(walk(nested) for nested in _models_in(info.annotation)):
                return True
        return False

    return walk(model)


__all__ = ["REDACTED", "SECRET", "SecretText", "has_secrets", "map_secrets", "redact"]
