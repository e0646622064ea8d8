"""Motion pieces shared by the simulated and the real skills."""
