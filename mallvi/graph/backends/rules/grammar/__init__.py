"""The rules Decomposer's instruction grammar: clauses, words, orders and the checks of a parsed plan."""
