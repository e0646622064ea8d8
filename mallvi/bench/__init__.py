"""ST-BiBench through the mallvi graph: tasks, tiers, agents, runner and report."""
