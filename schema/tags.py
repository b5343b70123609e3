"""Contract models of the tags resource (a workspace's tags) and of documents.tag."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from schema.base import CapabilityInput, CapabilityOutput, Integer, OneLine

MAX_TAG_LENGTH = 50
MAX_TAGS_PER_DOCUMENT = 20
# Six hex digits: what every colour picker reads and writes.
COLOUR_PATTERN = r"^#[0-9a-fA-F]{6}$"


def _tidy(name: str) -> str:
    tidy = " ".join(name.split())
    if not tidy:
        raise ValueError("a tag name has at least one letter or digit")
    return tidy


# A tag's name as people type it: spaces at the ends and runs of them inside are dropped.
TagName = Annotated[OneLine, AfterValidator(_tidy)]
TAG_NAME = Field(min_length=1, max_length=MAX_TAG_LENGTH, description="Tag name")


class Tag(CapabilityOutput):
    """A tag of the workspace."""

    id: str = Field(description="Tag id (tag_…)")
    name: str = Field(description="Its name, unique in the workspace whatever the case")
    colour: str = Field(description="Its colour, #RRGGBB")
    documentCount: int = Field(default=0, description="Active documents that carry it")


class ListTags(CapabilityInput):
    """tags.list takes no parameters; send ``{}``."""


class TagList(CapabilityOutput):
    """The workspace's tags, by name."""

    tags: list[Tag] = Field(description="Every tag, sorted by name")


class CreateTag(CapabilityInput):
    """A new tag."""

    name: TagName = TAG_NAME
    colour: str | None = Field(
        default=None, pattern=COLOUR_PATTERN, description="#RRGGBB (default: one from its name)"
    )


class TagRef(CapabilityInput):
    """One tag."""

    id: str = Field(min_length=1, max_length=100, description="Tag id (tag_…)")


class UpdateTag(TagRef):
    """A tag's new name and/or colour; a new name is written on every document carrying it."""

    name: TagName | None = Field(
        default=None, min_length=1, max_length=MAX_TAG_LENGTH, description="New name"
    )
    colour: str | None = Field(default=None, pattern=COLOUR_PATTERN, description="#RRGGBB")


class TagResult(CapabilityOutput):
    """A tag as it is now, and how many documents were rewritten for it."""

    tag: Tag = Field(description="The tag")
    documentsChanged: int = Field(default=0, description="Documents whose tag was renamed")


class DeletedTag(CapabilityOutput):
    """A deleted tag."""

    id: str = Field(description="The tag's id")
    deleted: bool = Field(description="True")
    documentsChanged: int = Field(description="Documents it was taken off")


class TagDocuments(CapabilityInput):
    """Documents to tag or untag, by id."""

    ids: list[Annotated[str, Field(min_length=1, max_length=100)]] = Field(
        min_length=1, max_length=1000, description="Document ids (at most 1,000)"
    )
    add: list[TagName] = Field(
        default_factory=list, max_length=20, description="Tag names to put on each"
    )
    remove: list[TagName] = Field(
        default_factory=list, max_length=20, description="Tag names to take off each"
    )


class TaggedDocuments(CapabilityOutput):
    """What documents.tag did."""

    matched: Integer = Field(description="Documents found among the ids")
    modified: Integer = Field(description="Documents whose tags changed")
    missing: list[str] = Field(description="Ids not found in the workspace")
