"""The deep-agent harness on ADK: file tools over backends, and what builds on them."""
