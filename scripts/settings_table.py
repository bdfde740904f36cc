#!/usr/bin/env python
"""Print the README's settings table, generated from the declarations in repository/config.py."""

from repository.config import settings_table

if __name__ == "__main__":
    print(settings_table())
