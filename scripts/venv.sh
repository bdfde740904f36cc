#!/usr/bin/env bash
# Sourced by run.sh and test.sh from the project root: makes .venv if missing and installs the project into it
# (editable), with the extras named by the first argument ("" or "[test]"). PYTHON picks the interpreter.
if [ ! -x .venv/bin/python ]; then
  "${PYTHON:-python3.11}" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".${1:-}"
