"""Memory given back after large transfers and the cap on malloc arenas (repository/files/memory.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from repository.files import memory


def test_only_a_large_transfer_is_trimmed(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(memory, "_TRIM", calls.append)
    memory.after_transfer(memory.TRIM_AFTER - 1)
    assert calls == []
    memory.after_transfer(memory.TRIM_AFTER)
    assert calls == [0]


def test_the_arena_cap_is_set_unless_the_operator_set_one(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int]] = []

    def mallopt(parameter: int, value: int) -> int:
        calls.append((parameter, value))
        return 1

    monkeypatch.setattr(memory, "_libc_function", lambda name: mallopt if name == "mallopt" else None)
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert memory.limit_arenas() is True and calls == [(-8, memory.ARENAS)]
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert memory.limit_arenas() is False and len(calls) == 1
    monkeypatch.setattr(memory, "_libc_function", lambda name: lambda parameter, value: 0)  # glibc refuses it
    monkeypatch.delenv("MALLOC_ARENA_MAX")
    assert memory.limit_arenas() is False
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    monkeypatch.setattr(memory, "_libc_function", lambda name: None)  # no glibc (musl, macOS)
    monkeypatch.delenv("MALLOC_ARENA_MAX")
    assert memory.limit_arenas() is False


@pytest.mark.slow  # a subprocess
def test_glibc_takes_the_cap_in_the_servers_settings() -> None:
    """The gunicorn settings module sets it in the server process (its workers are forked from it), and glibc
    accepts it (mallopt answers 1)."""
    code = ("import os; os.environ.pop('MALLOC_ARENA_MAX', None); "
            "from repository.files import memory; seen = []; real = memory.limit_arenas; "
            "memory.limit_arenas = lambda: seen.append(real()) or seen[-1]; "
            "import repository.serving.gunicorn_conf; print(seen)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[True]"
