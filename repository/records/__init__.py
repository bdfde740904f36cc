"""Published records: read one (read: `read_record()`, the one path from a view), built once (build), kept as given
to the index (stored), cached, rendered per format, who may read their files, view and download counts, take-down."""
