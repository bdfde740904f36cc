"""Exports read back as a client would: the newest export's folder, its JSON Lines and its DataCite bundle."""

from __future__ import annotations

import gzip
import os

import orjson
from lxml import etree

from repository.cli import COMMANDS, invoke
from repository.config import Settings
from repository.exports import folder


def export(settings: Settings, *argv: str) -> int:
    """`repository-admin export records ...` in-process."""
    return invoke(COMMANDS["export"], ["records", *argv, "--quiet"], settings)


def latest(root: str) -> str:
    """The folder of the newest complete export under `root`."""
    return os.path.join(root, folder.names(root)[0])


def jsonl(path: str) -> list[dict]:
    with gzip.open(os.path.join(path, folder.JSONL), "rb") as handle:
        return [orjson.loads(line) for line in handle]


def bundle(path: str) -> etree._Element:
    with gzip.open(os.path.join(path, folder.DATACITE), "rb") as handle:
        return etree.fromstring(handle.read())
