"""Controlled vocabularies: licenses, funders, grants and communities (database-backed), and the small lists
(resource types, relation and contributor types, languages, identifier kinds) that validation and the
serializers use.

Kept free of imports so that `repository.metadata` can use the small lists without import cycles.
"""
