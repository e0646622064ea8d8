"""The real rig assembled: its configuration, the Station, the table plane."""
