"""Licenses, funders, grants and communities: their endpoints, look-ups and loader."""
