"""Published records: built once (build), kept as given to the index (stored), cached, rendered per format, who may
read their files, view counts, take-down."""
