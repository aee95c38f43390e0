"""What agentspec itself tells models: the deep harness's sections and the planner's roles.

Each text lives here, apart from the code that uses it, so a change to what models read is
one reviewable diff (and a change of the first-request snapshots).
"""
