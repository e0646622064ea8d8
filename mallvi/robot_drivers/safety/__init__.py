"""The safety guard every motion passes, and the checks it is built from."""
