"""The plan: a pure expansion of specs into an ordered list of trials."""
