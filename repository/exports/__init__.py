"""Full public exports: every public record's metadata as gzipped JSON Lines and as a DataCite XML bundle, with a
manifest, written whole or not at all (`writer`), read back by the API and the import (`folder`), on a schedule by
the background worker (`periodic`), and loaded into an empty instance (`dump`). docs/operators/export.md."""
