"""IR: the frozen agent tree lowered from a checked spec, and the construction plan."""
