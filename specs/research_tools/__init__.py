"""Tools and callbacks for the research specs (research_desk, planner, deep_agent)."""
