"""Tools for the support desk spec (support_router.yaml).

The tools read their records from JSON files in a data directory: `SUPPORT_DATA_DIR` when set,
otherwise the sample data shipped in `support_tools/data/`. Point `SUPPORT_DATA_DIR` at an
export of your own billing, help-center and known-issue records to use real data. Refund
requests and tickets are appended as JSON lines to files in `SUPPORT_QUEUE_DIR` (default
`.support_queue/` in the working directory) for a person or a downstream system to process.
"""
