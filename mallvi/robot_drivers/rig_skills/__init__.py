"""The SkillAPI primitives on the real rig: guarded straight moves, plans, grasps, stand-ups."""
