"""Tools for the deal desk spec (offline_jobs.yaml).

Deals and activities are read from `deals.csv` and `activities.csv` in `DEAL_DATA_DIR` when it
is set, otherwise from the sample CRM export shipped in `deal_tools/data/`. Export the same
columns from your CRM to score real deals.
"""
